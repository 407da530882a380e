package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// agent is a coding agent driven non-interactively (Gemini CLI, OpenCode,
// Qwen Code, pi): the client dialects it can speak, the name of its shell
// tool and how to run one prompt.
type agent struct {
	name string
	// dialects are the client dialects the agent speaks through slipstream,
	// its default first.
	dialects []string
	// shellTool is its command tool; shellArgs the arguments that run
	// `echo word` with it.
	shellTool string
	shellArgs func(word string) string
	// asksJSON: the agent asks for JSON output before its answer (Gemini
	// CLI's model routing), and every stub must see that request.
	asksJSON bool
	// need skips the test when the agent is not installed.
	need func(t *testing.T)
	// run runs prompt in dir against p, speaking dialect, asking for model
	// ("" for the agent's default), with a fresh HOME.
	run func(t *testing.T, p *proxy, dialect, model, dir, prompt string) cliResult
}

// agentHome is a fresh HOME with the XDG directories inside it, and the
// environment naming them.
func agentHome(t *testing.T) (home string, env []string) {
	t.Helper()
	home = t.TempDir()
	return home, []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
	}
}

// writeFile writes content to path, creating its directory.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// agentUpstreams are the stub dialects an agent is served by, each
// reached through the client dialect clientFor picks.
var agentUpstreams = []struct{ name, kind, api, dialect string }{
	{"chat", "openai", "chat", dialectChat},
	{"responses", "openai", "responses", dialectResponses},
	{"anthropic", "anthropic", "", dialectAnthropic},
	{"gemini", "gemini", "", dialectGemini},
}

// clientFor picks the client dialect for upstream number i: an agent
// that speaks every dialect (listed in agentUpstreams' order) meets each
// upstream through another dialect and uses each of its own once.
func (a *agent) clientFor(i int) string {
	return a.dialects[(i+1)%len(a.dialects)]
}

// agentMockReply is the mock's reply in the agent tests.
const agentMockReply = "PONG from the slipstream mock."

// testAgent runs the agent's plain reply and shell-tool round trip
// against the mock (in each of its dialects) and against a stub of every
// upstream dialect.
func testAgent(t *testing.T, a *agent) {
	a.need(t)
	// Each run has its own slipstream, stub, HOME and work directory.
	for _, d := range a.dialects {
		t.Run("mock/"+d+"/text", func(t *testing.T) { t.Parallel(); testAgentMockText(t, a, d) })
		t.Run("mock/"+d+"/tool", func(t *testing.T) { t.Parallel(); testAgentMockTool(t, a, d) })
	}
	for i, up := range agentUpstreams {
		client := a.clientFor(i)
		name := up.name + "/" + client
		t.Run(name+"/text", func(t *testing.T) { t.Parallel(); testAgentText(t, a, client, up.kind, up.api, up.dialect) })
		t.Run(name+"/tool", func(t *testing.T) { t.Parallel(); testAgentTool(t, a, client, up.kind, up.api, up.dialect) })
	}
}

// agentModel is the model an agent asks for in dialect: a Gemini name for
// the Gemini dialect, where a client may check it, else a made-up one.
func agentModel(dialect string) string {
	if dialect == dialectGemini {
		return "gemini-e2e"
	}
	return "gpt-e2e-" + dialect
}

// wantAgentOutput checks exit 0 and that the agent printed want.
func wantAgentOutput(t *testing.T, a *agent, res cliResult, want string, dump func() string) {
	t.Helper()
	if res.Code != 0 || !strings.Contains(string(res.Stdout), want) {
		t.Errorf("%s: exit %d; want exit 0 and output holding %q\nstdout:\n%s\nstderr:\n%s\n%s",
			a.name, res.Code, want, clip(res.Stdout, 3000), clip(res.Stderr, 3000), dump())
	}
}

func testAgentMockText(t *testing.T, a *agent, dialect string) {
	p := startSlipstream(t, mockConfig(agentMockReply))
	res := a.run(t, p, dialect, agentModel(dialect), t.TempDir(), "Reply with the word PONG.")
	wantAgentOutput(t, a, res, agentMockReply, p.Log)
}

