// Package metrics keeps slipstream's Prometheus metrics and writes them in
// the text exposition format.
//
// It is built on github.com/VictoriaMetrics/metrics: its counters and
// histograms are plain atomics (an update allocates nothing), it writes
// the exposition format without reflection, and it brings no dependency
// tree (prometheus/client_golang pulls protobuf and allocates per labelled
// lookup through its vectors). Labelled series are found through this
// package's own maps, keyed by structs of strings that live as long as the
// configuration, so a request's lookup allocates nothing either; only the
// first sight of a label set builds its name.
//
// Label values are bounded by the caller: routes, dialects, provider names
// and model labels come from the route table and the configuration (see
// ModelLabels), statuses are HTTP codes.
package metrics

import (
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"slipstream/codec"
)

// Metrics holds every series. One lives for the whole process, across
// configuration reloads, so counters never go backwards. Its methods are
// safe for concurrent use.
type Metrics struct {
	set *vm.Set

	mu        sync.RWMutex
	bySet     map[requestKey]*requestSeries
	requests  map[RequestLabels]*vm.Counter
	latency   map[histLabels]*vm.PrometheusHistogram
	ttft      map[histLabels]*vm.PrometheusHistogram
	tokens    map[tokenLabels]*tokenCounters
	keyTokens map[string]*tokenCounters
	attempts  map[string]*vm.Counter
	failovers map[string]*vm.Counter
	cooldowns map[string]*vm.Counter
	costs     map[CostLabels]*costSeries // cost.go
	redisErrs *vm.Counter
	reloadsOK *vm.Counter
	reloadsNo *vm.Counter
	bytesIn   *vm.Counter
	bytesOut  *vm.Counter
}

// RequestLabels identify a request series. Every string must outlive the
// Metrics (a constant, or a configuration string), not be a view into a
// request.
type RequestLabels struct {
	Route    string // route path as in the route table
	Dialect  string // client dialect
	Provider string // provider name, or "" before one was chosen
	Model    string // a ModelLabels label
	Status   int
}

type histLabels struct{ route, provider string }

type tokenLabels struct {
	provider, model string
	estimated       bool
}

// tokenCounters are the five kinds of tokens, in Usage's order.
type tokenCounters [5]*vm.Counter

var tokenKinds = [5]string{"input", "output", "cache_read", "cache_write", "reasoning"}

// latencyBuckets are the upper bounds, in seconds, of the latency and
// time-to-first-token histograms: from a cached answer to a long agent
// turn.
var latencyBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// New returns an empty registry. It turns on the metrics library's
// # HELP and # TYPE lines, a process-wide setting: slipstream's is the
// only registry in the process.
func New() *Metrics {
	vm.ExposeMetadata(true)
	m := &Metrics{
		set:       vm.NewSet(),
		bySet:     map[requestKey]*requestSeries{},
		requests:  map[RequestLabels]*vm.Counter{},
		latency:   map[histLabels]*vm.PrometheusHistogram{},
		ttft:      map[histLabels]*vm.PrometheusHistogram{},
		tokens:    map[tokenLabels]*tokenCounters{},
		keyTokens: map[string]*tokenCounters{},
		attempts:  map[string]*vm.Counter{},
		failovers: map[string]*vm.Counter{},
		cooldowns: map[string]*vm.Counter{},
	}
	m.redisErrs = m.set.NewCounter("slipstream_redis_errors_total")
	m.reloadsOK = m.set.NewCounter(`slipstream_config_reloads_total{result="ok"}`)
	m.reloadsNo = m.set.NewCounter(`slipstream_config_reloads_total{result="rejected"}`)
	m.bytesIn = m.set.NewCounter("slipstream_request_bytes_total")
	m.bytesOut = m.set.NewCounter("slipstream_response_bytes_total")
	return m
}

