package config

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Defaults, documented on the fields they fill.
const (
	DefaultListen        = "127.0.0.1:8317"
	DefaultMaxBodyBytes  = 64 << 20
	DefaultMaxConcurrent = 4096
	DefaultMockReply     = "Hello from the slipstream mock provider."
	DefaultMockChunks    = 4
	DefaultGCPercent     = 10
)

var defaultBaseURLs = map[string]string{
	KindAnthropic: "https://api.anthropic.com",
	KindOpenAI:    "https://api.openai.com/v1",
	KindGemini:    "https://generativelanguage.googleapis.com",
}

func (c *Config) applyDefaults() {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.Limits.MaxBodyBytes == 0 {
		c.Limits.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.Limits.MaxConcurrent == 0 {
		c.Limits.MaxConcurrent = DefaultMaxConcurrent
	}
	if c.Limits.GCPercent == 0 {
		c.Limits.GCPercent = DefaultGCPercent
	}
	c.Timeouts.applyDefaults()
	for i := range c.Keys {
		if len(c.Keys[i].Models) == 0 {
			c.Keys[i].Models = []string{"*"}
		}
	}
	for i := range c.Providers {
		c.Providers[i].applyDefaults()
	}
}

func (t *Timeouts) applyDefaults() {
	def := func(d *Duration, v Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&t.Connect, Duration(10e9))
	def(&t.FirstByte, Duration(600e9))
	def(&t.Idle, Duration(300e9))
	def(&t.Shutdown, Duration(30e9))
}

func (p *Provider) applyDefaults() {
	if p.BaseURL == "" {
		p.BaseURL = defaultBaseURLs[p.Kind]
	}
	p.BaseURL = strings.TrimRight(p.BaseURL, "/")
	if p.Kind == KindOpenAI && p.API == "" {
		p.API = APIChat
	}
	if p.CountTokens == "" {
		p.CountTokens = "local"
	}
	if p.Kind == KindMock {
		if p.Reply == "" {
			p.Reply = DefaultMockReply
		}
		if p.Chunks <= 0 {
			p.Chunks = DefaultMockChunks
		}
	}
}

// Validate returns every problem with c (lines not yet filled in).
func (c *Config) Validate() Problems {
	var ps Problems
	add := func(path, format string, args ...any) {
		ps = append(ps, Problem{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		add("listen", "want host:port, got %q", c.Listen)
	} else if len(c.Keys) == 0 && !IsLoopback(c.Listen) {
		add("keys", "no client keys: refusing to serve %s without authentication (listen on a loopback address or add keys)", c.Listen)
	}
	c.validateKeys(add)
	c.validateProviders(add)
	c.validateAliases(add)
	if c.Limits.MaxBodyBytes < 0 || c.Limits.MaxConcurrent < 0 || c.Limits.MaxBytesInFlight < 0 || c.Limits.GCPercent < 0 {
		add("limits", "limits must not be negative")
	}
	return ps
}

func (c *Config) validateKeys(add func(string, string, ...any)) {
	seen := map[string]bool{}
	for i, k := range c.Keys {
		path := fmt.Sprintf("keys[%d]", i)
		if k.Key == "" {
			add(path+".key", "empty key")
		}
		if seen[k.Key] && k.Key != "" {
			add(path+".key", "the same key is listed twice (key %q)", k.Name)
		}
		seen[k.Key] = true
	}
}

func (c *Config) validateProviders(add func(string, string, ...any)) {
	if len(c.Providers) == 0 {
		add("providers", "no providers")
	}
	names := map[string]bool{}
	for i := range c.Providers {
		p := &c.Providers[i]
		path := fmt.Sprintf("providers[%d]", i)
		if p.Name == "" {
			add(path+".name", "missing name")
		} else if names[p.Name] {
			add(path+".name", "duplicate provider name %q", p.Name)
		}
		names[p.Name] = true
		p.validate(path, add)
	}
}

func (p *Provider) validate(path string, add func(string, string, ...any)) {
	switch p.Kind {
	case KindAnthropic, KindOpenAI, KindGemini:
		if len(p.Keys) == 0 {
			add(path+".keys", "a %s provider needs at least one key", p.Kind)
		}
		for j, k := range p.Keys {
			if k == "" {
				add(fmt.Sprintf("%s.keys[%d]", path, j), "empty key")
			}
		}
		if u, err := url.Parse(p.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add(path+".base_url", "want an http(s) URL, got %q", p.BaseURL)
		}
	case KindMock:
	case "":
		add(path+".kind", "missing kind (anthropic, openai, gemini or mock)")
	default:
		add(path+".kind", "unknown kind %q (want anthropic, openai, gemini or mock)", p.Kind)
	}
	if p.Kind == KindOpenAI && p.API != APIChat && p.API != APIResponses {
		add(path+".api", "unknown api %q (want chat or responses)", p.API)
	}
	if p.Kind != KindOpenAI && p.API != "" {
		add(path+".api", "api applies to kind openai only")
	}
	if p.Kind == KindMock && p.ListModels {
		add(path+".list_models", "the mock has no upstream to list models from")
	}
	if len(p.Models) == 0 {
		add(path+".models", "no model patterns (use [\"*\"] to serve every model)")
	}
	switch p.CountTokens {
	case "local":
	case "upstream":
		if p.Kind != KindAnthropic && p.Kind != KindGemini {
			add(path+".count_tokens", "upstream counting needs kind anthropic or gemini")
		}
	default:
		add(path+".count_tokens", "want local or upstream, got %q", p.CountTokens)
	}
}

func (c *Config) validateAliases(add func(string, string, ...any)) {
	for name, target := range c.Aliases {
		prov, model, ok := strings.Cut(target, "/")
		if !ok || prov == "" || model == "" {
			add("aliases."+name, "want provider/model, got %q", target)
			continue
		}
		if c.Provider(prov) == nil {
			add("aliases."+name, "no provider named %q", prov)
		}
		if strings.ContainsAny(model, "*?") {
			add("aliases."+name, "the target model %q is a pattern; name one model", model)
		}
	}
}

// Provider returns the provider with the given name, or nil.
func (c *Config) Provider(name string) *Provider {
	for i := range c.Providers {
		if c.Providers[i].Name == name {
			return &c.Providers[i]
		}
	}
	return nil
}

// IsLoopback reports whether a listen address is on the loopback interface.
func IsLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