// testAgentMockTool asks the mock for the agent's shell tool: the mock
// calls it with its harmless command, the agent runs it and the mock's
// second answer quotes what it printed.
func testAgentMockTool(t *testing.T, a *agent, dialect string) {
	p := startSlipstream(t, mockConfig(agentMockReply))
	res := a.run(t, p, dialect, agentModel(dialect), t.TempDir(), "call "+a.shellTool)
	wantAgentOutput(t, a, res, "The tool returned:", p.Log)
	wantAgentOutput(t, a, res, "slipstream-mock", p.Log)
}

// routingJSON is the stub's answer to a request for JSON output (Gemini
// CLI's model routing asks for this object).
const routingJSON = `{"reasoning":"A simple request.","model_choice":"flash"}`

// wantsJSONOutput reports whether a request in dialect asks for JSON
// output.
func wantsJSONOutput(dialect string, req map[string]any) bool {
	switch dialect {
	case dialectChat:
		return req["response_format"] != nil
	case dialectResponses:
		typ := asString(asMap(asMap(req["text"])["format"])["type"])
		return typ != "" && typ != "text"
	case dialectAnthropic:
		return asMap(req["output_config"])["format"] != nil
	default:
		return asString(asMap(req["generationConfig"])["responseMimeType"]) == "application/json"
	}
}

// wantLowerCaseTypes fails when a JSON-output request to an upstream
// other than Gemini carries Gemini's upper-case type names, which those
// APIs refuse.
func wantLowerCaseTypes(t *testing.T, dialect string, r *stubReq) {
	t.Helper()
	if dialect == dialectGemini {
		return
	}
	for _, ty := range []string{"OBJECT", "STRING", "INTEGER", "NUMBER", "BOOLEAN", "ARRAY"} {
		body := strings.ReplaceAll(string(r.Body), " ", "")
		if strings.Contains(body, `"type":"`+ty+`"`) {
			t.Errorf("a JSON-output request reached the %s upstream with type %q: %s", dialect, ty, clip(r.Body, 3000))
		}
	}
}

// agentDecide wraps an answer function: requests for JSON output get
// routingJSON (checked for upper-case types) and are counted in jsonCalls,
// others go to answer.
func agentDecide(t *testing.T, dialect string, jsonCalls *atomic.Int32, answer func(r *stubReq) stubAnswer) func(r *stubReq) stubAnswer {
	return func(r *stubReq) stubAnswer {
		if wantsJSONOutput(dialect, r.JSON) {
			jsonCalls.Add(1)
			wantLowerCaseTypes(t, dialect, r)
			return stubAnswer{Text: routingJSON}
		}
		return answer(r)
	}
}

// wantJSONCalls checks that an agent that asks for JSON output first did
// so, once: a failed JSON answer makes it retry.
func wantJSONCalls(t *testing.T, a *agent, n int32, s *stub) {
	t.Helper()
	if a.asksJSON && n != 1 {
		t.Errorf("%s made %d JSON-output requests upstream, want 1 (routing answered at once)\n%s", a.name, n, s.Dump())
	}
}

func testAgentText(t *testing.T, a *agent, client, kind, api, dialect string) {
	want := "PONG from the " + dialect + " stub, via " + client + "."
	var jsonCalls atomic.Int32
	s := newStub(t, dialect, agentDecide(t, dialect, &jsonCalls, func(r *stubReq) stubAnswer { return stubAnswer{Text: want} }))
	p := startSlipstream(t, upstreamConfig(kind, api, s.BaseURL()))
	res := a.run(t, p, client, agentModel(client), t.TempDir(), "Reply with the word PONG.")
	wantAgentOutput(t, a, res, want, s.Dump)
	wantJSONCalls(t, a, jsonCalls.Load(), s)
	main := mainRequests(t, s)
	if len(main) == 0 {
		return
	}
	if !strings.Contains(string(main[0].Body), "Reply with the word PONG.") {
		t.Errorf("upstream request lacks the prompt: %s", clip(main[0].Body, 2000))
	}
	if !contains(toolNames(dialect, main[0].JSON), a.shellTool) {
		t.Errorf("upstream request offers tools %v, want %s among them", toolNames(dialect, main[0].JSON), a.shellTool)
	}
	wantUpstreamAuth(t, dialect, main[0])
	wantUserAgent(t, client, dialect, main[0])
}

