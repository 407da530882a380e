package server

import (
	"crypto/subtle"
	"io"
	"log"
	"strconv"

	vm "github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"

	"slipstream/server/config"
	"slipstream/server/metrics"
	"slipstream/server/store"
	"slipstream/server/ws"
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
			label := `{provider=` + strconv.Quote(p.Name) + `}`
			vm.WriteGaugeUint64(w, `slipstream_provider_credentials`+label, uint64(len(p.Config.Keys)))
			if c := cur.clients[p]; c != nil {
				vm.WriteGaugeUint64(w, `slipstream_upstream_max_conns`+label, uint64(c.MaxConns()))
			}
		}
		st := sh.wsStats()
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

// wsStats sums the WebSocket counters of every generation: the live ones'
// and those folded in when a replaced generation's last socket closed, so
// the counters never go back across reloads.
func (sh *shared) wsStats() ws.Stats {
	sh.wsMu.Lock()
	defer sh.wsMu.Unlock()
	sum := sh.wsRetired
	for _, t := range sh.wsLive {
		st := t.Stats()
		sum.Conns += st.Conns
		sum.StateBytes += st.StateBytes
		addWSCounters(&sum, &st)
	}
	return sum
}

// wsTrack adds a generation's transport to the sums.
func (sh *shared) wsTrack(t *ws.Transport) {
	sh.wsMu.Lock()
	sh.wsLive = append(sh.wsLive, t)
	sh.wsMu.Unlock()
}

// wsFold moves a drained transport's counters into the retired sums.
func (sh *shared) wsFold(t *ws.Transport) {
	sh.wsMu.Lock()
	defer sh.wsMu.Unlock()
	for i, l := range sh.wsLive {
		if l == t {
			st := t.Stats()
			addWSCounters(&sh.wsRetired, &st)
			sh.wsLive = append(sh.wsLive[:i], sh.wsLive[i+1:]...)
			return
		}
	}
}

func addWSCounters(dst, st *ws.Stats) {
	dst.Upgrades += st.Upgrades
	dst.Refused += st.Refused
	dst.Frames += st.Frames
	dst.Chained += st.Chained
	dst.NotFound += st.NotFound
	dst.Evicted += st.Evicted
}

// newStore builds the process's shared-state store: Redis-backed when cfg
// names Redis, in-process otherwise.
func newStore(cfg *config.Config, lg *log.Logger, m *metrics.Metrics) (*store.Store, error) {
	if cfg.Redis.URL == "" {
		return store.New(), nil
	}
	return store.Open(store.Options{URL: cfg.Redis.URL, Prefix: cfg.Redis.Prefix, Log: lg, OnError: m.RedisError})
}
