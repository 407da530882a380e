package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"slipstream/codec"
	"slipstream/internal/pgtest"
	"slipstream/internal/testkit"
	"slipstream/server/ledger"
)

// ledgerDatabases runs f with a fresh SQLite file and a fresh real
// PostgreSQL database: the server's ledger is tested on both.
func ledgerDatabases(t *testing.T, f func(t *testing.T, database string)) {
	t.Run("sqlite", func(t *testing.T) { f(t, filepath.Join(t.TempDir(), "usage.db")) })
	t.Run("postgres", func(t *testing.T) { f(t, pgtest.Start(t).URL()) })
}

// waitLedger waits until the ledger has written or dropped every record
// added, and n were added.
func waitLedger(t *testing.T, l *ledger.Ledger, n int64) ledger.Stats {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := l.Stats()
		if st.Added == n && st.Written+st.Dropped == n {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("ledger: %+v, want %d records handled", st, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestLedgerRecords: each finished request, over HTTP (same dialect, the
// three other dialects translated, a failed upstream) and over a
// WebSocket turn, becomes one
// record whose fields match what the client saw.
func TestLedgerRecords(t *testing.T) {
	ledgerDatabases(t, func(t *testing.T, database string) {
		u := &sseUpstream{reply: func(_ int, body []byte) upReply {
			if bytes.Contains(body, []byte("fail-me")) {
				return upReply{status: 400, body: `{"error":{"type":"invalid_request_error","message":"no"}}`}
			}
			return upReply{body: textAnswer("resp_1", "hello there")}
		}}
		up := newUpstream(t, u)
		yml := "providers:\n  - {name: up, kind: openai, api: responses, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\n" +
			"timeouts: {keepalive: 0s, ws_ping: 100ms}\nlog: {access: true, format: json}\n" +
			"keys:\n  - {name: alice, key: sk-alice-0123456789}\nusage: {database: \"" + database + "\", batch_interval: 10ms}\n"
		var logs testkit.Buffer
		base, s := serveConfigServer(t, parseConfig(t, yml, up.URL), &logs)
		alice := []string{"Authorization", "Bearer sk-alice-0123456789"}
		type want struct {
			id, model, dialect, transport string
			status                        int
			input, output                 int64
		}
		var wants []want
		f := func(path, body string, d codec.Dialect) {
			t.Helper()
			status, h, got := post(t, base+path, body, alice...)
			if status != 200 && status != 400 {
				t.Fatalf("%s: %d %s", path, status, got)
			}
			w := want{id: h.Get(requestIDHeader), model: "gpt-5", dialect: d.String(), transport: "http", status: status, input: 11, output: 3}
			if status != 200 {
				w.input, w.output = 0, 0
			}
			wants = append(wants, w)
		}
		f("/v1/responses", `{"model":"gpt-5","stream":true,"input":"hi"}`, codec.DialectResponses)
		f("/v1/messages", `{"model":"gpt-5","stream":true,"max_tokens":50,"messages":[{"role":"user","content":"hi"}]}`, codec.DialectAnthropic)
		f("/v1/responses", `{"model":"gpt-5","stream":true,"input":"fail-me"}`, codec.DialectResponses)
		f("/v1/chat/completions", `{"model":"gpt-5","stream":true,"messages":[{"role":"user","content":"hi"}]}`, codec.DialectChat)
		f("/v1beta/models/gpt-5:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, codec.DialectGemini)
		c, _ := wsDial(t, base, "/v1/responses", alice...)
		wsSend(t, c, `{"type":"response.create","model":"gpt-5","input":"hi"}`)
		if evs := wsResponse(t, c); last(evs).Type != "response.completed" {
			t.Fatalf("WebSocket turn: %s", last(evs).Raw)
		}
		wants = append(wants, want{model: "gpt-5", dialect: codec.DialectResponses.String(), transport: "websocket", status: 200, input: 11, output: 3})

		l := s.Ledger()
		if l == nil {
			t.Fatal("no ledger with usage.database set")
		}
		st := waitLedger(t, l, int64(len(wants)))
		if st.Dropped != 0 {
			t.Fatalf("dropped: %+v", st)
		}
		es, err := l.DB().Range(context.Background(), time.Time{}, time.Time{}, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != len(wants) {
			t.Fatalf("%d records, want %d: %+v", len(es), len(wants), es)
		}
		for i, w := range wants {
			e := es[i]
			if w.id != "" && e.ID != w.id || e.ID == "" {
				t.Errorf("record %d: id %q, want %q", i, e.ID, w.id)
			}
			if e.Key != "alice" || e.Provider != "up" || e.Credential != "key#0" || e.Model != w.model || e.UpstreamModel != w.model ||
				e.ClientDialect != w.dialect || e.UpstreamDialect != codec.DialectResponses.String() || e.Transport != w.transport ||
				e.Status != w.status || e.Input != w.input || e.Output != w.output || e.Estimated ||
				// gpt-5: $1.25 and $10 per million input and output tokens.
				!e.Priced || e.APIEquivalent || e.CostNanoUSD != w.input*1250+w.output*10000 ||
				e.BytesIn == 0 || e.BytesOut == 0 || e.Latency <= 0 || time.Since(e.Time) > time.Minute {
				t.Errorf("record %d: %+v\nwant %+v", i, e, w)
			}
			if w.status == 200 && e.TTFT <= 0 {
				t.Errorf("record %d: no time to first token: %+v", i, e)
			}
		}
		checkAccessLog(t, logs.String(), es)
	})
}

// TestLedgerFailover: a request that failed over is one record, naming
// the credential that served it, with its cost and the access-log line's
// fields.
func TestLedgerFailover(t *testing.T) {
	ledgerDatabases(t, func(t *testing.T, database string) {
		u := &sseUpstream{reply: func(_ int, _ []byte) upReply { return upReply{body: textAnswer("resp_1", "hello there")} }}
		up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.Header.Get("Authorization"), "sk-up-a") {
				w.Header().Set("Retry-After", "30")
				w.WriteHeader(429)
				io.WriteString(w, `{"error":{"type":"rate_limit_error","message":"slow down"}}`)
				return
			}
			u.ServeHTTP(w, r)
		}))
		yml := "providers:\n  - {name: up, kind: openai, api: responses, base_url: \"${UP}/v1\", strategy: fill-first, keys: [{name: ka, key: sk-up-a}, {name: kb, key: sk-up-b}], models: [\"*\"]}\n" +
			"timeouts: {keepalive: 0s}\nlog: {access: true, format: json}\nusage: {database: \"" + database + "\", batch_interval: 10ms}\n"
		var logs testkit.Buffer
		base, s := serveConfigServer(t, parseConfig(t, yml, up.URL), &logs)
		status, h, got := post(t, base+"/v1/responses", `{"model":"gpt-5","stream":true,"input":"hi"}`)
		if status != 200 {
			t.Fatalf("%d %s", status, got)
		}
		waitLedger(t, s.Ledger(), 1)
		es, err := s.Ledger().DB().Latest(context.Background(), 5)
		if err != nil || len(es) != 1 {
			t.Fatalf("%v %+v", err, es)
		}
		if e := es[0]; e.ID != h.Get(requestIDHeader) || e.Credential != "kb" || e.Status != 200 || !e.Priced || e.CostNanoUSD != 11*1250+3*10000 {
			t.Fatalf("record %+v", e)
		}
		if !strings.Contains(logs.String(), `"attempts":2`) {
			t.Fatalf("the access log does not show the failover:\n%s", logs.String())
		}
		checkAccessLog(t, logs.String(), es)
	})
}

// TestLedgerDatabaseGoesAway: PostgreSQL stops while requests flow. Every
// request is still answered at once; the records past the queue's bound
// are dropped and counted in /metrics; once the database is back, the
// rest are written, and written + dropped is every request.
func TestLedgerDatabaseGoesAway(t *testing.T) {
	pg := pgtest.Start(t)
	yml := "providers:\n  - {name: m, kind: mock, models: [\"*\"]}\n" +
		"usage: {database: \"" + pg.URL() + "\", queue_size: 16, batch_size: 4, batch_interval: 5ms}\n"
	base, s := startServer(t, yml, "")
	body := `{"model":"mock","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	sent := int64(0)
	send := func(n int) {
		t.Helper()
		for range n {
			start := time.Now()
			if status, _, got := post(t, base+"/v1/messages", body); status != 200 {
				t.Fatalf("request %d: %d %s", sent+1, status, got)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("request %d waited %s", sent+1, d)
			}
			sent++
		}
	}
	l := s.Ledger()
	send(30)
	waitLedger(t, l, 30)
	pg.Stop()
	send(200)
	if st := l.Stats(); st.Dropped < 200-16-4-1 {
		t.Fatalf("during the outage: %+v", st)
	}
	pg.Restart(t)
	waitLedger(t, l, 230)
	send(20)
	st := waitLedger(t, l, 250)
	if st.Written < 30+20 || st.Dropped == 0 || st.Added != sent {
		t.Fatalf("after the outage: %+v, %d requests", st, sent)
	}
	n, err := l.DB().Count(context.Background())
	if err != nil || n != st.Written {
		t.Fatalf("rows %d (%v), written %d", n, err, st.Written)
	}
	if got := metricValue(t, s, `slipstream_ledger_records_total{result="dropped"}`); got != st.Dropped {
		t.Fatalf("dropped in /metrics: %d, ledger says %d", got, st.Dropped)
	}
	if got := metricValue(t, s, `slipstream_ledger_records_total{result="written"}`); got != st.Written {
		t.Fatalf("written in /metrics: %d, ledger says %d", got, st.Written)
	}
	if metricValue(t, s, "slipstream_ledger_batch_failures_total") == 0 {
		t.Fatal("no failed batch counted")
	}
}

// metricValue reads one series from the server's exposition.
func metricValue(t *testing.T, s *Server, series string) int64 {
	t.Helper()
	var b bytes.Buffer
	s.Metrics().WritePrometheus(&b)
	sc := bufio.NewScanner(&b)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no series %s in:\n%s", series, b.String())
	return 0
}

// TestLedgerPlaces: a server built without Options.DefaultLedger keeps no
// ledger unless usage.database names one (tests write nothing into the
// home directory); with it, the file is created there; usage.enabled:
// false turns it off.
func TestLedgerPlaces(t *testing.T) {
	mock := "providers:\n  - {name: m, kind: mock, models: [\"*\"]}\n"
	if _, s := startServer(t, mock, ""); s.Ledger() != nil {
		t.Fatal("a ledger without a database or a default place")
	}
	path := filepath.Join(t.TempDir(), "state", "slipstream", "usage.db")
	s, err := New(parseConfig(t, mock, ""), Options{DefaultLedger: path})
	if err != nil {
		t.Fatal(err)
	}
	if s.Ledger() == nil {
		t.Fatal("no ledger at the default place")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the default file was not created: %v", err)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	s, err = New(parseConfig(t, mock+"usage: {enabled: false}\n", ""), Options{DefaultLedger: path})
	if err != nil {
		t.Fatal(err)
	}
	if s.Ledger() != nil {
		t.Fatal("usage.enabled: false kept a ledger")
	}
	_ = s.Shutdown(context.Background())
	// At the default place, a file that cannot be made turns the ledger
	// off with a warning; named in usage.database, it stops the start
	// with a clear error.
	var logs bytes.Buffer
	s, err = New(parseConfig(t, mock, ""), Options{DefaultLedger: "/proc/nope/usage.db", Log: &logs})
	if err != nil || s.Ledger() != nil || !strings.Contains(logs.String(), "warning: usage ledger off") {
		t.Fatalf("unusable default place: %v, %v, %q", err, s.Ledger(), logs.String())
	}
	_ = s.Shutdown(context.Background())
	_, err = New(parseConfig(t, mock+"usage: {database: /proc/nope/usage.db}\n", ""), Options{})
	if err == nil || !strings.Contains(err.Error(), "usage.database") {
		t.Fatalf("unusable SQLite path: %v", err)
	}
}

// checkAccessLog: every ledger record has the access-log line of the same
// request id, with the same names, status, tokens and bytes.
func checkAccessLog(t *testing.T, log string, es []ledger.Entry) {
	t.Helper()
	lines := map[string]map[string]any{}
	for _, l := range strings.Split(log, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["id"] != nil && m["upstream_model"] != nil {
			lines[m["id"].(string)] = m
		}
	}
	for _, e := range es {
		m := lines[e.ID]
		if m == nil {
			t.Errorf("no access-log line for record %s", e.ID)
			continue
		}
		n := func(k string) int64 { f, _ := m[k].(float64); return int64(f) }
		if m["key"] != e.Key || m["provider"] != e.Provider || m["credential"] != e.Credential || m["model"] != e.Model ||
			m["upstream_model"] != e.UpstreamModel || m["dialect"] != e.ClientDialect || m["cause"] != e.Cause ||
			n("status") != int64(e.Status) || n("input_tokens") != e.Input || n("output_tokens") != e.Output ||
			n("cache_read_tokens") != e.CacheRead || n("reasoning_tokens") != e.Reasoning ||
			n("bytes_in") != e.BytesIn || n("bytes_out") != e.BytesOut || m["estimated"] != e.Estimated ||
			m["cost_kind"] != "api" || !costIs(m["cost_usd"], e.CostNanoUSD) {
			t.Errorf("record %+v\ndiffers from its access-log line %v", e, m)
		}
	}
}

// costIs reports whether an access log's cost_usd (a decimal string of
// dollars) is nanos nano-dollars.
func costIs(v any, nanos int64) bool {
	s, _ := v.(string)
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && math.Abs(f*1e9-float64(nanos)) < 0.5
}
