package server

import (
	"bytes"
	"crypto/subtle"
	"io"
	"log"
	"net"
	"strconv"

	vm "github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"

	"slipstream/server/config"
	"slipstream/server/metrics"
	"slipstream/server/store"
)

// serveMetrics answers GET /metrics in the Prometheus text format. It
// shows every key's name and usage, so when client keys are configured a
// scrape must present one of them or metrics.token (as a bearer token);
// with metrics.token set and no keys, the token. With neither the page is
// open, as the loopback default is.
func (s *Server) serveMetrics(ctx *fasthttp.RequestCtx) {
	if !s.metricsAllowed(ctx) {
		ctx.SetStatusCode(fasthttp.StatusUnauthorized)
		ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="metrics"`)
		ctx.SetBodyString("metrics need the bearer token set in metrics.token, or a client key\n")
		return
	}
	ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
	s.metrics.WritePrometheus(ctx)
}

// metricsAllowed reports whether a scrape may read /metrics.
func (s *Server) metricsAllowed(ctx *fasthttp.RequestCtx) bool {
	tok := s.cfg.Metrics.Token
	if tok == "" && s.keys.Len() == 0 {
		return true
	}
	if tok != "" {
		v := ctx.Request.Header.Peek("Authorization")
		if len(v) > len(bearer) && bytes.EqualFold(v[:len(bearer)], bearer) && subtle.ConstantTimeCompare(bytes.TrimSpace(v[len(bearer):]), []byte(tok)) == 1 {
			return true
		}
	}
	if s.keys.Len() == 0 {
		return false
	}
	_, ok := s.authenticate(ctx)
	return ok
}

// warnOpenMetrics logs, once per listener, when /metrics needs no
// credential on a listener other hosts can reach.
func (s *Server) warnOpenMetrics(ln net.Listener) {
	cur := s.current.Load()
	if cur.cfg.Metrics.Token != "" || cur.keys.Len() > 0 || config.IsLoopback(ln.Addr().String()) {
		return
	}
	s.log.Printf("warning: /metrics is open to anyone who can reach %s (it shows key and model names and usage); set metrics.token or add client keys", ln.Addr())
}

// registerGauges adds the gauges read at each scrape: requests and bytes
// in flight, and the current configuration's pools.
func (sh *shared) registerGauges() {
	m := sh.metrics
	m.Gauge("slipstream_requests_in_flight", func() float64 { return float64(sh.inflight.Load()) })
	m.Gauge("slipstream_request_bytes_in_flight", func() float64 { return float64(sh.bytesInFlight.Load()) })
	if st := sh.store; st.Shared() {
		m.Gauge("slipstream_redis_up", func() float64 { return b2f(st.Up()) })
		m.Gauge("slipstream_redis_pending_writes", func() float64 { return float64(st.Pending()) })
	}
	m.Writer(func(w io.Writer) {
		vm.WriteCounterUint64(w, "slipstream_panics_recovered_total", uint64(sh.panics.Load()))
		cur := sh.current.Load()
		// One family after the other: the text format wants each family's
		// lines together.
		for _, p := range cur.reg.Providers() {
			vm.WriteGaugeUint64(w, `slipstream_provider_credentials{provider=`+strconv.Quote(p.Name)+`}`, uint64(len(p.Config.Keys)))
		}
		for _, p := range cur.reg.Providers() {
			if c := cur.clients[p]; c != nil {
				vm.WriteGaugeUint64(w, `slipstream_upstream_max_conns{provider=`+strconv.Quote(p.Name)+`}`, uint64(c.MaxConns()))
			}
		}
		st := sh.ws.Stats() // one transport serves every generation
		vm.WriteGaugeUint64(w, "slipstream_websocket_connections", uint64(st.Conns))
		vm.WriteGaugeUint64(w, "slipstream_websocket_state_bytes", uint64(st.StateBytes))
		vm.WriteCounterUint64(w, "slipstream_websocket_upgrades_total", uint64(st.Upgrades))
		vm.WriteCounterUint64(w, "slipstream_websocket_refused_total", uint64(st.Refused))
		vm.WriteCounterUint64(w, "slipstream_websocket_frames_total", uint64(st.Frames))
		vm.WriteCounterUint64(w, "slipstream_websocket_chained_frames_total", uint64(st.Chained))
		vm.WriteCounterUint64(w, "slipstream_websocket_not_found_total", uint64(st.NotFound))
		vm.WriteCounterUint64(w, "slipstream_websocket_evicted_total", uint64(st.Evicted))
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

// b2f is 1 for true, 0 for false: a gauge of a state.
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