// Request is one finished request, as Observe records it.
type Request struct {
	RequestLabels
	Key      string        // client key name, "" for none
	Latency  time.Duration // handler start to the last byte
	TTFT     time.Duration // to the first streamed event; 0: not a stream
	BytesIn  int64
	BytesOut int64
	Usage    codec.Usage
}

// Observe records one finished request: its count, latency, time to first
// token, bytes and tokens. Once its label set was seen it costs one map
// lookup under a read lock and allocates nothing.
func (m *Metrics) Observe(r *Request) {
	k := requestKey{r.RequestLabels, r.Key, r.Usage.Estimated}
	m.mu.RLock()
	rs := m.bySet[k]
	m.mu.RUnlock()
	if rs == nil {
		rs = m.newSet(&k)
	}
	rs.requests.Inc()
	rs.latency.Update(r.Latency.Seconds())
	if r.TTFT > 0 {
		rs.ttft.Update(r.TTFT.Seconds())
	}
	m.bytesIn.Add(int(r.BytesIn))
	m.bytesOut.Add(int(r.BytesOut))
	if !r.Usage.Known {
		return
	}
	addUsage(rs.tokens, &r.Usage)
	if rs.keyTokens != nil {
		addUsage(rs.keyTokens, &r.Usage)
	}
}

// requestKey is everything that picks the series of one request.
type requestKey struct {
	RequestLabels
	key       string
	estimated bool
}

// requestSeries are the series one requestKey updates.
type requestSeries struct {
	requests      *vm.Counter
	latency, ttft *vm.PrometheusHistogram
	tokens        *tokenCounters
	keyTokens     *tokenCounters // nil without a key
}

