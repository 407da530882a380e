package upstream

import (
	"bytes"
	"strings"

	"github.com/valyala/fasthttp"
)

// hopByHop are the headers that describe one connection, not the message
// (RFC 9110 section 7.6.1), plus those fasthttp or slipstream set itself.
var hopByHop = [...]string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
	"Host", "Content-Length",
}

// clientAuth are the headers that carry the client's key to slipstream
// (Api-Key is the Azure SDKs'); the provider's credential replaces them.
var clientAuth = [...]string{"Authorization", "X-Api-Key", "X-Goog-Api-Key", "Api-Key"}

// The client headers each upstream API defines, forwarded on the same
// dialect: a name, or a family ending in "*". Everything else a client
// sends (cookies, Origin, Referer, X-Forwarded-*, a proxy's or a
// browser's headers) stays with slipstream. The operator adds names with
// forward_headers.
var (
	// CommonHeaders go to every upstream: the client's identity and the
	// Stainless SDKs' (Anthropic's and OpenAI's) platform and retry
	// headers.
	CommonHeaders = []string{"User-Agent", "X-Stainless-*"}
	// AnthropicHeaders: the API's version and beta flags
	// (anthropic-version, anthropic-beta, ...) and Claude Code's.
	AnthropicHeaders = []string{"Anthropic-*", "X-App", "X-Claude-Code-Session-Id"}
	// OpenAIHeaders (Chat Completions and Responses): OpenAI-Organization,
	// OpenAI-Project, OpenAI-Beta, the client request id, and Codex's
	// session and turn headers (the ChatGPT backend reads them).
	OpenAIHeaders = []string{"OpenAI-*", "X-OpenAI-*", "X-Client-Request-Id", "X-Codex-*", "Originator", "Session_id", "Session-Id", "Conversation_id", "Version"}
	// GeminiHeaders: x-goog-api-client, x-goog-user-project, ... (never
	// x-goog-api-key, a client credential).
	GeminiHeaders = []string{"X-Goog-*"}
)

// ForwardList is the set of client headers one dialect forwards. Build it
// once per configuration with NewForwardList; Allows allocates nothing.
type ForwardList struct {
	names    []string
	prefixes []string
}

// NewForwardList builds a list from name lists; a name ending in "*"
// takes every header that starts with the rest.
func NewForwardList(lists ...[]string) *ForwardList {
	l := &ForwardList{}
	for _, names := range lists {
		for _, n := range names {
			if p, ok := strings.CutSuffix(n, "*"); ok {
				l.prefixes = append(l.prefixes, p)
				continue
			}
			l.names = append(l.names, n)
		}
	}
	return l
}

// Allows reports whether header k is on the list, in any case.
func (l *ForwardList) Allows(k []byte) bool {
	for _, n := range l.names {
		if equalFold(k, n) {
			return true
		}
	}
	for _, p := range l.prefixes {
		if len(k) > len(p) && equalFold(k[:len(p)], p) {
			return true
		}
	}
	return false
}

// CopyRequestHeaders copies the client's headers that allow lists to the
// upstream request, except hop-by-hop headers, those named in Connection,
// the client's credentials and Accept-Encoding (slipstream reads upstream
// streams, so it asks for identity: SetIdentity), whatever the list says.
func CopyRequestHeaders(dst *fasthttp.RequestHeader, src *fasthttp.RequestHeader, allow *ForwardList) {
	conn := src.Peek("Connection")
	for k, v := range src.All() {
		if !allow.Allows(k) || isHopByHop(k) || isClientAuth(k) || isNamedIn(conn, k) || equalFold(k, "Accept-Encoding") {
			continue
		}
		dst.AddBytesKV(k, v)
	}
}

// CopyResponseHeaders copies an upstream response's end-to-end headers to
// the client's response (request ids, rate-limit headers, retry-after),
// every value of a repeated header (Set-Cookie, Vary). Content-Type and
// Content-Encoding are copied too: the body is passed on as it came, so
// its encoding goes with it. Content-Length is left to fasthttp.
//
// The credential headers (clientAuth) stay behind: an upstream, or a
// debugging proxy in front of it, that echoes them would hand the
// provider's key to the client.
//
// An event stream is the exception: slipstream frames it, decoded, so its
// Content-Encoding stays behind (NewDecoder). The upstream's CORS headers
// (Access-Control-*) stay behind too: slipstream answers browsers with its
// own (cors.allowed_origins), and a second Access-Control-Allow-Origin
// would make a browser refuse the answer.
func CopyResponseHeaders(dst *fasthttp.ResponseHeader, src *fasthttp.ResponseHeader) {
	conn := src.Peek("Connection")
	sse := bytes.HasPrefix(src.ContentType(), []byte("text/event-stream"))
	for k, v := range src.All() {
		if isHopByHop(k) || isNamedIn(conn, k) || equalFold(k, "Date") || equalFold(k, "Server") || isCORS(k) || isClientAuth(k) {
			continue
		}
		if sse && equalFold(k, "Content-Encoding") {
			continue
		}
		dst.AddBytesKV(k, v)
	}
}

func isHopByHop(k []byte) bool {
	for _, h := range hopByHop {
		if equalFold(k, h) {
			return true
		}
	}
	return false
}

func isCORS(k []byte) bool {
	const p = "Access-Control-"
	return len(k) > len(p) && equalFold(k[:len(p)], p)
}

func isClientAuth(k []byte) bool {
	for _, h := range clientAuth {
		if equalFold(k, h) {
			return true
		}
	}
	return false
}

// isNamedIn reports whether header k is listed in a Connection value.
func isNamedIn(conn, k []byte) bool {
	for len(conn) > 0 {
		var tok []byte
		tok, conn, _ = bytes.Cut(conn, []byte{','})
		if bytes.EqualFold(bytes.TrimSpace(tok), k) {
			return true
		}
	}
	return false
}

func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		x, y := b[i]|0x20, s[i]|0x20
		if x != y {
			return false
		}
	}
	return true
}

// SetIdentity asks the upstream for an unencoded body: slipstream frames
// streams and translates bodies, which it cannot do over compressed bytes.
// (Without the header an upstream may pick any encoding, RFC 9110 section
// 12.5.3.)
func SetIdentity(h *fasthttp.RequestHeader) { h.Set("Accept-Encoding", "identity") }
