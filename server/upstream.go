package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/pool"
	"slipstream/server/config"
	"slipstream/server/provider"
	"slipstream/server/upstream"
)

// newUpstreamClient builds the client for provider p from the timeouts,
// limits and the provider's proxy and headers.
func newUpstreamClient(cfg *config.Config, p *provider.Provider) (*upstream.Client, error) {
	c, err := upstream.New(upstream.Options{
		BaseURL:   p.BaseURL,
		Connect:   cfg.Timeouts.Connect.D(),
		FirstByte: cfg.Timeouts.FirstByte.D(),
		Idle:      cfg.Timeouts.Idle.D(),
		IdleConn:  cfg.Timeouts.UpstreamIdleConn.D(),
		MaxConns:  cfg.Limits.UpstreamConns,
		Proxy:     p.Config.Proxy,
		Headers:   p.Config.Headers,
	})
	if err != nil {
		return nil, fmt.Errorf("cannot set up provider %s: %w", p.Name, err)
	}
	return c, nil
}

// upstreamPath returns the request path for an upstream of dialect d.
func upstreamPath(d codec.Dialect) string {
	switch d {
	case codec.DialectAnthropic:
		return "/v1/messages"
	case codec.DialectResponses:
		return "/responses"
	case codec.DialectChat:
		return "/chat/completions"
	}
	return ""
}

// buildUpstream fills x.upReq's method, URL, headers and credential for
// the target provider. The body is set by the caller. copyHeaders says
// whether the client's headers on the dialect's forward list are
// forwarded (same dialect; see forward.go); a translated request forwards
// none and names slipstream and the client in its User-Agent
// (upstream.AppendUserAgent). The provider's own headers come last.
//
// No client byte reaches the URL unescaped: the path is fixed but for a
// Gemini model, which is path-escaped, and only the query parameters the
// upstream API defines are forwarded, re-escaped (a client's ?key= never
// is).
func (x *exchange) buildUpstream(copyHeaders bool) {
	p := x.target.Provider
	r := &x.upReq
	r.Header.SetMethod(fasthttp.MethodPost)
	uri := r.URI()
	url := append(x.urlBuf[:0], p.BaseURL...)
	if p.Dialect == codec.DialectGemini {
		url = append(url, "/v1beta/models/"...)
		url = upstream.AppendPathSegment(url, x.upModel)
		if x.counting {
			url = append(url, ":countTokens"...)
		} else if x.stream {
			url = append(url, ":streamGenerateContent?alt=sse"...)
		} else {
			url = append(url, ":generateContent"...)
		}
	} else {
		url = append(url, upstreamPath(p.Dialect)...)
		if x.counting {
			url = append(url, "/count_tokens"...) // Anthropic: /v1/messages/count_tokens
		}
		if copyHeaders {
			url = append(url, x.client().query...) // the client dialect's parameters: p speaks it
		}
	}
	uri.UpdateBytes(url)
	x.urlBuf = url[:0]
	if copyHeaders {
		x.client().appendHeaders(&r.Header) // the client dialect's forward list: p speaks it
	} else {
		ua := upstream.AppendUserAgent(x.urlBuf[:0], x.s.version, x.client().ua)
		r.Header.SetUserAgentBytes(ua)
		x.urlBuf = ua[:0]
	}
	r.Header.SetContentType("application/json")
	upstream.SetIdentity(&r.Header)
	x.s.clients[p].SetHeaders(&r.Header)
	x.setCredential()
}

// appendForwardedQuery appends the parameters of the client's raw query
// q that the upstream API of dialect d defines, re-escaped. Anthropic's
// Messages API takes beta=true (Claude Code sends it); the OpenAI and
// Gemini APIs take none on these routes (Gemini's alt=sse is slipstream's
// own). Anything else, a credential (?key=) above all, is dropped.
func appendForwardedQuery(dst, q []byte, d codec.Dialect) []byte {
	if d != codec.DialectAnthropic {
		return dst
	}
	sep := byte('?')
	for len(q) > 0 {
		var pair []byte
		pair, q, _ = bytes.Cut(q, []byte{'&'})
		k, v, _ := bytes.Cut(pair, []byte{'='})
		if string(k) != "beta" {
			continue
		}
		var scratch [64]byte
		val, ok := unescapeQuery(scratch[:0], v)
		if !ok {
			continue
		}
		dst = append(dst, sep)
		sep = '&'
		dst = append(dst, "beta="...)
		dst = fasthttp.AppendQuotedArg(dst, val)
	}
	return dst
}

