package failover

import (
	"strings"
	"testing"
	"time"

	"slipstream/codec"
	"slipstream/internal/testkit"
	"slipstream/server/config"
	"slipstream/server/keys"
	"slipstream/server/provider"
	"slipstream/server/upstream"
)

// The tests below drive a plan over a registry with no server and no
// socket: the failover table of docs/CREDENTIALS.md, row by row.

const tableConfig = `
providers:
  - {name: a, kind: anthropic, models: [claude-x], strategy: fill-first, keys: [{key: s1, name: a1}, {key: s2, name: a2}]}
  - {name: b, kind: anthropic, models: [claude-x], keys: [{key: s3, name: b1}]}
  - {name: o, kind: openai, models: [gpt-y], keys: [{key: s4, name: o1}]}
fallbacks:
  claude-x: [o/gpt-y]
failover: {max_attempts: 10}
`

// env is one request's plan over a fresh registry built from yaml.
type env struct {
	t    *testing.T
	cfg  *config.Config
	reg  *provider.Registry
	key  *keys.Key
	plan Plan
	now  int64
	n    int // attempts made
}

type noSessions struct{}

func (noSessions) Session(*provider.Provider) uint64 { return 0 }

func newEnv(t *testing.T, yaml string, keyModels ...string) *env {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), testkit.Env())
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, cfg: cfg, reg: provider.NewRegistry(cfg), now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()}
	if len(keyModels) > 0 {
		ks, err := keys.New([]config.Key{{Name: "k", Key: "secret", Models: keyModels}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		e.key = ks.Find([]byte("secret"))
	}
	return e
}

func (e *env) request(model string) Request {
	first, ok := e.reg.Resolve(model, codec.DialectAnthropic)
	if !ok {
		e.t.Fatalf("no target for %s", model)
	}
	return Request{Registry: e.reg, Key: e.key, Model: []byte(model), Dialect: codec.DialectAnthropic, First: first, Sessions: noSessions{}}
}

// start starts the plan for model and returns its first candidate.
func (e *env) start(model string) string {
	e.t.Helper()
	ok, _ := e.plan.Start(e.request(model), e.now, int64(e.cfg.Failover.Deadline.D()))
	if !ok {
		e.t.Fatalf("start: every candidate rests")
	}
	return e.candidate()
}

// candidate names the plan's candidate as provider/credential@model.
func (e *env) candidate() string {
	c := e.plan.Candidate()
	name := "-"
	if c.Cred != nil {
		name = c.Cred.Name
	}
	return c.Target.Provider.Name + "/" + name + "@" + string(e.plan.UpModel())
}

// attempt feeds the outcome of a call to the candidate and returns the
// verdict and the next candidate, or "final" when the answer stands or
// none is left.
func (e *env) attempt(o Outcome) (Verdict, string) {
	e.n++
	v := Classify(&e.cfg.Failover, o)
	if !v.Failed() {
		if o.Status < 300 && !o.Failed {
			e.plan.Succeeded()
		}
		return v, "final"
	}
	_, retry := e.plan.Fail(v, e.now, e.n, e.cfg.Failover.MaxAttempts)
	if !retry || !e.plan.Next(e.now) {
		return v, "final"
	}
	e.plan.Commit()
	return v, e.candidate()
}

// rest is how long cred of provider rests for model from now.
func (e *env) rest(prov, cred, model string) time.Duration {
	p := e.reg.Provider(prov)
	for _, c := range p.Credentials() {
		if c.Name == cred {
			u := p.Cooldowns().Until(c.ID, provider.HashString(model), e.now)
			return max(0, time.Duration(u-e.now))
		}
	}
	e.t.Fatalf("no credential %s/%s", prov, cred)
	return 0
}

func TestFailoverTable(t *testing.T) {
	type rests map[string]time.Duration // "provider/credential" -> rest for claude-x
	f := func(name string, o Outcome, reason string, next string, want rests) {
		t.Helper()
		e := newEnv(t, tableConfig)
		if got := e.start("claude-x"); got != "a/a1@claude-x" {
			t.Fatalf("%s: first candidate %s", name, got)
		}
		v, got := e.attempt(o)
		if v.Reason != reason || got != next {
			t.Fatalf("%s: reason %q next %s, want %q %s", name, v.Reason, got, reason, next)
		}
		for _, pc := range []string{"a/a1", "a/a2", "b/b1"} {
			prov, cred, _ := strings.Cut(pc, "/")
			if r := e.rest(prov, cred, "claude-x"); r != want[pc] {
				t.Fatalf("%s: %s rests %v, want %v", name, pc, r, want[pc])
			}
		}
	}
	const retryAfter = 7 * time.Second
	f("429 with Retry-After", Outcome{Status: 429, RetryAfter: retryAfter, HasRetryAfter: true}, ReasonRateLimited, "a/a2@claude-x", rests{"a/a1": retryAfter})
	f("429 with a long Retry-After", Outcome{Status: 429, RetryAfter: 5 * time.Hour, HasRetryAfter: true}, ReasonRateLimited, "a/a2@claude-x", rests{"a/a1": 30 * time.Minute})
	f("429 without Retry-After", Outcome{Status: 429}, ReasonRateLimited, "a/a2@claude-x", rests{"a/a1": time.Second})
	f("401", Outcome{Status: 401}, ReasonAuth, "a/a2@claude-x", rests{"a/a1": 30 * time.Minute})
	f("403", Outcome{Status: 403}, ReasonAuth, "a/a2@claude-x", rests{"a/a1": 30 * time.Minute})
	f("500", Outcome{Status: 500}, ReasonServerError, "a/a2@claude-x", rests{"a/a1": time.Minute})
	f("529", Outcome{Status: 529}, ReasonServerError, "a/a2@claude-x", rests{"a/a1": time.Minute})
	f("reset connection", Outcome{Failed: true, Cause: upstream.CauseReset}, ReasonConnect, "a/a2@claude-x", rests{"a/a1": time.Minute})
	f("timeout", Outcome{Failed: true, Cause: upstream.CauseTimeout}, ReasonConnect, "a/a2@claude-x", rests{"a/a1": time.Minute})
	for _, c := range []upstream.Cause{upstream.CauseRefused, upstream.CauseDNS, upstream.CauseTLS, upstream.CauseProxy, upstream.CauseConnectTimeout} {
		f("connect "+c.String(), Outcome{Failed: true, Cause: c}, ReasonConnect, "b/b1@claude-x", rests{"a/a1": time.Second, "a/a2": time.Second})
	}
	f("pool full", Outcome{Failed: true, Cause: upstream.CausePoolFull}, ReasonPoolFull, "b/b1@claude-x", nil)
	f("compressed stream", Outcome{Failed: true, Cause: upstream.CauseEncoding}, ReasonConnect, "b/b1@claude-x", nil)
	f("response head too large", Outcome{Failed: true, Cause: upstream.CauseHeadTooLarge}, ReasonConnect, "b/b1@claude-x", nil)
	f("first byte already sent", Outcome{Sent: true, Failed: true, Cause: upstream.CauseReset}, "", "final", nil)
	f("400 is the client's", Outcome{Status: 400}, "", "final", nil)
	f("404 is the client's", Outcome{Status: 404}, "", "final", nil)
	f("200", Outcome{Status: 200}, "", "final", nil)
}

// TestFailoverStreaks: consecutive 429s without Retry-After double the
// rest; connect failures double up to server_error; a success clears
// the streak.
func TestFailoverStreaks(t *testing.T) {
	e := newEnv(t, `
providers:
  - {name: a, kind: anthropic, models: [claude-x], strategy: fill-first, keys: [{key: s1, name: a1}]}
failover: {max_attempts: 10, server_error: 3s}
`)
	f := func(o Outcome, want time.Duration) {
		t.Helper()
		e.n = 0
		e.plan.Reset()
		e.start("claude-x")
		e.attempt(o)
		if got := e.rest("a", "a1", "claude-x"); got != want {
			t.Fatalf("%+v: rest %v, want %v", o, got, want)
		}
		e.now += int64(want) // the rest is over
	}
	f(Outcome{Status: 429}, time.Second)
	f(Outcome{Status: 429}, 2*time.Second)
	f(Outcome{Status: 429}, 4*time.Second)
	f(Outcome{Status: 200}, 0)
	f(Outcome{Status: 429}, time.Second)
	f(Outcome{Status: 200}, 0)
	f(Outcome{Failed: true, Cause: upstream.CauseRefused}, time.Second)
	f(Outcome{Failed: true, Cause: upstream.CauseRefused}, 2*time.Second)
	f(Outcome{Failed: true, Cause: upstream.CauseRefused}, 3*time.Second) // capped at server_error
}

// TestFailoverChain: every credential of the model's providers, then
// its fallbacks (translated, another upstream model), then the answer of
// the last attempt stands, read against the target it came from.
func TestFailoverChain(t *testing.T) {
	e := newEnv(t, tableConfig)
	e.start("claude-x")
	steps := []string{"a/a2@claude-x", "b/b1@claude-x", "o/o1@gpt-y", "final"}
	for i, want := range steps {
		if _, got := e.attempt(Outcome{Status: 503}); got != want {
			t.Fatalf("step %d: %s, want %s", i, got, want)
		}
	}
	if got := e.candidate(); got != "o/o1@gpt-y" {
		t.Fatalf("the final answer is read against %s, want the last attempted", got)
	}
}

// TestFailoverKeyMayNotUseFallback: a fallback to a model the key may
// not use is skipped; the other providers of the model are not.
func TestFailoverKeyMayNotUseFallback(t *testing.T) {
	e := newEnv(t, tableConfig, "claude-*")
	e.start("claude-x")
	for i, want := range []string{"a/a2@claude-x", "b/b1@claude-x", "final"} {
		if _, got := e.attempt(Outcome{Status: 500}); got != want {
			t.Fatalf("step %d: %s, want %s", i, got, want)
		}
	}
	if got := e.candidate(); got != "b/b1@claude-x" {
		t.Fatalf("the final answer is read against %s", got)
	}
	e = newEnv(t, tableConfig, "claude-*", "gpt-y")
	e.start("claude-x")
	for i, want := range []string{"a/a2@claude-x", "b/b1@claude-x", "o/o1@gpt-y"} {
		if _, got := e.attempt(Outcome{Status: 500}); got != want {
			t.Fatalf("allowed, step %d: %s, want %s", i, got, want)
		}
	}
}

// TestFailoverLimits: no attempt starts after max_attempts calls or
// past the deadline.
func TestFailoverLimits(t *testing.T) {
	e := newEnv(t, strings.Replace(tableConfig, "max_attempts: 10", "max_attempts: 2", 1))
	e.start("claude-x")
	if _, got := e.attempt(Outcome{Status: 500}); got != "a/a2@claude-x" {
		t.Fatalf("first failure: %s", got)
	}
	if _, got := e.attempt(Outcome{Status: 500}); got != "final" {
		t.Fatalf("max_attempts: %s", got)
	}

	e = newEnv(t, strings.Replace(tableConfig, "max_attempts: 10", "max_attempts: 10, deadline: 5s", 1))
	e.start("claude-x")
	e.now += int64(5 * time.Second)
	v, got := e.attempt(Outcome{Status: 500})
	if got != "final" || v.Reason != ReasonServerError {
		t.Fatalf("deadline: %s %q", got, v.Reason)
	}
	if r := e.rest("a", "a1", "claude-x"); r != time.Minute {
		t.Fatalf("a failure past the deadline still rests its credential: %v", r)
	}
}

// TestFailoverAllCooling: when every candidate rests before the first
// attempt, Start says so with the soonest recovery.
func TestFailoverAllCooling(t *testing.T) {
	e := newEnv(t, tableConfig)
	cool := func(prov string, d time.Duration, model string) {
		p := e.reg.Provider(prov)
		for _, c := range p.Credentials() {
			p.Cooldowns().Cool(c.ID, provider.HashString(model), e.now, provider.Backoff{Base: d})
		}
	}
	cool("a", time.Minute, "claude-x")
	cool("b", 9*time.Second, "claude-x")
	if got := e.start("claude-x"); got != "o/o1@gpt-y" {
		t.Fatalf("with the model's providers resting: %s, want the fallback", got)
	}
	e.plan.Reset()
	cool("o", 20*time.Second, "gpt-y")
	ok, soonest := e.plan.Start(e.request("claude-x"), e.now, int64(time.Minute))
	if ok || time.Duration(soonest-e.now) != 9*time.Second {
		t.Fatalf("all resting: ok %v, soonest in %v", ok, time.Duration(soonest-e.now))
	}
}

// TestFailoverAgain: an account whose token was refreshed after a 401 is
// tried again at once.
func TestFailoverAgain(t *testing.T) {
	e := newEnv(t, tableConfig)
	e.start("claude-x")
	e.n++
	if _, retry := e.plan.Fail(Verdict{Reason: "401", Again: true}, e.now, e.n, 10); !retry || !e.plan.Next(e.now) {
		t.Fatal("no retry")
	}
	if got := e.candidate(); got != "a/a1@claude-x" {
		t.Fatalf("again: %s", got)
	}
}

// TestFailoverSkip: a candidate that cannot take the request passes
// over the rest of its provider.
func TestFailoverSkip(t *testing.T) {
	e := newEnv(t, tableConfig)
	e.start("claude-x")
	e.plan.Skip()
	if !e.plan.Next(e.now) {
		t.Fatal("no candidate after a skipped provider")
	}
	if got := e.candidate(); got != "b/b1@claude-x" {
		t.Fatalf("after skip: %s", got)
	}
}

// TestFailoverKeyless: a provider without keys is one candidate.
func TestFailoverKeyless(t *testing.T) {
	e := newEnv(t, `
providers:
  - {name: l, kind: openai, base_url: "http://127.0.0.1:9", models: [m]}
  - {name: a, kind: openai, models: [m], keys: [{key: s1, name: a1}]}
`)
	if got := e.start("m"); got != "l/-@m" {
		t.Fatalf("first: %s", got)
	}
	if _, got := e.attempt(Outcome{Status: 500}); got != "a/a1@m" {
		t.Fatalf("after the keyless provider: %s", got)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := func(v string, want time.Duration, wantOK bool) {
		t.Helper()
		d, ok := RetryAfter([]byte(v), now)
		if d != want || ok != wantOK {
			t.Fatalf("RetryAfter(%q) = %v, %v; want %v, %v", v, d, ok, want, wantOK)
		}
	}
	f("", 0, false)
	f("12", 12*time.Second, true)
	f("Thu, 01 Jan 2026 00:00:30 GMT", 30*time.Second, true)
	f("Wed, 31 Dec 2025 23:00:00 GMT", 0, true)
	f("soon", 0, false)
}
