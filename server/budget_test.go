//go:build !race

package server

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"slipstream/codec"
	"slipstream/codec/translate"
	"slipstream/tokenize"
)

// Heap budgets per route (docs/ARCHITECTURE.md, memory model), each measured over one 2 MB
// request through the real server after a warm-up, as the heap the whole
// process allocated (runtime.MemStats.TotalAlloc) per request. The
// upstream and the client are raw loopback peers that allocate nothing.
// The GC is off while measuring, so nothing is freed: the figure also
// bounds the peak live heap a request adds.
const (
	budgetSlack = 64 << 10 // every budget's fixed part
)

func sameBudget(body int) uint64       { return budgetSlack + uint64(body)/20 }    // 64 KiB + 0.05 x body
func translatedBudget(body int) uint64 { return budgetSlack + uint64(body)*11/10 } // 64 KiB + 1.1 x body
const countBudget = budgetSlack        // 64 KiB

var budgetDialects = []struct {
	d      codec.Dialect
	prefix string // model prefix routed to the provider of this dialect
	kind   string
	reply  string
}{
	{codec.DialectAnthropic, "a-", "kind: anthropic", anthropicReply},
	{codec.DialectChat, "c-", "kind: openai, api: chat", chatReply},
	{codec.DialectResponses, "r-", "kind: openai, api: responses", responsesReply},
	{codec.DialectGemini, "g-", "kind: gemini", geminiReply},
}

// budgetServer serves one provider per dialect, each on its own raw
// upstream, chosen by model prefix.
func budgetServer(t *testing.T) string {
	var yml strings.Builder
	yml.WriteString("providers:\n")
	for _, bd := range budgetDialects {
		up := rawUpstream(t, httpReply("application/json", bd.reply))
		base := up
		if bd.d == codec.DialectChat || bd.d == codec.DialectResponses {
			base += "/v1"
		}
		fmt.Fprintf(&yml, "  - {name: %s, %s, base_url: %q, keys: [k], models: [%q]}\n", strings.TrimSuffix(bd.prefix, "-"), bd.kind, base, bd.prefix+"*")
	}
	yml.WriteString("timeouts: {keepalive: 0s}\n")
	base, _ := startServer(t, yml.String(), "")
	return base
}

// session2MB is a ~2 MB Anthropic agent session: a system prompt, tools,
// and turns of text, tool calls and large tool results.
func session2MB() []byte {
	var b bytes.Buffer
	b.WriteString(`{"model":"MODEL","max_tokens":4096,"stream":false,"system":[{"type":"text","text":"You are a coding agent.\nBe careful."}],"tools":[{"name":"read","description":"Read a file","input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}],"messages":[`)
	result := strings.Repeat(`func handler(w http.ResponseWriter) {\n\tw.Write([]byte(\"ok\"))\n}\n`, 120)
	for i := 0; b.Len() < 2<<20; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"role":"user","content":[{"type":"text","text":"step %d: read the next file"}]},`, i)
		fmt.Fprintf(&b, `{"role":"assistant","content":[{"type":"text","text":"Reading."},{"type":"tool_use","id":"toolu_%04d","name":"read","input":{"path":"/src/f%d.go"}}]},`, i, i)
		fmt.Fprintf(&b, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%04d","content":"%s"}]}`, i, result)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// clientBody writes the session as a request of dialect d for model.