// unescapeQuery appends the query-decoded v to dst ('+' is a space, %XX a
// byte); false for a malformed escape or a value longer than dst's
// capacity (the values forwarded are short flags).
func unescapeQuery(dst, v []byte) ([]byte, bool) {
	for i := 0; i < len(v); i++ {
		if len(dst) == cap(dst) {
			return dst, false
		}
		c := v[i]
		switch c {
		case '+':
			c = ' '
		case '%':
			if i+2 >= len(v) || unhex(v[i+1]) < 0 || unhex(v[i+2]) < 0 {
				return dst, false
			}
			c = byte(unhex(v[i+1])<<4 | unhex(v[i+2]))
			i += 2
		}
		dst = append(dst, c)
	}
	return dst, true
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return int(c - 'A' + 10)
	}
	return -1
}

// checkPathModel answers 400 and returns false when the model of a
// Gemini path cannot be a segment of the upstream URL (upstream.
// ValidPathSegment). The name is not echoed: it may hold control bytes.
func (x *exchange) checkPathModel() bool {
	if upstream.ValidPathSegment(x.geminiModel) {
		return true
	}
	x.s.writeError(x.ctx, x.rt.dialect, fasthttp.StatusBadRequest, "invalid model name in the path: "+msgSegment)
	return false
}

// checkUpModel refuses, with 400, a request whose model would reach a
// Gemini provider's URL (the target's) as a path segment it cannot be.
// A model named in a body is checked only here, and x.upModel is escaped
// JSON content: a name JSON escapes (invalid UTF-8, U+2028, a quote)
// holds a backslash, which no Gemini model name has. Failover skips such
// alternatives itself (failover.Plan).
func (x *exchange) checkUpModel() bool {
	if x.target.Provider.Dialect != codec.DialectGemini || upstream.ValidPathSegment(x.upModel) {
		return true
	}
	x.s.writeError(x.ctx, x.rt.dialect, fasthttp.StatusBadRequest, "invalid model name for a Gemini provider: "+msgSegment)
	return false
}

// msgSegment says what a model name that is a URL path segment must not
// hold (upstream.ValidPathSegment).
const msgSegment = "it must not contain control characters, spaces, / ? # % \\ \" or .., nor characters JSON escapes"

// setCredential puts the attempt's credential (see pickFirst), else the
// provider's next one, where its API wants it. A provider
// without keys (a local OpenAI-compatible server) gets no credential
// header at all.
func (x *exchange) setCredential() {
	p := x.target.Provider
	cred := x.try.cred
	if cred == nil { // a forwarded count: one attempt, on a credential that is not resting if any
		if cred, _ = p.Pick(provider.Hash(x.upModel), 0, 0, x.s.now().UnixNano()); cred == nil {
			cred = p.Next()
		}
	}
	b, c := x.backend()
	b.Sign(c, cred)
}

// call sends x.upReq and waits for the response headers. A request that
// failed on a pooled connection before any response byte (the upstream
// had closed it while idle) is sent once more on a fresh connection; an
// event stream in an encoding slipstream cannot decode is refused
// (upstream.ErrEncodedStream).
func (x *exchange) call() error {
	c := x.s.clients[x.target.Provider]
	err := c.Do(&x.upReq, &x.upResp)
	if upstream.Stale(&x.upResp, err) {
		x.rewindBody()
		err = c.DoFresh(&x.upReq, &x.upResp)
	}
	if err == nil && upstream.IsEncoded(&x.upResp) && x.isEventStream() && !upstream.CanDecode(x.upResp.Header.ContentEncoding()) {
		err = upstream.ErrEncodedStream
		x.closeUpstream(err)
	}
	return err
}

// rewindBody restores a body stream the failed attempt consumed: the
// aliased same-dialect body is a splice read once.
func (x *exchange) rewindBody() { x.rewindUpBody() }

// callError maps a failed upstream call to the client's status and message
// and logs it: 504 for timeouts, 503 for a full connection pool, 502
// otherwise. Both name the provider and the cause class, never its
// address or credential.
func (x *exchange) callError(err error) (int, string) {
	if x.cancelled() {
		return x.cancelledCall()
	}
	x.callErr = err
	name := x.target.Provider.Name
	cause := upstream.Classify(err)
	x.s.log.Printf("upstream error: provider=%s cause=%s status=%d error=%q", name, cause, cause.Status(), clipError(err))
	return cause.Status(), "provider " + name + " " + cause.Text()
}

