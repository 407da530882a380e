package server

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"slipstream/internal/testkit"
	"slipstream/server/accounts"
	"slipstream/server/config"
	"slipstream/server/price"
	"slipstream/server/store"
)

// Upstream answers with known usage, cache reads and writes and
// reasoning included, one per dialect.
const (
	costAnthropic = `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1000,"cache_creation_input_tokens":2000,"cache_read_input_tokens":5000,"cache_creation":{"ephemeral_5m_input_tokens":1500,"ephemeral_1h_input_tokens":500},"output_tokens":400}}`
	costChat      = `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1200,"completion_tokens":300,"total_tokens":1500,"prompt_tokens_details":{"cached_tokens":1024},"completion_tokens_details":{"reasoning_tokens":100}}}`
	costResponses = `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"m","output":[{"id":"msg_1","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"ok","annotations":[]}]}],"usage":{"input_tokens":5000,"input_tokens_details":{"cached_tokens":4096},"output_tokens":2000,"output_tokens_details":{"reasoning_tokens":1500},"total_tokens":7000}}`
	costGemini    = `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":11500,"cachedContentTokenCount":10000,"candidatesTokenCount":1000,"thoughtsTokenCount":10000,"totalTokenCount":22500},"modelVersion":"g","responseId":"r1"}`
)

// costUpstream answers each dialect's path with its reply above.
func costUpstream(t *testing.T) string {
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch p := r.URL.Path; {
		case p == "/v1/messages":
			io.WriteString(w, costAnthropic)
		case p == "/v1/chat/completions":
			io.WriteString(w, costChat)
		case p == "/v1/responses":
			io.WriteString(w, costResponses)
		case strings.HasSuffix(p, ":generateContent"):
			io.WriteString(w, costGemini)
		default:
			http.NotFound(w, r)
		}
	}))
	return up.URL
}

// usd is pico picodollars as the access log writes it.
func usd(pico int64) string { return string(appendUSD(nil, pico)) }

// TestCostPerProviderInAccessLog: for each provider, a request with known
// usage (cache reads and writes, reasoning) costs exactly what the price
// table says, priced by the upstream model after the alias, and the
// cost_usd of its access-log line and slipstream_cost_usd_total say so.
// A model without a price is logged unpriced and counted as such, never
// as free.
func TestCostPerProviderInAccessLog(t *testing.T) {
	t.Parallel()
	up := costUpstream(t)
	yml := fmt.Sprintf(`keys:
  - {name: ci, key: sk-client}
providers:
  - {name: a, kind: anthropic, base_url: %q, keys: [k], models: ["claude-*", "mystery-*"]}
  - {name: c, kind: openai, base_url: %q, keys: [k], models: ["gpt-4o*"]}
  - {name: r, kind: openai, api: responses, base_url: %q, keys: [k], models: ["gpt-5*"]}
  - {name: g, kind: gemini, base_url: %q, keys: [k], models: ["gemini-*"]}
aliases: {smart: a/claude-sonnet-4-5-20250929}
prices:
  - {model: "gpt-4o", input: 2, output: 8, cache_read: 0.5}
timeouts: {keepalive: 0s}
log: {access: true, format: json}
`, up, up+"/v1", up+"/v1", up)
	var logs testkit.Buffer
	base := serveConfig(t, parseConfig(t, yml, ""), &logs)
	auth := []string{"Authorization", "Bearer sk-client", "X-Goog-Api-Key", "sk-client"}
	hi := `"messages":[{"role":"user","content":"hi"}]`
	var total int64
	f := func(path, body, provider string, pico int64, kind string) {
		t.Helper()
		status, h, b := post(t, base+path, body, auth...)
		if status != 200 {
			t.Fatalf("%s: %d %s", path, status, b)
		}
		line := waitLogLine(t, &logs, h.Get(requestIDHeader))
		want := usd(pico)
		if kind == "unpriced" {
			want = ""
		} else {
			total += pico
		}
		if line["cost_usd"] != want || line["cost_kind"] != kind || line["provider"] != provider {
			t.Fatalf("%s: cost_usd %v %v from %v, want %s %s: %v", path, line["cost_usd"], line["cost_kind"], line["provider"], want, kind, line)
		}
	}
	// Anthropic input_tokens exclude the cache: 1000 fresh at $3, 1500
	// written for 5 minutes at $3.75 and 500 for an hour at $6, 5000 read
	// at $0.30, 400 out at $15 (the alias's dated snapshot is Sonnet 4.5).
	f("/v1/messages", `{"model":"smart","max_tokens":500,`+hi+`}`, "a",
		1000*3_000_000+1500*3_750_000+500*6_000_000+5000*300_000+400*15_000_000, "api")
	// OpenAI prompt_tokens include the 1024 cached, completion_tokens the
	// 100 reasoning; gpt-4o is overridden by prices: to $2 / $0.50 / $8.
	f("/v1/chat/completions", `{"model":"gpt-4o-2024-08-06",`+hi+`}`, "c",
		176*2_000_000+1024*500_000+300*8_000_000, "api")
	// Responses on gpt-5-mini: $0.25, $0.025 cached, $2 out.
	f("/v1/responses", `{"model":"gpt-5-mini","input":"hi"}`, "r",
		904*250_000+4096*25_000+2000*2_000_000, "api")
	// Gemini: promptTokenCount includes the cached content, output is
	// candidates plus thoughts: 2.5 Pro at $1.25, $0.125, $10.
	f("/v1beta/models/gemini-2.5-pro:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, "g",
		1500*1_250_000+10_000*125_000+11_000*10_000_000, "api")
	// A model no table prices.
	f("/v1/messages", `{"model":"mystery-1","max_tokens":5,`+hi+`}`, "a", 0, "unpriced")

	m := scrape(t, base+"/metrics", "sk-client")
	var sum float64
	for k, v := range m {
		if strings.HasPrefix(k, "slipstream_cost_usd_total{") && strings.Contains(k, `key="ci"`) {
			sum += v
		}
	}
	if want := float64(total) / 1e12; sum < want*(1-1e-9) || sum > want*(1+1e-9) {
		t.Fatalf("slipstream_cost_usd_total sums to %v, want %v", sum, want)
	}
	if n := m[`slipstream_unpriced_requests_total{provider="a",model="mystery-*",key="ci"}`]; n != 1 {
		t.Fatalf("unpriced requests: %v, want 1 (%v)", n, m)
	}
	if v, ok := m[`slipstream_cost_usd_total{provider="a",model="mystery-*",key="ci",kind="api"}`]; ok && v != 0 {
		t.Fatalf("the unpriced model was counted as spend: %v", v)
	}
}

