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
//   - Responses keeps tool ids (as call_id), tool inputs, thinking text
//     and signature (reasoning summary_text + encrypted_content).
//   - Chat keeps tool ids and inputs; it has no field for reasoning replay,
//     so thinking blocks and their signatures are lost (a Chat client cannot
//     send them back either).
//   - Gemini keeps tool inputs. Ids do not survive: the Gemini writer sends
//     no functionCall.id (the Developer API rarely uses them) and the reader
//     mints call_<n>, consistently for calls and results. Thinking does not
//     survive either: Gemini history has no place for another provider's
//     thinking text, and a signature is provider-bound (docs/TRANSLATION.md).
//   - tool_result is_error has no field in Chat or Responses: the writers
//     prefix the text with "Error: " and it comes back as a plain result.
//     Only Gemini ({"error": ...}) keeps it.
func TestRoundTrip(t *testing.T) {
	type keeps struct{ ids, inputs, thinking, isError bool }
	f := func(via codec.Dialect, want keeps) {
		t.Helper()
		if !requestsWired(via) || !requestsWired(codec.DialectAnthropic) {
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
		check("is_error", want.isError, toolErrors(orig), toolErrors(got))
		// Whatever is lost, nothing may be invented: a thinking block the
		// original did not have would be rejected by Anthropic (its
		// signature does not verify).
		for _, p := range got.Parts {
			if (p.Kind == codec.PartThinking || p.Kind == codec.PartRedactedThinking) && !bytes.Contains(src, p.Signature) {
				t.Errorf("via %s: invented thinking block with signature %q\nmiddle: %s\nback: %s", via, p.Signature, mid, back)
			}
		}
	}
	f(codec.DialectResponses, keeps{ids: true, inputs: true, thinking: true})
	f(codec.DialectChat, keeps{ids: true, inputs: true})
	f(codec.DialectGemini, keeps{inputs: true, isError: true})
}

// toolIDs lists every tool call id and tool result id in order.
func toolIDs(r *codec.Request) string {
	var b bytes.Buffer
	for _, p := range r.Parts {
		switch p.Kind {
		case codec.PartToolCall:
			fmt.Fprintf(&b, "call %s %s; ", p.ID, p.Name)
		case codec.PartToolResult:
			fmt.Fprintf(&b, "result %s; ", p.ID)
		}
	}
	return b.String()
}

// toolErrors lists the is_error flag of every tool result.
func toolErrors(r *codec.Request) string {
	var b bytes.Buffer
	for _, p := range r.Parts {
		if p.Kind == codec.PartToolResult {
			fmt.Fprintf(&b, "%v ", p.IsError)
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
