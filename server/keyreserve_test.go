package server

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"slipstream/internal/rawhttp"
	"slipstream/internal/redistest"
	"slipstream/internal/testkit"
	"slipstream/server/store"
)

// Tokens a request of the reservation tests uses: the upstream reports 5
// in and 3 out. Their body asks for max_tokens 16 and counts about 7
// input tokens, so each reserves more than the limit of 20 leaves once
// one is in flight.
const (
	reserveUse   = 8
	reserveLimit = 20
	reserveBody  = `{"model":"m1","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`
)

// slowUpstream answers every Messages request after hold with a reply that
// reports reserveUse tokens, and counts the calls.
type slowUpstream struct {
	hold  time.Duration
	calls atomic.Int64
}

func (u *slowUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.calls.Add(1)
	time.Sleep(u.hold) // the upstream generating: what the concurrent requests overlap with
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m1","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":3}}`)
}

// reserveConfig is one Anthropic provider at up and key "ci" with policy.
func reserveConfig(policy, up, extra string) string {
	return fmt.Sprintf("keys:\n  - {name: ci, key: sk-client, %s}\nproviders:\n  - {name: p, kind: anthropic, base_url: %q, keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 0s}\n%s", policy, up, extra)
}

// burst sends n requests at once, spread over bases, and returns how many
// were answered 200; every other answer must be a 429 with Retry-After.
func burst(t *testing.T, n int, bases ...string) int {
	t.Helper()
	var ok atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan string, n)
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(base string) {
			defer wg.Done()
			<-start
			status, h, b := post(t, base+"/v1/messages", reserveBody, "X-Api-Key", "sk-client")
			switch {
			case status == 200:
				ok.Add(1)
			case status != 429 || h.Get("Retry-After") == "":
				errs <- fmt.Sprintf("%d retry-after %q %s", status, h.Get("Retry-After"), b)
			}
		}(bases[i%len(bases)])
	}
	close(start)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatalf("neither 200 nor 429: %s", e)
	}
	return int(ok.Load())
}

// checkHeld asserts what 100 concurrent requests against a limit of 20
// let through: at least one, and no more than the limit plus one
// request's use (each passes only while what the key used and reserved is
// below the limit).
func checkHeld(t *testing.T, what string, passed int, calls int64) {
	t.Helper()
	if passed < 1 || int64(passed) != calls {
		t.Fatalf("%s: %d passed, the upstream was called %d times", what, passed, calls)
	}
	if used := passed * reserveUse; used > reserveLimit+reserveUse {
		t.Fatalf("%s: %d of 100 concurrent requests passed, %d tokens against a limit of %d: over by more than one request", what, passed, used, reserveLimit)
	}
}

// replicas are two servers of one configuration sharing a redis-server,
// in front of one slowUpstream.
type replicas struct {
	a, b   string // base URLs
	sa, sb *Server
	logs   [2]testkit.Buffer
	rs     *redistest.Server
	up     *slowUpstream
}

// startReplicas starts a redis-server and a slowUpstream holding each
// request 300 ms, serves config(the upstream's URL, a redis section with
// prefix) twice, and waits until both servers are connected to Redis.
func startReplicas(t *testing.T, prefix string, config func(up, extra string) string) *replicas {
	t.Helper()
	r := &replicas{rs: redistest.Start(t), up: &slowUpstream{hold: 300 * time.Millisecond}}
	u := newUpstream(t, r.up)
	yml := config(u.URL, "redis: {url: \""+r.rs.URL()+"\", prefix: "+prefix+"}\n")
	r.a, r.sa = serveConfigServer(t, parseConfig(t, yml, ""), &r.logs[0])
	r.b, r.sb = serveConfigServer(t, parseConfig(t, yml, ""), &r.logs[1])
	for i := range r.logs {
		r.logs[i].WaitFor(t, 5*time.Second, "redis: connected")
	}
	return r
}