// moneyConfig is reserveConfig's Anthropic provider at up with key "ci"
// under policy, model m1 priced at $1000 per million tokens in and out:
// each slowUpstream request (5 in, 3 out) costs $0.008, and its
// reservation (about 7 in, 16 out) more than a $0.02 budget leaves once
// one is in flight, as in the token budget tests.
func moneyConfig(policy, up, extra string) string {
	return reserveConfig(policy, up, "prices:\n  - {model: m1, input: 1000, output: 1000}\n"+extra)
}

const moneyUse = 8_000_000 // nano-dollars per request

// TestBudgetUSDRefusedWhenSpent: a key with budget_usd is served until
// its spend reaches the budget, then refused 429 with Retry-After to the
// end of its period and a message naming the money budget, in the
// client's dialect; a model without a price is refused 403 naming
// budget_usd and the model.
func TestBudgetUSDRefusedWhenSpent(t *testing.T) {
	t.Parallel()
	up := &slowUpstream{}
	u := newUpstream(t, up)
	base, s := startServer(t, moneyConfig("budget_usd: 0.02", u.URL, ""), "")
	passed := 0
	for i := 0; i < 10; i++ {
		status, h, b := post(t, base+"/v1/messages", reserveBody, "X-Api-Key", "sk-client")
		if status == 429 {
			if h.Get("Retry-After") != "86400" || !strings.Contains(string(b), "money budget (budget_usd)") || !strings.Contains(string(b), `"type":"error"`) {
				t.Fatalf("refusal: retry-after %q %s", h.Get("Retry-After"), b)
			}
			break
		}
		if status != 200 {
			t.Fatalf("request %d: %d %s", i+1, status, b)
		}
		passed++
		waitIdle(t, s)
	}
	if passed != 3 { // $0.008 each: 0, 0.008, 0.016 are below $0.02
		t.Fatalf("%d requests passed a budget of $0.02 at $0.008 each, want 3", passed)
	}
	if used := s.store.Budget("usd:ci", store.Daily).Used(s.now()); used != 3*moneyUse {
		t.Fatalf("the money budget holds %d nano-dollars, want %d", used, 3*moneyUse)
	}
	if sp := s.keys.Spend(s.keys.ByName("ci"), s.now()); sp.UsedNanos != 3*moneyUse || sp.BudgetNanos != 20_000_000 {
		t.Fatalf("Spend: %+v", sp)
	}
	status, _, b := post(t, base+"/v1/messages", `{"model":"m2","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, "X-Api-Key", "sk-client")
	if status != 403 || !strings.Contains(string(b), "budget_usd") || !strings.Contains(string(b), "m2 has no price") {
		t.Fatalf("unpriced model: %d %s", status, b)
	}
	if calls := up.calls.Load(); calls != 3 {
		t.Fatalf("the upstream was called %d times", calls)
	}
}

// TestBudgetUSDHoldsUnderConcurrency: the money twin of
// TestKeyLimitsHoldUnderConcurrency: 100 concurrent requests against a
// budget_usd of $0.02 pass no more than the budget plus one request's
// cost, and the budget then holds exactly what the passed requests cost.
func TestBudgetUSDHoldsUnderConcurrency(t *testing.T) {
	t.Parallel()
	up := &slowUpstream{hold: 300 * time.Millisecond}
	u := newUpstream(t, up)
	base, s := startServer(t, moneyConfig("budget_usd: 0.02", u.URL, ""), "")
	passed := burst(t, 100, base)
	checkHeld(t, "budget_usd: 0.02", passed, up.calls.Load())
	waitIdle(t, s)
	if held := s.store.Budget("usd:ci", store.Daily).Used(s.now()); held != int64(passed)*moneyUse {
		t.Fatalf("the key holds %d nano-dollars after %d requests of %d: a reservation was not settled once", held, passed, moneyUse)
	}
}

// TestBudgetUSDHoldsUnderConcurrencyRedis: the same across two replicas
// sharing a real redis-server, which ends up holding exactly the money
// the passed requests cost.
func TestBudgetUSDHoldsUnderConcurrencyRedis(t *testing.T) {
	t.Parallel()
	r := startReplicas(t, "res", func(up, extra string) string { return moneyConfig("budget_usd: 0.02", up, extra) })
	passed := burst(t, 100, r.a, r.b)
	checkHeld(t, "budget_usd over redis", passed, r.up.calls.Load())
	key := fmt.Sprintf("res:budget:usd:ci:%d", r.sa.now().Unix()/86400)
	r.settled(t, key, fmt.Sprint(int64(passed)*moneyUse))
}

// TestAppendUSD: cost_usd is exact to the picodollar, without trailing
// zeros or an exponent.
func TestAppendUSD(t *testing.T) {
	f := func(pico int64, want string) {
		t.Helper()
		if got := usd(pico); got != want {
			t.Fatalf("appendUSD(%d) = %q, want %q", pico, got, want)
		}
	}
	f(0, "0")
	f(1, "0.000000000001")
	f(10_500_000_000, "0.0105")
	f(12e12, "12")
	f(1_234_567_890_123_456, "1234.567890123456")
	_ = price.Cost{}
}

// TestAccountCostIsAPIEquivalent: a request a subscription account served
// costs what the API would have charged for its usage (Sonnet 4.5: 3 in
// at $3, 1 out at $15), marked api_equivalent in the access log and in
// slipstream_cost_usd_total.
func TestAccountCostIsAPIEquivalent(t *testing.T) {
	t.Parallel()
	rig := newAccountRig(t, accounts.TypeClaude, "max1")
	rig.startWith(config.KindClaudeAccount, "log: {access: true, format: json}", "")
	if status, body := rig.claude(claudeCodeBody); status != 200 {
		t.Fatalf("status %d body %s", status, body)
	}
	rig.logs.WaitFor(t, 5*time.Second, `"cost_kind":"api_equivalent"`)
	if want := `"cost_usd":"` + usd(3*3_000_000+1*15_000_000) + `"`; !strings.Contains(rig.logs.String(), want) {
		t.Fatalf("the access log lacks %s:\n%s", want, rig.logs.String())
	}
	m := scrape(t, rig.base+"/metrics", "")
	if v := m[`slipstream_cost_usd_total{provider="acct",model="*",key="",kind="api_equivalent"}`]; v != 24e-6 {
		t.Fatalf("api_equivalent cost %v: %v", v, m)
	}
}

// TestReloadRepricesAndKeepsSpend: a reload that changes prices: prices
// the requests admitted after it at the new rates, and keeps what the
// key spent under the old ones against its budget_usd.
func TestReloadRepricesAndKeepsSpend(t *testing.T) {
	t.Parallel()
	up := &slowUpstream{}
	u := newUpstream(t, up)
	yml := moneyConfig("budget_usd: 1", u.URL, "")
	base, s := startServer(t, yml, "")
	if status, _, b := post(t, base+"/v1/messages", reserveBody, "X-Api-Key", "sk-client"); status != 200 {
		t.Fatalf("%d %s", status, b)
	}
	waitIdle(t, s)
	if err := s.Reload(parseConfig(t, strings.Replace(yml, "input: 1000, output: 1000", "input: 2000, output: 1000", 1), "")); err != nil {
		t.Fatal(err)
	}
	if status, _, b := post(t, base+"/v1/messages", reserveBody, "X-Api-Key", "sk-client"); status != 200 {
		t.Fatalf("%d %s", status, b)
	}
	waitIdle(t, s)
	// $0.008 at the old prices, then 5 in at $2000 and 3 out at $1000.
	if used := s.store.Budget("usd:ci", store.Daily).Used(s.now()); used != moneyUse+13_000_000 {
		t.Fatalf("the money budget holds %d nano-dollars, want %d", used, moneyUse+13_000_000)
	}
}
