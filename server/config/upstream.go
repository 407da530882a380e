package config

import (
	"net/url"
	"strings"
)

// keysOptional reports whether p may run without credentials: an
// OpenAI-compatible server of the operator's own (Ollama, vLLM) needs no
// key, the vendor's public endpoint always does.
func (p *Provider) keysOptional() bool {
	return p.Kind == KindOpenAI && p.BaseURL != defaultBaseURLs[KindOpenAI]
}

// validateUpstream checks the fields that shape requests to the provider:
// headers and proxy. Messages never quote a header value (it may be a
// secret) or a proxy's user info.
func (p *Provider) validateUpstream(path string, add func(string, string, ...any)) {
	for name, v := range p.Headers {
		hp := path + ".headers." + name
		switch {
		case !isToken(name):
			add(hp, "not a valid header name")
		case strings.ContainsAny(v, "\r\n\x00"):
			add(hp, "the value must not contain CR, LF or NUL")
		case reservedHeader(name):
			add(hp, "%s is set by slipstream and cannot be configured", name)
		}
	}
	switch p.Proxy {
	case "", ProxyDirect:
		return
	}
	u, err := url.Parse(p.Proxy)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "socks5" && u.Scheme != "socks5h") {
		add(path+".proxy", "want %q, an http://host:port or a socks5://host:port URL", ProxyDirect)
	}
}

// reservedHeader reports the headers that describe the connection or the
// body, which slipstream computes per request.
func reservedHeader(name string) bool {
	for _, h := range [...]string{"Host", "Content-Length", "Transfer-Encoding", "Connection", "Content-Type", "Accept-Encoding", "Upgrade", "Te", "Trailer", "Keep-Alive", "Proxy-Connection"} {
		if strings.EqualFold(name, h) {
			return true
		}
	}
	return false
}

// isToken reports whether s is an HTTP field name (RFC 9110 section 5.1).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"(),/:;<=>?@[\\]{}", c) >= 0 {
			return false
		}
	}
	return true
}