// settled waits until both replicas are idle and Redis holds want under
// key (their background writes arrive after the responses).
func (r *replicas) settled(t *testing.T, key, want string) {
	t.Helper()
	waitIdle(t, r.sa)
	waitIdle(t, r.sb)
	deadline := time.Now().Add(10 * time.Second)
	for got := r.rs.Do(t, "GET", key); got != want; got = r.rs.Do(t, "GET", key) {
		if time.Now().After(deadline) {
			t.Fatalf("redis holds %q under %s, want %s; logs:\n%s\n%s", got, key, want, r.logs[0].String(), r.logs[1].String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestKeyLimitsHoldUnderConcurrency: 100 concurrent requests, each held
// 300 ms by the upstream, against a key with budget: 20 (then tpm: 20)
// pass no more than the limit plus one request's use; when all are done
// the key's budget and window hold exactly what the passed requests used
// (every reservation was settled once). Before, all 100 passed: the limit
// was checked before each request and charged after it.
func TestKeyLimitsHoldUnderConcurrency(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ policy, name string }{
		{"budget: 20", "budget"},
		{"tpm: 20", "tpm"},
	} {
		t.Run(c.name, func(t *testing.T) {
			up := &slowUpstream{hold: 300 * time.Millisecond}
			u := newUpstream(t, up)
			base, s := startServer(t, reserveConfig(c.policy, u.URL, ""), "")
			passed := burst(t, 100, base)
			checkHeld(t, c.policy, passed, up.calls.Load())
			waitIdle(t, s)
			now := s.now()
			var held int64
			if c.name == "budget" {
				held = s.store.Budget("budget:ci", store.Daily).Used(now)
			} else {
				held = s.store.Window("tpm:ci", time.Minute).Count(now)
			}
			if held != int64(passed*reserveUse) {
				t.Fatalf("%s: the key holds %d tokens after %d requests of %d: a reservation was not settled once", c.policy, held, passed, reserveUse)
			}
		})
	}
}

// TestKeyLimitsHoldUnderConcurrencyRedis: the same across two replicas
// sharing a real redis-server: the reservation is one script there, so
// the replicas together pass no more than one of them alone would, and
// Redis ends up holding exactly the tokens used.
func TestKeyLimitsHoldUnderConcurrencyRedis(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ policy, name string }{
		{"budget: 20", "budget"},
		{"tpm: 20", "tpm"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := startReplicas(t, "res", func(up, extra string) string { return reserveConfig(c.policy, up, extra) })
			passed := burst(t, 100, r.a, r.b)
			checkHeld(t, c.policy+" over redis", passed, r.up.calls.Load())
			now := r.sa.now()
			key := "res:budget:budget:ci:" + strconv.FormatInt(now.Unix()/86400, 10)
			if c.name == "tpm" {
				key = "res:win:tpm:ci:" + strconv.FormatInt(now.UnixNano()/int64(time.Minute), 10)
			}
			r.settled(t, key, strconv.Itoa(passed*reserveUse))
		})
	}
}

// TestKeyBudgetSurvivesRedisPause: two replicas share a budget through a
// real redis-server that stops answering (CLIENT PAUSE) while a first
// wave of requests is in flight, reserved in Redis; a second wave is
// admitted while the replicas run on local state. When all is done Redis
// holds exactly the tokens the requests used: the first wave's
// settlements, made during the pause, were not dropped (Redis overcharged
// the key before), and the second wave's local reservations reached Redis
// with their settlements (it undercounted them before). The metrics count
// the pause's errors, and show the replica back on Redis with nothing left
// to send.
func TestKeyBudgetSurvivesRedisPause(t *testing.T) {
	t.Parallel()
	r := startReplicas(t, "pause", func(up, extra string) string { return reserveConfig("budget: 100000", up, extra) })
	key := "pause:budget:budget:ci:" + strconv.FormatInt(r.sa.now().Unix()/86400, 10)
	first := make(chan int, 1)
	go func() { first <- burst(t, 10, r.a, r.b) }()
	testkit.WaitFor(t, 5*time.Second, "the first wave reaches the upstream", func() bool { return r.up.calls.Load() == 10 })
	if got := r.rs.Do(t, "GET", key); got == "$-1" || got == "0" {
		t.Fatalf("the first wave's reservations are not in redis: %q", got)
	}
	if m := scrape(t, r.a+"/metrics", "sk-client"); m["slipstream_redis_up"] != 1 {
		t.Fatalf("slipstream_redis_up %v before the pause", m["slipstream_redis_up"])
	}
	r.rs.Do(t, "CLIENT", "PAUSE", "1000", "ALL")
	second := burst(t, 10, r.a, r.b) // admitted while redis does not answer
	if m := scrape(t, r.a+"/metrics", "sk-client"); m["slipstream_redis_errors_total"] == 0 {
		t.Fatal("slipstream_redis_errors_total did not count the pause")
	}
	passed := <-first + second
	if passed != 20 {
		t.Fatalf("%d of 20 requests passed a budget far from its limit", passed)
	}
	if !strings.Contains(r.logs[0].String()+r.logs[1].String(), "redis is unreachable") {
		t.Fatalf("no replica saw redis pause; logs:\n%s\n%s", r.logs[0].String(), r.logs[1].String())
	}
	r.settled(t, key, strconv.Itoa(passed*reserveUse))
	if m := scrape(t, r.a+"/metrics", "sk-client"); m["slipstream_redis_up"] != 1 || m["slipstream_redis_pending_writes"] != 0 {
		t.Fatalf("once settled: slipstream_redis_up %v, slipstream_redis_pending_writes %v", m["slipstream_redis_up"], m["slipstream_redis_pending_writes"])
	}
}

// TestCutStreamsAreCharged: Chat streams the upstream cuts short before
// their usage chunk are charged what they consumed (the input counted at
// admission and the text relayed), so a key with budget: 20 is refused
// after a few of them. Before, each was charged nothing, and 30 in a row
// passed.
func TestCutStreamsAreCharged(t *testing.T) {
	t.Parallel()
	chunk := `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"content":"hello there, how are you doing"},"finish_reason":null}]}` + "\n\n"
	up := cutUpstream(t, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n", chunk)
	yml := fmt.Sprintf("keys:\n  - {name: ci, key: sk-client, budget: 20}\nproviders:\n  - {name: p, kind: openai, base_url: %q, keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 0s}\n", up+"/v1")
	base, s := startServer(t, yml, "")
	body := `{"model":"m1","stream":true,"max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	passed := 0
	for i := 0; i < 30; i++ {
		status, _, b := post(t, base+"/v1/chat/completions", body, "Authorization", "Bearer sk-client")
		if status == 429 {
			continue
		}
		if status != 200 || !strings.Contains(string(b), "hello there") {
			t.Fatalf("stream %d: %d %s", i+1, status, b)
		}
		passed++
		waitIdle(t, s) // settled before the next one is admitted
	}
	used := s.store.Budget("budget:ci", store.Daily).Used(s.now())
	if passed < 1 || passed > 3 || used < reserveLimit {
		t.Fatalf("%d of 30 cut streams passed a budget of 20, charged %d in all", passed, used)
	}
}

// gateUpstream holds each request until released, then refuses it (400,
// which neither fails over nor rests the credential).
type gateUpstream struct {
	got     chan struct{}
	release chan struct{}
}

func (u *gateUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.got <- struct{}{}
	<-u.release
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(400)
	fmt.Fprint(w, `{"error":{"type":"invalid_request_error","message":"refused by the test"}}`)
}

// TestReservationPerDialect: while a request is in flight its key's
// budget holds its counted input plus its output ceiling, read from each
// dialect's own field (times Chat's n), or 4096 when it sets none; a
// request the upstream refuses gives it all back.
func TestReservationPerDialect(t *testing.T) {
	t.Parallel()
	const hi = `"messages":[{"role":"user","content":"hi"}]`
	for _, c := range []struct {
		name, kind, suffix, path, body string
		out                            int64
	}{
		{"anthropic", "kind: anthropic", "", "/v1/messages", `{"model":"m1","max_tokens":1000,` + hi + `}`, 1000},
		{"chat_max_completion_tokens", "kind: openai, api: chat", "/v1", "/v1/chat/completions", `{"model":"m1","max_completion_tokens":1000,` + hi + `}`, 1000},
		{"chat_max_tokens_n", "kind: openai, api: chat", "/v1", "/v1/chat/completions", `{"model":"m1","max_tokens":1000,"n":3,` + hi + `}`, 3000},
		{"chat_none", "kind: openai, api: chat", "/v1", "/v1/chat/completions", `{"model":"m1",` + hi + `}`, 4096},
		{"responses", "kind: openai, api: responses", "/v1", "/v1/responses", `{"model":"m1","max_output_tokens":1000,"input":"hi"}`, 1000},
		{"gemini", "kind: gemini", "", "/v1beta/models/m1:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":1000}}`, 1000},
	} {
		t.Run(c.name, func(t *testing.T) {
			up := &gateUpstream{got: make(chan struct{}, 1), release: make(chan struct{})}
			var once sync.Once
			unblock := func() { once.Do(func() { close(up.release) }) }
			u := newUpstream(t, up)
			t.Cleanup(unblock) // before the upstream closes, which waits for its handlers
			yml := fmt.Sprintf("keys:\n  - {name: ci, key: sk-client, budget: 1000000}\nproviders:\n  - {name: p, %s, base_url: %q, keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 0s}\n", c.kind, u.URL+c.suffix)
			base, s := startServer(t, yml, "")
			done := make(chan int, 1)
			go func() {
				status, _, _ := post(t, base+c.path, c.body, "X-Goog-Api-Key", "sk-client")
				done <- status
			}()
			select {
			case <-up.got:
			case <-time.After(30 * time.Second):
				t.Fatal("the request never reached the upstream")
			}
			b := s.store.Budget("budget:ci", store.Daily)
			if held := b.Used(s.now()); held < c.out+3 || held > c.out+20 {
				t.Fatalf("in flight, the budget holds %d, want about %d + the input", held, c.out)
			}
			unblock()
			if status := <-done; status != 400 {
				t.Fatalf("status %d, want the upstream's 400", status)
			}
			waitIdle(t, s)
			if held := b.Used(s.now()); held != 0 {
				t.Fatalf("after a refused request the budget holds %d, want 0", held)
			}
		})
	}
}

