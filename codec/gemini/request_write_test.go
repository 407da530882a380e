package gemini

import (
	"testing"

	"github.com/tidwall/gjson"

	"slipstream/codec"
)

// req builds a neutral request in tests.
type req struct{ codec.Request }

func (r *req) msg(role codec.Role, parts ...codec.Part) *req {
	r.AddMessage(role)
	for _, p := range parts {
		r.AddPart(p)
	}
	return r
}

func text(s string) codec.Part { return codec.Part{Kind: codec.PartText, Text: []byte(s)} }

func call(id, name, args string, isString bool) codec.Part {
	return codec.Part{Kind: codec.PartToolCall, ID: []byte(id), Name: []byte(name), Args: []byte(args), ArgsString: isString}
}

func result(id string, isErr bool, children int) codec.Part {
	return codec.Part{Kind: codec.PartToolResult, ID: []byte(id), IsError: isErr, Children: children}
}

func thinking(txt, sig string) codec.Part {
	return codec.Part{Kind: codec.PartThinking, Text: []byte(txt), Signature: []byte(sig)}
}

func TestAppendRequest(t *testing.T) {
	f := func(r *req, want string) {
		t.Helper()
		got, err := AppendRequest(nil, &r.Request, []byte("ignored-model"))
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if !gjson.ValidBytes(got) {
			t.Fatalf("invalid JSON: %s", got)
		}
		if string(got) != want {
			t.Fatalf("got:\n%s\nwant:\n%s", got, want)
		}
	}

	// Plain text, no options.
	f(new(req).msg(codec.RoleUser, text("Hi")),
		`{"contents":[{"role":"user","parts":[{"text":"Hi"}]}]}`)

	// A Claude Code shaped tool round trip: system pieces joined, the
	// Gemini signature that rode an empty thinking block goes back on its
	// call, the result is named from the call, images in a result follow it.
	r := new(req)
	r.System = [][]byte{[]byte("You are Claude Code."), []byte("Be brief.")}
	r.msg(codec.RoleUser, text("List files"))
	r.msg(codec.RoleAssistant, thinking("I should run ls", ""), thinking("", "CiQB"), call("toolu_01", "Bash", `{"command":"ls"}`, false),
		call("toolu_02", "Read", `{"path":"a.png"}`, false))
	r.msg(codec.RoleUser, result("toolu_01", false, 2), text("a.go"), text("b.go"),
		result("toolu_02", false, 1), codec.Part{Kind: codec.PartImage, MediaType: []byte("image/png"), Text: []byte("iVBO")},
		text("Thanks"))
	r.Tools = []codec.Tool{{Name: []byte("Bash"), Description: []byte("Run \\\"cmd\\\""), Schema: []byte(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
		{Name: []byte("Read")}}
	r.ToolChoice = codec.ToolChoice{Mode: codec.ToolChoiceTool, Name: []byte("Bash")}
	r.MaxTokens = 64000
	r.Temperature = []byte("1")
	r.Reasoning = codec.Reasoning{Budget: 4096, Summary: true}
	r.Stop = [][]byte{[]byte("END")}
	f(r, `{"contents":[{"role":"user","parts":[{"text":"List files"}]},`+
		`{"role":"model","parts":[{"functionCall":{"name":"Bash","args":{"command":"ls"}},"thoughtSignature":"CiQB"},`+
		`{"functionCall":{"name":"Read","args":{"path":"a.png"}}}]},`+
		`{"role":"user","parts":[{"functionResponse":{"name":"Bash","response":{"output":"a.go\nb.go"}}},`+
		`{"functionResponse":{"name":"Read","response":{"output":""}}},{"inlineData":{"mimeType":"image/png","data":"iVBO"}},{"text":"Thanks"}]}],`+
		`"systemInstruction":{"parts":[{"text":"You are Claude Code.\n\nBe brief."}]},`+
		`"tools":[{"functionDeclarations":[{"name":"Bash","description":"Run \"cmd\"","parametersJsonSchema":{"type":"object","properties":{"command":{"type":"string"}}}},{"name":"Read"}]}],`+
		`"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["Bash"]}},`+
		`"generationConfig":{"maxOutputTokens":64000,"temperature":1,"stopSequences":["END"],"thinkingConfig":{"thinkingBudget":4096,"includeThoughts":true}}}`)

	// Chat/Codex shaped history: string args (valid, empty, invalid), calls
	// without signatures get the sentinel, error results, a mid-conversation
	// system message merges into the user turn, data and plain URLs, a
	// custom tool and its call.
	r = new(req)
	r.msg(codec.RoleUser, text("go"), codec.Part{Kind: codec.PartImage, URL: []byte("data:image/jpeg;base64,/9j/")},
		codec.Part{Kind: codec.PartImage, URL: []byte("https://x/y.png")})
	r.msg(codec.RoleAssistant, text("Running."), call("call_a", "f", `"{\"a\":[1,2]}"`, true), call("call_b", "g", `""`, true),
		call("call_c", "h", `"{oops"`, true))
	r.msg(codec.RoleUser, result("call_a", false, 1), text("ok"), result("call_b", true, 1), text("boom"), result("call_c", false, 0))
	r.msg(codec.RoleSystem, text("Be careful."))
	r.msg(codec.RoleAssistant, codec.Part{Kind: codec.PartToolCall, ID: []byte("call_d"), Name: []byte("apply_patch"), Args: []byte(`"*** Begin Patch\n"`), ArgsString: true, Custom: true})
	r.msg(codec.RoleUser, result("call_d", false, 1), text("Done!"))
	r.Tools = []codec.Tool{{Kind: codec.ToolCustom, Name: []byte("apply_patch"), Description: []byte("Patch files."),
		Format: []byte(`{"type":"grammar","syntax":"lark","definition":"start: x\n"}`)}}
	r.ToolChoice.Mode = codec.ToolChoiceAuto
	r.Format = codec.Format{Kind: codec.FormatJSONSchema, Name: []byte("x"), Schema: []byte(`{"type":"object"}`)}
	r.Reasoning = codec.Reasoning{Effort: codec.EffortHigh}
	f(r, `{"contents":[{"role":"user","parts":[{"text":"go"},{"inlineData":{"mimeType":"image/jpeg","data":"/9j/"}},{"fileData":{"fileUri":"https://x/y.png"}}]},`+
		`{"role":"model","parts":[{"text":"Running."},{"functionCall":{"name":"f","args":{"a":[1,2]}},"thoughtSignature":"skip_thought_signature_validator"},`+
		`{"functionCall":{"name":"g","args":{}},"thoughtSignature":"skip_thought_signature_validator"},`+
		`{"functionCall":{"name":"h","args":{"_raw":"{oops"}},"thoughtSignature":"skip_thought_signature_validator"}]},`+
		`{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"output":"ok"}}},{"functionResponse":{"name":"g","response":{"error":"boom"}}},`+
		`{"functionResponse":{"name":"h","response":{"output":""}}},{"text":"Be careful."}]},`+
		`{"role":"model","parts":[{"functionCall":{"name":"apply_patch","args":{"input":"*** Begin Patch\n"}},"thoughtSignature":"skip_thought_signature_validator"}]},`+
		`{"role":"user","parts":[{"functionResponse":{"name":"apply_patch","response":{"output":"Done!"}}}]}],`+
		`"tools":[{"functionDeclarations":[{"name":"apply_patch","description":"Patch files.\n\nThe input must follow this grammar:\nstart: x\n",`+
		`"parametersJsonSchema":{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}}]}],`+
		`"toolConfig":{"functionCallingConfig":{"mode":"AUTO"}},`+
		`"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"object"},"thinkingConfig":{"thinkingBudget":24576}}}`)

	// A lone signature at the end of a turn becomes an empty signed text
	// part; reasoning off; summary without a level.
	r = new(req)
	r.msg(codec.RoleAssistant, text("Hello"), thinking("", "S9"))
	r.Reasoning = codec.Reasoning{Effort: codec.EffortNone, Summary: true}
	f(r, `{"contents":[{"role":"model","parts":[{"text":"Hello"},{"text":"","thoughtSignature":"S9"}]}],"generationConfig":{"thinkingConfig":{"thinkingBudget":0}}}`)
	r = new(req)
	r.msg(codec.RoleUser, text("x"))
	r.Reasoning = codec.Reasoning{Summary: true}
	r.Format.Kind = codec.FormatJSONObject
	r.TopP, r.TopK = []byte("0.5"), []byte("3")
	f(r, `{"contents":[{"role":"user","parts":[{"text":"x"}]}],"generationConfig":{"topP":0.5,"topK":3,"responseMimeType":"application/json","thinkingConfig":{"includeThoughts":true}}}`)
	// Empty request: contents is still written.
	f(new(req), `{"contents":[]}`)
}

func TestAppendRequestRejectsN(t *testing.T) {
	r := new(req).msg(codec.RoleUser, text("x"))
	r.N = 2
	if _, err := AppendRequest(nil, &r.Request, nil); err != ErrMultipleCandidates {
		t.Fatalf("got %v", err)
	}
}

// TestRequestRoundTrip reads Gemini requests and writes them back: what a
// Gemini client sends must survive (ids aside, which Gemini does not need).
func TestRequestRoundTrip(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		var r codec.Request
		if err := DecodeRequest(&r, []byte(in)); err != nil {
			t.Fatal(err)
		}
		got, err := AppendRequest(nil, &r, nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Fatalf("got:\n%s\nwant:\n%s", got, want)
		}
	}
	f(`{"contents":[{"role":"user","parts":[{"text":"Weather?"}]},{"role":"model","parts":[{"functionCall":{"name":"w","args":{"c":"P"}},"thoughtSignature":"CiQB"},{"functionCall":{"name":"w","args":{"c":"R"}}}]},`+
		`{"role":"user","parts":[{"functionResponse":{"name":"w","response":{"output":"18C"}}},{"functionResponse":{"name":"w","response":{"t":21}}}]}],`+
		`"systemInstruction":{"parts":[{"text":"terse"}]},"generationConfig":{"thinkingConfig":{"thinkingBudget":-1,"includeThoughts":true}}}`,
		`{"contents":[{"role":"user","parts":[{"text":"Weather?"}]},{"role":"model","parts":[{"functionCall":{"name":"w","args":{"c":"P"}},"thoughtSignature":"CiQB"},{"functionCall":{"name":"w","args":{"c":"R"}}}]},`+
			`{"role":"user","parts":[{"functionResponse":{"name":"w","response":{"output":"18C"}}},{"functionResponse":{"name":"w","response":{"output":"{\"t\":21}"}}}]}],`+
			`"systemInstruction":{"parts":[{"text":"terse"}]},"generationConfig":{"thinkingConfig":{"thinkingBudget":-1,"includeThoughts":true}}}`)
}

// TestAgentRequestGolden reads a Gemini CLI shaped session (snake_case,
// signatures, OpenAPI schemas, an error result) and writes it back.
func TestAgentRequestGolden(t *testing.T) {
	var r codec.Request
	if err := DecodeRequest(&r, readTestdata(t, "request_agent.json")); err != nil {
		t.Fatal(err)
	}
	golden(t, "roundtrip_agent.txt", []byte(dumpRequest(&r)))
	out, err := AppendRequest(nil, &r, nil)
	if err != nil || !gjson.ValidBytes(out) {
		t.Fatalf("%v: %s", err, out)
	}
	golden(t, "roundtrip_agent.json", out)
}

// TestAppendRequestThinkingLevel: Gemini 3 models take thinkingLevel; an
// effort without a budget is written as the level every Gemini 3 model
// accepts (LOW or HIGH), a budget stays a budget, older models get budgets.
func TestAppendRequestThinkingLevel(t *testing.T) {
	f := func(model string, rs codec.Reasoning, want string) {
		t.Helper()
		r := codec.Request{Reasoning: rs}
		out, err := AppendRequest(nil, &r, []byte(model))
		if err != nil {
			t.Fatal(err)
		}
		if got := gjson.GetBytes(out, "generationConfig.thinkingConfig").Raw; got != want {
			t.Errorf("%s %+v: thinkingConfig = %s, want %s", model, rs, got, want)
		}
	}
	f("gemini-3-pro-preview", codec.Reasoning{Effort: codec.EffortHigh}, `{"thinkingLevel":"HIGH"}`)
	f("gemini-3-flash-preview", codec.Reasoning{Effort: codec.EffortMedium}, `{"thinkingLevel":"HIGH"}`)
	f("models/gemini-3-pro-preview", codec.Reasoning{Effort: codec.EffortLow, Summary: true}, `{"thinkingLevel":"LOW","includeThoughts":true}`)
	f("gemini-3-pro-preview", codec.Reasoning{Effort: codec.EffortNone}, `{"thinkingLevel":"LOW"}`)
	f("gemini-3-pro-preview", codec.Reasoning{Effort: codec.EffortMinimal}, `{"thinkingLevel":"LOW"}`)
	f("gemini-3-pro-preview", codec.Reasoning{Effort: codec.EffortHigh, Budget: 4096}, `{"thinkingBudget":4096}`)
	f("gemini-3-pro-preview", codec.Reasoning{Budget: -1}, `{"thinkingBudget":-1}`)
	f("gemini-2.5-flash", codec.Reasoning{Effort: codec.EffortHigh}, `{"thinkingBudget":24576}`)
	f("", codec.Reasoning{Effort: codec.EffortLow}, `{"thinkingBudget":2048}`)
}