// wantUserAgent checks the upstream's User-Agent: a translated request
// names slipstream, then the client's own in parentheses; a same-dialect
// request keeps the client's.
func wantUserAgent(t *testing.T, client, dialect string, r *stubReq) {
	t.Helper()
	ua := r.Header.Get("User-Agent")
	translated := strings.HasPrefix(ua, "slipstream/") && strings.Contains(ua, " (") && strings.HasSuffix(ua, ")")
	if translated != (client != dialect) {
		t.Errorf("upstream User-Agent = %q for a %s client on a %s upstream; want slipstream/VERSION (client's) when translated, the client's own otherwise", ua, client, dialect)
	}
}

// testAgentTool: the stub calls the agent's shell tool to echo a word on
// the first turn, and on the second answers with text quoting the word
// when the tool's result came back holding it.
func testAgentTool(t *testing.T, a *agent, client, kind, api, dialect string) {
	word := "e2e-tool-ok-" + dialect
	const callID = "call_stub_shell_01"
	var mu sync.Mutex // guards quoted, set by the stub's handler
	quoted := false
	final := "The command printed " + word + ", all done."
	var jsonCalls atomic.Int32
	s := newStub(t, dialect, agentDecide(t, dialect, &jsonCalls, func(r *stubReq) stubAnswer {
		_, results := toolHistory(dialect, r.JSON)
		if len(results) > 0 {
			if !strings.Contains(results[0].Text, word) {
				return stubAnswer{Text: "The tool result lacked the word: " + results[0].Text}
			}
			if dialect != dialectGemini && strings.HasPrefix(strings.TrimSpace(results[0].Text), "{") {
				// A client's wrapper object ({name, content}, {output})
				// must reach another dialect as the tool's text (Gemini's
				// functionResponse.response is an object by rule).
				return stubAnswer{Text: "The tool result came as a JSON wrapper: " + results[0].Text}
			}
			mu.Lock()
			quoted = true
			mu.Unlock()
			return stubAnswer{Text: final}
		}
		if !contains(toolNames(dialect, r.JSON), a.shellTool) {
			return stubAnswer{Text: "A side call without tools."}
		}
		return stubAnswer{Tool: a.shellTool, ToolArgs: a.shellArgs(word), CallID: callID}
	}))
	p := startSlipstream(t, upstreamConfig(kind, api, s.BaseURL()))
	res := a.run(t, p, client, agentModel(client), t.TempDir(), "Run echo and tell me what it printed.")
	wantAgentOutput(t, a, res, final, s.Dump)
	wantJSONCalls(t, a, jsonCalls.Load(), s)
	main := mainRequests(t, s)
	if len(main) < 2 {
		t.Fatalf("upstream saw %d requests with tools, want 2 (tool call, then its result)\n%s", len(main), s.Dump())
	}
	last := main[len(main)-1]
	id := callID
	if calls, _ := toolHistory(dialect, last.JSON); client == dialectGemini && len(calls) == 1 {
		// A Gemini client need not keep the call's id (pi numbers its
		// own): the call and its result must pair with each other.
		id = calls[0].ID
	}
	wantToolRoundTrip(t, dialect, last, id, a.shellTool, word)
	mu.Lock()
	defer mu.Unlock()
	if !quoted {
		t.Errorf("the stub never saw the tool's result holding %q\n%s", word, s.Dump())
	}
}

// commandArgs are the {"command": ...} arguments of a shell tool.
func commandArgs(word string) string { return js(map[string]string{"command": "echo " + word}) }
