package translate

import (
	"bytes"
	"fmt"
	"testing"

	"slipstream/codec"
)

// TestRoundTrip translates an Anthropic agent request to another dialect
// and back (Anthropic -> X request, read as an X client request, written
// as an Anthropic request, read again) and checks what survives.
//
// What the formats allow:
//   - Responses keeps everything: tool ids (call_id), tool inputs, and
//     thinking text + signature (reasoning summary_text + encrypted_content).
//   - Chat keeps tool ids and inputs; it has no field for reasoning replay,
//     so thinking blocks and their signatures are lost (a Chat client cannot
//     send them back either).
//   - Gemini keeps tool inputs and the id (functionCall.id /
//     functionResponse.id); a signature is provider-bound (api-formats.md
//     F.8: never send one provider's token to another), so Anthropic
//     thinking does not survive the trip through Gemini's thoughtSignature.
func TestRoundTrip(t *testing.T) {
	type keeps struct{ ids, inputs, thinking bool }
	f := func(via codec.Dialect, want keeps) {
		t.Helper()
		if !Supported(via) || !Supported(codec.DialectAnthropic) {
			t.Logf("%s: not wired yet", via)
			return
		}
		src := readFile(t, "roundtrip/request.anthropic.json")
		orig := new(codec.Request)
		if err := DecodeRequest(codec.DialectAnthropic, orig, src); err != nil {
			t.Fatal(err)
		}
		mid, err := AppendRequest(via, nil, orig, upstreamModels[via])
		if err != nil {
			t.Fatalf("cannot write %s: %s", via, err)
		}
		r2 := new(codec.Request)
		if err := DecodeRequest(via, r2, mid); err != nil {
			t.Fatalf("cannot read back %s: %s\n%s", via, err, mid)
		}
		back, err := AppendRequest(codec.DialectAnthropic, nil, r2, upstreamModels[codec.DialectAnthropic])
		if err != nil {
			t.Fatalf("cannot write Anthropic from %s: %s", via, err)
		}
		got := new(codec.Request)
		if err := DecodeRequest(codec.DialectAnthropic, got, back); err != nil {
			t.Fatalf("cannot read the round trip: %s\n%s", err, back)
		}
		check := func(what string, keep bool, a, b string) {
			t.Helper()
			if keep && a != b {
				t.Errorf("via %s: %s changed:\n got %s\nwant %s\nmiddle: %s\nback: %s", via, what, b, a, mid, back)
			}
		}
		check("tool ids", want.ids, toolIDs(orig), toolIDs(got))
		check("tool inputs", want.inputs, toolInputs(t, orig), toolInputs(t, got))
		check("thinking", want.thinking, thinking(orig), thinking(got))
	}
	f(codec.DialectResponses, keeps{ids: true, inputs: true, thinking: true})
	f(codec.DialectChat, keeps{ids: true, inputs: true})
	f(codec.DialectGemini, keeps{ids: true, inputs: true})
}

// toolIDs lists every tool call id and tool result id in order.
func toolIDs(r *codec.Request) string {
	var b bytes.Buffer
	for _, p := range r.Parts {
		switch p.Kind {
		case codec.PartToolCall:
			fmt.Fprintf(&b, "call %s %s; ", p.ID, p.Name)
		case codec.PartToolResult:
			fmt.Fprintf(&b, "result %s err=%v; ", p.ID, p.IsError)
		}
	}
	return b.String()
}

// toolInputs lists every tool call's arguments as compact JSON text.
func toolInputs(t *testing.T, r *codec.Request) string {
	var b bytes.Buffer
	for _, p := range r.Parts {
		if p.Kind == codec.PartToolCall {
			b.Write(argsJSON(t, &p))
			b.WriteString("; ")
		}
	}
	return b.String()
}

// argsJSON returns a call's arguments as compact JSON ({} when empty).
func argsJSON(t *testing.T, p *codec.Part) []byte {
	args := p.Args
	if p.ArgsString {
		var err error
		if args, err = codec.AppendUnescaped(nil, args[1:len(args)-1]); err != nil {
			t.Fatalf("bad arguments string %s: %s", p.Args, err)
		}
	}
	if len(bytes.TrimSpace(args)) == 0 {
		return []byte("{}")
	}
	return codec.Compact(nil, args)
}

// thinking lists thinking text and signatures, and redacted data.
func thinking(r *codec.Request) string {
	var b bytes.Buffer
	for _, p := range r.Parts {
		switch p.Kind {
		case codec.PartThinking:
			fmt.Fprintf(&b, "thinking %q sig %s; ", p.Text, p.Signature)
		case codec.PartRedactedThinking:
			fmt.Fprintf(&b, "redacted %s; ", p.Signature)
		}
	}
	return b.String()
}
