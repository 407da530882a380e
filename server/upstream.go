package server

import (
	"errors"
	"io"
	"time"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/server/config"
	"slipstream/server/upstream"
)

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
// whether the client's end-to-end headers are forwarded (same dialect).
func (x *exchange) buildUpstream(copyHeaders bool) {
	p := x.target.Provider
	r := &x.upReq
	r.Header.SetMethod(fasthttp.MethodPost)
	uri := r.URI()
	url := append(x.out[:0], p.BaseURL...)
	if p.Dialect == codec.DialectGemini {
		url = append(url, "/v1beta/models/"...)
		url = append(url, x.upModel...)
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
		if q := x.clientQuery(); copyHeaders && len(q) > 0 {
			url = append(url, '?')
			url = append(url, q...)
		}
	}
	uri.UpdateBytes(url)
	x.out = url[:0]
	if copyHeaders {
		upstream.CopyRequestHeaders(&r.Header, x.clientHeader())
	}
	r.Header.SetContentType("application/json")
	x.setCredential()
}

// setCredential puts the attempt's credential (see pickFirst), else the
// provider's next one, where its API wants it.
func (x *exchange) setCredential() {
	p := x.target.Provider
	h := &x.upReq.Header
	cred := x.try.cred
	if cred == nil {
		cred = p.Next()
	}
	if cred == nil {
		return
	}
	switch p.Kind {
	case config.KindAnthropic:
		h.Set("X-Api-Key", cred.Secret)
		if len(h.Peek("Anthropic-Version")) == 0 {
			h.Set("Anthropic-Version", "2023-06-01")
		}
	case config.KindGemini:
		h.Set("X-Goog-Api-Key", cred.Secret)
	default:
		h.Set("Authorization", "Bearer "+cred.Secret)
	}
}

// call sends x.upReq and waits for the response headers.
func (x *exchange) call() error {
	return x.s.clients[x.target.Provider].Do(&x.upReq, &x.upResp)
}

// callError maps a failed upstream call to the client's status and message:
// 504 for timeouts, 502 for everything else. The message names the
// provider, never its address or credential.
func (x *exchange) callError(err error) (int, string) {
	name := x.target.Provider.Name
	if upstream.IsTimeout(err) {
		return fasthttp.StatusGatewayTimeout, "upstream " + name + " timed out"
	}
	if errors.Is(err, fasthttp.ErrConnectionClosed) {
		return fasthttp.StatusBadGateway, "upstream " + name + " closed the connection before answering"
	}
	return fasthttp.StatusBadGateway, "upstream " + name + " is unreachable"
}

// isEventStream reports whether the upstream answered with SSE.
func (x *exchange) isEventStream() bool {
	ct := x.upResp.Header.ContentType()
	return len(ct) >= 17 && string(ct[:17]) == "text/event-stream"
}

// readUpstreamBody reads a whole upstream body into x.out, at most max
// bytes, and closes the body stream.
func (x *exchange) readUpstreamBody(max int) ([]byte, error) {
	r := x.upResp.BodyStream()
	buf := x.out[:0]
	var err error
	for r != nil {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		var n int
		n, err = r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil || len(buf) > max {
			break
		}
	}
	x.out = buf
	if err == io.EOF {
		err = nil
	}
	if err == nil && len(buf) > max {
		err = errUpstreamTooLarge
	}
	x.closeUpstream(err)
	if r == nil {
		return x.upResp.Body(), nil
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
