package server

import (
	"crypto/subtle"
	"io"
	"strconv"

	"github.com/valyala/fasthttp"

	"log"
	"slipstream/server/config"
	"slipstream/server/metrics"
	"slipstream/server/store"

	vm "github.com/VictoriaMetrics/metrics"
)

// serveMetrics answers GET /metrics in the Prometheus text format. With
// metrics.token set, a scrape must send it as a bearer token.
func (s *Server) serveMetrics(ctx *fasthttp.RequestCtx) {
	if tok := s.cfg.Metrics.Token; tok != "" {
		v := ctx.Request.Header.Peek("Authorization")
		if len(v) <= len(bearer) || subtle.ConstantTimeCompare(v[len(bearer):], []byte(tok)) != 1 {
			ctx.SetStatusCode(fasthttp.StatusUnauthorized)
			ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="metrics"`)
			ctx.SetBodyString("metrics need the bearer token set in metrics.token\n")
			return
		}
	}
	ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
	s.metrics.WritePrometheus(ctx)
}

// registerGauges adds the gauges read at each scrape: requests and bytes
// in flight, and the current configuration's pools.
func (sh *shared) registerGauges() {
	m := sh.metrics
	m.Gauge("slipstream_requests_in_flight", func() float64 { return float64(sh.inflight.Load()) })
	m.Gauge("slipstream_request_bytes_in_flight", func() float64 { return float64(sh.bytesInFlight.Load()) })
	m.Gauge("slipstream_panics_recovered", func() float64 { return float64(sh.panics.Load()) })
	m.Writer(func(w io.Writer) {
		cur := sh.current.Load()
		for _, p := range cur.reg.Providers() {
			vm.WriteGaugeUint64(w, `slipstream_provider_credentials{provider=`+strconv.Quote(p.Name)+`}`, uint64(len(p.Config.Keys)))
		}
		vm.WriteGaugeUint64(w, "slipstream_websocket_connections", uint64(cur.ws.Conns()))
		vm.WriteGaugeUint64(w, "slipstream_websocket_state_bytes", uint64(cur.ws.StateBytes()))
	})
}

// newStore builds the process's shared-state store: Redis-backed when cfg
// names Redis, in-process otherwise.
func newStore(cfg *config.Config, lg *log.Logger, m *metrics.Metrics) (*store.Store, error) {
	if cfg.Redis.URL == "" {
		return store.New(), nil
	}
	return store.Open(store.Options{URL: cfg.Redis.URL, Prefix: cfg.Redis.Prefix, Log: lg, OnError: m.RedisError})
}