// clipError is an error's text, clipped. Upstream errors name hosts and
// stages, never a credential (the dialer keeps proxy user info out).
func clipError(err error) string {
	s := err.Error()
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// credentialRejected reports whether the upstream answered 401 or 403:
// it refused the provider credential slipstream sent, which the client
// must not mistake for a refusal of its own key.
func (x *exchange) credentialRejected() bool {
	s := x.upResp.StatusCode()
	return s == fasthttp.StatusUnauthorized || s == fasthttp.StatusForbidden
}

// credentialMessage is the client's error text for credentialRejected.
// The upstream's own message is not passed on: providers quote part of
// the key they refused.
func (x *exchange) credentialMessage() string {
	return "provider " + x.target.Provider.Name + " rejected its credential (upstream status " + strconv.Itoa(x.upResp.StatusCode()) + ")"
}

// writeCredentialRejected answers a credentialRejected upstream response
// in the client's dialect, status kept, and logs it. It reads and closes
// the upstream body; the caller releases x.
func (x *exchange) writeCredentialRejected() {
	status := x.upResp.StatusCode()
	_, _ = x.readUpstreamBody(64 << 10) // only to keep the connection; the text is not used
	x.s.log.Printf("upstream error: provider=%s cause=credential status=%d", x.target.Provider.Name, status)
	x.s.writeError(x.ctx, x.rt.dialect, status, x.credentialMessage())
}

// rewordCredentialError rewrites a decoded upstream error that is a
// credential rejection (translated and in-band paths), and logs it.
func (x *exchange) rewordCredentialError(e *codec.Error) {
	if e.Status != fasthttp.StatusUnauthorized && e.Status != fasthttp.StatusForbidden {
		return
	}
	x.s.log.Printf("upstream error: provider=%s cause=credential status=%d", x.target.Provider.Name, e.Status)
	e.Kind = codec.KindForStatus(e.Status)
	e.Message = codec.AppendEscaped(nil, []byte(x.credentialMessage()))
}

// upstreamEvents is the upstream body to frame events from: the body
// stream, decoded when the upstream compressed its event stream although
// asked not to (call returned ErrEncodedStream for what cannot be
// decoded). It runs in the stream writer: the decoder reads ahead.
func (x *exchange) upstreamEvents() io.Reader {
	r := x.upStream()
	if r == nil || !upstream.IsEncoded(&x.upResp) {
		return r
	}
	d, err := upstream.NewDecoder(r, x.upResp.Header.ContentEncoding())
	if err != nil {
		return failedReader{err}
	}
	return d
}

// failedReader is a stream that fails with err at once.
type failedReader struct{ err error }

func (f failedReader) Read([]byte) (int, error) { return 0, f.err }

// isEventStream reports whether the upstream answered with SSE.
func (x *exchange) isEventStream() bool {
	ct := x.upResp.Header.ContentType()
	return len(ct) >= 17 && string(ct[:17]) == "text/event-stream"
}

// readUpstreamBody reads a whole upstream body into x.upRead, at most max
// bytes, decodes it when the upstream compressed it although asked not
// to, and closes the body stream.
func (x *exchange) readUpstreamBody(max int) ([]byte, error) {
	r := x.upResp.BodyStream()
	buf := x.upRead[:0]
	var err error
	if r != nil {
		buf, err = pool.AppendCapped(buf, r, max)
	}
	x.upRead = buf
	if err == pool.ErrOverCap {
		err = errUpstreamTooLarge
	}
	x.closeUpstream(err)
	if r == nil {
		buf = x.upResp.Body()
	}
	if err == nil && upstream.IsEncoded(&x.upResp) {
		return upstream.AppendDecoded(nil, buf, x.upResp.Header.ContentEncoding(), max)
	}
	return buf, err
}

var errUpstreamTooLarge = errors.New("upstream response body too large")

// closeUpstream closes the upstream body stream. A non-nil err (the body
// was not read to its end) drops the connection instead of pooling it.
func (x *exchange) closeUpstream(err error) {
	bs := x.upResp.BodyStream()
	if bs == nil {
		return
	}
	if c, ok := bs.(fasthttp.ReadCloserWithError); ok {
		_ = c.CloseWithError(err) // it always returns nil
		return
	}
	_ = x.upResp.CloseBodyStream()
}

// keepalive is the interval of SSE comments before the first upstream
// byte, or 0.
func (s *Server) keepalive() time.Duration { return s.cfg.Timeouts.KeepaliveInterval() }