// TestClientGoneStreamIsCharged: a client that leaves a Chat stream
// midway is charged what was consumed (its counted input and the text
// relayed), not its reservation and not nothing.
func TestClientGoneStreamIsCharged(t *testing.T) {
	t.Parallel()
	chunk := `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"content":"hello there"},"finish_reason":null}]}` + "\n\n"
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 2000; i++ { // about 10 s at most
			if _, err := fmt.Fprint(w, chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}))
	yml := fmt.Sprintf("keys:\n  - {name: ci, key: sk-client, budget: 1000000}\nproviders:\n  - {name: p, kind: openai, base_url: %q, keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 0s}\n", up.URL+"/v1")
	base, s := startServer(t, yml, "")
	conn := rawhttp.Dial(t, base)
	body := `{"model":"m1","stream":true,"max_tokens":1000,"messages":[{"role":"user","content":"hi"}]}`
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer sk-client\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	br := bufio.NewReader(conn)
	for n := 0; n < 3; {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, "hello there") {
			n++
		}
	}
	conn.Close()
	waitIdle(t, s)
	// 7 input tokens and 2 per chunk relayed (at least the 3 read).
	if used := s.store.Budget("budget:ci", store.Daily).Used(s.now()); used < 7+3*2 || used >= 1000 {
		t.Fatalf("a stream its client left holds %d of the key's budget, want the input and the text relayed", used)
	}
}