func clientBody(t *testing.T, session []byte, d codec.Dialect, model string) []byte {
	body := bytes.Replace(session, []byte(`"MODEL"`), []byte(`"`+model+`"`), 1)
	if d == codec.DialectAnthropic {
		return body
	}
	var r codec.Request
	if err := translate.DecodeRequest(codec.DialectAnthropic, &r, body); err != nil {
		t.Fatal(err)
	}
	out, err := translate.AppendRequest(d, nil, &r, []byte(model))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func pathFor(d codec.Dialect, model string, count bool) string {
	switch d {
	case codec.DialectAnthropic:
		if count {
			return "/v1/messages/count_tokens"
		}
		return "/v1/messages"
	case codec.DialectChat:
		return "/v1/chat/completions"
	case codec.DialectResponses:
		if count {
			return "/v1/responses/input_tokens"
		}
		return "/v1/responses"
	}
	if count {
		return "/v1beta/models/" + model + ":countTokens"
	}
	return "/v1beta/models/" + model + ":generateContent"
}

// allocPerRequest sends req a few times to warm every pool, then measures
// TotalAlloc per request with the GC off (a collection would empty the
// pools, which is not the steady state being measured). It reports the
// least of three rounds: sync.Pool keeps a returned object per P, so a
// request that lands on a P whose pool is still cold pays once for
// warming it, which is not what the budget is about.
func allocPerRequest(t *testing.T, base string, req []byte) uint64 {
	rc := dialRaw(t, base)
	for i := 0; i < 3; i++ {
		if status, got := rc.do(t, req); status != 200 {
			t.Fatalf("status %d: %s", status, clipT(got))
		}
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const n = 4
	least := ^uint64(0)
	for round := 0; round < 3; round++ {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := 0; i < n; i++ {
			rc.do(t, req)
		}
		runtime.ReadMemStats(&after)
		least = min(least, (after.TotalAlloc-before.TotalAlloc)/n)
	}
	return least
}

// TestRouteHeapBudgets drives a 2 MB request through every route: the
// four same-dialect routes, all twelve translated pairs, and count_tokens
// on the three dialects that have it.
func TestRouteHeapBudgets(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 2 MB bodies")
	}
	base := budgetServer(t)
	session := session2MB()
	for _, client := range budgetDialects {
		for _, up := range budgetDialects {
			model := up.prefix + "model"
			body := clientBody(t, session, client.d, model)
			budget, kind := translatedBudget(len(body)), "translated"
			if client.d == up.d {
				budget, kind = sameBudget(len(body)), "same-dialect"
			}
			name := client.d.String() + "_to_" + up.d.String()
			t.Run(name, func(t *testing.T) {
				got := allocPerRequest(t, base, rawRequest(pathFor(client.d, model, false), body))
				t.Logf("%s %d-byte body: %d bytes of heap per request (%.3fx; budget %d)", kind, len(body), got, float64(got)/float64(len(body)), budget)
				if got > budget {
					t.Errorf("%s: %d bytes per request, over the budget of %d", kind, got, budget)
				}
			})
		}
	}
	for _, d := range []codec.Dialect{codec.DialectAnthropic, codec.DialectResponses, codec.DialectGemini} {
		model := "a-model"
		body := clientBody(t, session, d, model)
		t.Run("count_tokens_"+d.String(), func(t *testing.T) {
			got := allocPerRequest(t, base, rawRequest(pathFor(d, model, true), body))
			t.Logf("count_tokens %d-byte body: %d bytes of heap per request (budget %d)", len(body), got, countBudget)
			if got > countBudget {
				t.Errorf("count_tokens: %d bytes per request, over the budget of %d", got, countBudget)
			}
		})
	}
}

// TestTokenizerBuiltOncePerProcess: counting on every route, again and
// again, builds each encoding's table at most once.
func TestTokenizerBuiltOncePerProcess(t *testing.T) {
	t.Parallel()
	base, _ := startServer(t, "providers:\n  - {name: m, kind: mock, models: [\"*\"]}\n", "")
	counts := []struct{ path, body string }{
		{"/v1/messages/count_tokens", `{"model":"claude-x","messages":[{"role":"user","content":"hi"}]}`},
		{"/v1/responses/input_tokens", `{"model":"gpt-5","input":"hi"}`},
		{"/v1beta/models/gemini-x:countTokens", `{"contents":[{"parts":[{"text":"hi"}]}]}`},
		{"/v1/responses/input_tokens", `{"model":"gpt-4","input":"hi"}`}, // cl100k
		{"/v1/messages", `{"model":"mock","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`},
	}
	for round := 0; round < 3; round++ {
		for _, c := range counts {
			if status, _, got := post(t, base+c.path, c.body); status != 200 {
				t.Fatalf("%s: %d %s", c.path, status, got)
			}
		}
		if n := tokenize.TableBuilds(); n > 2 {
			t.Fatalf("round %d: %d tokenizer tables built, want at most one per encoding (2)", round, n)
		}
	}
}
