package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/codec/sse"
	"slipstream/pool"
	"slipstream/server/config"
	"slipstream/server/metrics"
	"slipstream/server/price"
	"slipstream/server/upstream"
)

// requestIDHeader carries the request id back to the client, so a client
// report can be matched with its access-log line. It is slipstream's own
// header: upstreams send their own x-request-id, which is passed through.
const requestIDHeader = "X-Slipstream-Request-Id"

var requestIDHeaderBytes = []byte(requestIDHeader) // canonical already

// requestID is a request's id: 8 hex digits drawn once per process, a
// dash, and 11 hex digits of a counter. Unique within a fleet in practice,
// and costs an atomic add.
type requestID [20]byte

// idSource hands out request ids.
type idSource struct {
	prefix [8]byte
	n      atomic.Uint64
}

func (s *idSource) init() {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	hex.Encode(s.prefix[:], b[:])
}

func (s *idSource) next() (id requestID) {
	const digits = "0123456789abcdef"
	copy(id[:], s.prefix[:])
	id[8] = '-'
	n := s.n.Add(1)
	for i := len(id) - 1; i > 8; i-- {
		id[i] = digits[n&15]
		n >>= 4
	}
	return id
}

// newAccessLog returns the access logger cfg asks for, or nil when the
// access log is off. Its handler quotes every value a client chose (model
// names, paths), so none can forge a line.
func newAccessLog(cfg *config.Config, w io.Writer) *slog.Logger {
	if !cfg.Log.Access {
		return nil
	}
	o := &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.MessageKey && a.Value.String() == "" {
			return slog.Attr{} // the line is its attributes
		}
		return a
	}}
	if cfg.Log.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, o))
	}
	return slog.New(slog.NewTextHandler(w, o))
}

// begin starts the request's record: its id, sent back as a header, and
// its start time.
func (s *Server) begin(ctx *fasthttp.RequestCtx) (requestID, time.Time) {
	id := s.ids.next()
	ctx.Response.Header.SetCanonical(requestIDHeaderBytes, id[:])
	return id, time.Now()
}

// firstToken notes when the first event that is not a keep-alive ping
// goes to the client (time to first token).
func (x *exchange) firstToken(b []byte) {
	if x.ttft.IsZero() && string(b) != sse.Ping {
		x.ttft = time.Now()
	}
}

// record writes the request's metrics and access-log line. It runs in
// release, after settleUsage, and reads nothing from a recycled ctx: x.ctx
// is set only when the handler itself releases x.
func (x *exchange) record() {
	s := x.s
	r := metrics.Request{
		RequestLabels: metrics.RequestLabels{Route: x.rt.label(), Dialect: x.rt.dialect.String(), Status: x.status},
		Latency:       time.Since(x.start),
		BytesIn:       x.size,
		BytesOut:      x.bytesOut,
		Usage:         x.usage,
	}
	if !x.ttft.IsZero() && x.stream {
		r.TTFT = x.ttft.Sub(x.start)
	}
	if x.ctx != nil {
		r.BytesOut += int64(len(x.ctx.Response.Body()))
	}
	if p := x.target.Provider; p != nil {
		r.Provider = p.Name
	}
	if x.key != nil {
		r.Key = x.key.Name
	}
	r.Model = s.labels.Label(pool.B2S(x.model))
	s.metrics.Observe(&r)
	var c price.Cost
	if x.billable() {
		c = x.cost()
		s.metrics.Cost(&metrics.CostLabels{Provider: r.Provider, Model: s.labels.Label(pool.B2S(x.upModel)), Key: r.Key},
			c.Pico, c.Priced(), c.Kind == price.APIEquivalent)
	}
	x.toLedger(&r, c)
	x.recordAccount()
	if x.key != nil && x.usage.Known && s.store.Shared() {
		u := &x.usage
		s.store.Usage(x.key.Name).Add([5]int64{u.Input, u.Output, u.CacheRead, u.CacheWrite, u.Reasoning})
	}
	if s.access != nil {
		x.logAccess(&r, c)
	}
}