// newSet finds or builds the series of k (the slow path: once per label
// set).
func (m *Metrics) newSet(k *requestKey) *requestSeries {
	h := histLabels{k.Route, k.Provider}
	rs := &requestSeries{
		requests: m.counter(&k.RequestLabels),
		latency:  m.hist(m.latency, "slipstream_request_duration_seconds", h),
		ttft:     m.hist(m.ttft, "slipstream_time_to_first_token_seconds", h),
		tokens:   m.tokenSeries(tokenLabels{k.Provider, k.Model, k.estimated}),
	}
	if k.key != "" {
		rs.keyTokens = m.keyTokenSeries(k.key)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old := m.bySet[*k]; old != nil {
		return old
	}
	m.bySet[*k] = rs
	return rs
}

func addUsage(tc *tokenCounters, u *codec.Usage) {
	for i, n := range [5]int64{u.Input, u.Output, u.CacheRead, u.CacheWrite, u.Reasoning} {
		if n > 0 {
			tc[i].Add(int(n))
		}
	}
}

func (m *Metrics) counter(l *RequestLabels) *vm.Counter {
	m.mu.RLock()
	c := m.requests[*l]
	m.mu.RUnlock()
	if c != nil {
		return c
	}
	name := series("slipstream_requests_total", "route", l.Route, "dialect", l.Dialect, "provider", l.Provider, "model", l.Model, "status", strconv.Itoa(l.Status))
	m.mu.Lock()
	defer m.mu.Unlock()
	if c = m.requests[*l]; c == nil {
		c = m.set.GetOrCreateCounter(name)
		m.requests[*l] = c
	}
	return c
}

func (m *Metrics) hist(hs map[histLabels]*vm.PrometheusHistogram, family string, l histLabels) *vm.PrometheusHistogram {
	m.mu.RLock()
	h := hs[l]
	m.mu.RUnlock()
	if h != nil {
		return h
	}
	name := series(family, "route", l.route, "provider", l.provider)
	m.mu.Lock()
	defer m.mu.Unlock()
	if h = hs[l]; h == nil {
		h = m.set.GetOrCreatePrometheusHistogramExt(name, latencyBuckets)
		hs[l] = h
	}
	return h
}

func (m *Metrics) tokenSeries(l tokenLabels) *tokenCounters {
	m.mu.RLock()
	tc := m.tokens[l]
	m.mu.RUnlock()
	if tc != nil {
		return tc
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if tc = m.tokens[l]; tc == nil {
		tc = &tokenCounters{}
		for i, kind := range tokenKinds {
			tc[i] = m.set.GetOrCreateCounter(series("slipstream_tokens_total", "kind", kind, "provider", l.provider, "model", l.model, "estimated", strconv.FormatBool(l.estimated)))
		}
		m.tokens[l] = tc
	}
	return tc
}

func (m *Metrics) keyTokenSeries(key string) *tokenCounters {
	m.mu.RLock()
	tc := m.keyTokens[key]
	m.mu.RUnlock()
	if tc != nil {
		return tc
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if tc = m.keyTokens[key]; tc == nil {
		tc = &tokenCounters{}
		for i, kind := range tokenKinds {
			tc[i] = m.set.GetOrCreateCounter(series("slipstream_key_tokens_total", "key", key, "kind", kind))
		}
		m.keyTokens[key] = tc
	}
	return tc
}

// Attempt counts one upstream attempt to provider (a configuration name).
func (m *Metrics) Attempt(provider string) {
	m.named(m.attempts, "slipstream_upstream_attempts_total", "provider", provider).Inc()
}

// Failover counts one move to another credential, provider or fallback
// model before the first byte; reason is one of a fixed set (e.g. "429",
// "401", "5xx", "connect", "timeout").
func (m *Metrics) Failover(reason string) {
	m.named(m.failovers, "slipstream_failovers_total", "reason", reason).Inc()
}

// Cooldown counts one credential put in cooldown, by reason (as Failover).
func (m *Metrics) Cooldown(reason string) {
	m.named(m.cooldowns, "slipstream_cooldowns_total", "reason", reason).Inc()
}

// Reload counts one configuration reload, applied or rejected.
func (m *Metrics) Reload(ok bool) {
	if ok {
		m.reloadsOK.Inc()
		return
	}
	m.reloadsNo.Inc()
}

// RedisError counts one failed shared-state operation (the replica then
// used its local state).
func (m *Metrics) RedisError() { m.redisErrs.Inc() }

func (m *Metrics) named(cs map[string]*vm.Counter, family, label, value string) *vm.Counter {
	m.mu.RLock()
	c := cs[value]
	m.mu.RUnlock()
	if c != nil {
		return c
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c = cs[value]; c == nil {
		value = strings.Clone(value)
		c = m.set.GetOrCreateCounter(series(family, label, value))
		cs[value] = c
	}
	return c
}

// Gauge registers a gauge read from f at each scrape; name may carry
// labels. A second registration of name keeps the first.
func (m *Metrics) Gauge(name string, f func() float64) {
	m.set.GetOrCreateGauge(name, f)
}

// WritePrometheus writes every series, then the Go runtime and process
// metrics, in the Prometheus text format, each family after one # HELP
// and one # TYPE line (help.go).
func (m *Metrics) WritePrometheus(w io.Writer) {
	var e exposition
	m.set.WritePrometheus(&e)
	vm.WriteProcessMetrics(&e)
	e.writeTo(w)
}

// series builds a series name: family{k1="v1",...}, values escaped as the
// text format wants.
func series(family string, kv ...string) string {
	var b strings.Builder
	b.WriteString(family)
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(kv[i])
		b.WriteString(`="`)
		for _, c := range []byte(kv[i+1]) {
			switch c {
			case '\\':
				b.WriteString(`\\`)
			case '"':
				b.WriteString(`\"`)
			case '\n':
				b.WriteString(`\n`)
			default:
				b.WriteByte(c)
			}
		}
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// Writer registers f to write more series at each scrape (values read
// from elsewhere, such as the current configuration's pools). f writes
// whole lines in the text format, each family's lines together; HELP and
// TYPE lines are added (help.go).
func (m *Metrics) Writer(f func(w io.Writer)) { m.set.RegisterMetricsWriter(f) }