// logAccess writes the access-log line of r, whose cost is c (cost.go).
// Names, never secrets: the key and credential are named by their
// configured names.
func (x *exchange) logAccess(r *metrics.Request, c price.Cost) {
	cred, cause := "", ""
	if x.try.cred != nil {
		cred = x.try.cred.Name // the configured name, never the secret
	}
	if err := x.failure(); err != nil {
		cause = causeOf(err)
	}
	u := &x.usage
	usd := pool.Get(32)
	defer pool.Put(usd)
	var kind string
	usd.B, kind = x.appendCost(usd.B[:0], c)
	x.s.access.LogAttrs(context.Background(), slog.LevelInfo, "",
		slog.String("id", pool.B2S(x.id[:])),
		slog.String("key", r.Key),
		slog.String("route", r.Route),
		slog.String("dialect", r.Dialect),
		slog.String("provider", r.Provider),
		slog.String("credential", cred),
		slog.String("model", pool.B2S(x.model)),
		slog.String("upstream_model", pool.B2S(x.upModel)),
		slog.Bool("stream", x.stream),
		slog.Int("status", x.status),
		slog.String("result", x.result.String()),
		slog.Int64("input_tokens", u.Input),
		slog.Int64("output_tokens", u.Output),
		slog.Int64("cache_read_tokens", u.CacheRead),
		slog.Int64("cache_write_tokens", u.CacheWrite),
		slog.Int64("reasoning_tokens", u.Reasoning),
		slog.Bool("estimated", u.Estimated),
		slog.String("cost_usd", pool.B2S(usd.B)),
		slog.String("cost_kind", kind),
		slog.Float64("latency_ms", ms(r.Latency)),
		slog.Float64("ttft_ms", ms(r.TTFT)),
		slog.Int64("bytes_in", r.BytesIn),
		slog.Int64("bytes_out", r.BytesOut),
		slog.Int("attempts", x.try.attempts),
		slog.String("cause", cause),
		slog.String("upstream_request_id", pool.B2S(x.upstreamRequestID())),
		slog.String("guardrails", pool.B2S(x.guard.rules)),
	)
}

// upstreamRequestID is the id the provider gave the last upstream
// response (Anthropic's request-id, OpenAI's x-request-id), for matching a
// line with the provider's own logs; a view into x.upResp, valid until
// release resets it.
func (x *exchange) upstreamRequestID() []byte {
	if v := x.upResp.Header.Peek("Request-Id"); len(v) > 0 {
		return clip(v, 128)
	}
	return clip(x.upResp.Header.Peek("X-Request-Id"), 128)
}

func clip(b []byte, n int) []byte { return b[:min(len(b), n)] }

// failure is why the upstream failed this request, or nil: the failed
// call, else the error that ended its body early (not the client leaving).
func (x *exchange) failure() error {
	if x.callErr != nil {
		return x.callErr
	}
	if x.upErr != nil && x.upErr != errClientGone {
		return x.upErr
	}
	return nil
}

// causeOf names the class of an upstream failure for the log: the
// classes of upstream.Classify (dns, refused, tls, timeout, ...), or panic.
func causeOf(err error) string {
	if err == errPanic {
		return "panic"
	}
	if err == errCancelled {
		return "cancelled"
	}
	return upstream.Classify(err).String()
}

// answered records a request answered without an exchange (no
// route, no key, admission), whose status is already set on ctx.
func (s *Server) answered(ctx *fasthttp.RequestCtx, rt *route, d codec.Dialect, key *clientKey, id requestID, start time.Time) {
	r := metrics.Request{
		RequestLabels: metrics.RequestLabels{Route: rt.label(), Dialect: d.String(), Status: ctx.Response.StatusCode()},
		Latency:       time.Since(start),
		BytesOut:      int64(len(ctx.Response.Body())),
	}
	if key != nil {
		r.Key = key.Name
	}
	s.metrics.Observe(&r)
	if s.access == nil {
		return
	}
	s.access.LogAttrs(context.Background(), slog.LevelInfo, "",
		slog.String("id", pool.B2S(id[:])),
		slog.String("key", r.Key),
		slog.String("route", r.Route),
		slog.String("method", pool.B2S(ctx.Method())),
		slog.String("path", clipString(ctx.Path())),
		slog.String("dialect", r.Dialect),
		slog.Int("status", r.Status),
		slog.Float64("latency_ms", ms(r.Latency)),
		slog.Int64("bytes_out", r.BytesOut),
	)
}

// label is the route's name in metrics and logs: its path, with the model
// of a Gemini path as a placeholder; "other" for no route.
func (rt *route) label() string {
	switch {
	case rt == nil:
		return "other"
	case rt.path != "":
		return rt.path
	case rt.op == opCountTokens:
		return "/v1beta/models/{model}:countTokens"
	}
	return "/v1beta/models/{model}:generateContent"
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
