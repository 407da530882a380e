package translate

import (
	"strings"
	"testing"

	"slipstream/codec"
)

// thinkingHistory is an Anthropic request replaying two thinking blocks:
// one signed by Anthropic (no tag) and one by Gemini (tagged by
// slipstream when it translated that turn).
const thinkingHistory = `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"thinking","thinking":"t1","signature":"QW50aHJvcGljU2ln"},{"type":"thinking","thinking":"t2","signature":"SsOrGemiR2VtaW5pU2ln"},{"type":"text","text":"answer"}]},{"role":"user","content":"more"}]}`

func TestReplayTokensByOrigin(t *testing.T) {
	f := func(up codec.Dialect, want, notWant []string) {
		t.Helper()
		var r codec.Request
		if err := DecodeRequest(codec.DialectAnthropic, &r, []byte(thinkingHistory)); err != nil {
			t.Fatal(err)
		}
		out, err := AppendRequestFrom(codec.DialectAnthropic, up, nil, &r, []byte("m"))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(out), w) {
				t.Fatalf("%s request lacks %q:\n%s", up, w, out)
			}
		}
		for _, w := range notWant {
			if strings.Contains(string(out), w) {
				t.Fatalf("%s request holds %q:\n%s", up, w, out)
			}
		}
		// r is unchanged: a failover to another dialect reads it again.
		var sigs []string
		for _, p := range r.Parts {
			if p.Kind == codec.PartThinking {
				sigs = append(sigs, string(p.Signature))
			}
		}
		if strings.Join(sigs, " ") != "QW50aHJvcGljU2ln SsOrGemiR2VtaW5pU2ln" {
			t.Fatalf("request changed: %v", sigs)
		}
	}
	// Gemini gets its own token back, untagged, and never Anthropic's.
	f(codec.DialectGemini, []string{`"thoughtSignature":"R2VtaW5pU2ln"`}, []string{"QW50aHJvcGljU2ln", "SsOr"})
	// Anthropic keeps its own and drops Gemini's block.
	f(codec.DialectAnthropic, []string{`"signature":"QW50aHJvcGljU2ln"`}, []string{"R2VtaW5pU2ln", "SsOr"})
	// OpenAI gets neither.
	f(codec.DialectResponses, nil, []string{"QW50aHJvcGljU2ln", "R2VtaW5pU2ln", "SsOr"})
}

// TestShapeCheckFindsTags: the shape check every same-dialect body gets
// reports the tags this package writes, where a client sends them back.
func TestShapeCheckFindsTags(t *testing.T) {
	f := func(body string, want bool) {
		t.Helper()
		if _, tagged, ok := codec.ValidShapeTopTagged([]byte(body), nil, nil); !ok || tagged != want {
			t.Fatalf("ValidShapeTopTagged(%q) = tagged %v, ok %v", body, tagged, ok)
		}
	}
	f(thinkingHistory, true)
	f(`{"signature":"QW50aHJvcGljU2ln"}`, false)
	f(`{"text":"xSsOrGemi","signature":"SsOrGemiAAAA"}`, true)
	f(`{"text":"xSsOrGemi"}`, false)
}

// TestReplayTokenTaggedOnTheWayDown: a Gemini thoughtSignature written
// into an Anthropic response carries Gemini's tag; Anthropic's own
// signatures relayed to an Anthropic client do not.
func TestReplayTokenTaggedOnTheWayDown(t *testing.T) {
	body := `{"candidates":[{"content":{"role":"model","parts":[{"text":"hmm","thought":true,"thoughtSignature":"R2VtaW5pU2ln"},{"text":"Done."}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":2,"candidatesTokenCount":2,"totalTokenCount":4}}`
	var r codec.Request
	if err := DecodeRequest(codec.DialectAnthropic, &r, []byte(thinkingHistory)); err != nil {
		t.Fatal(err)
	}
	s := AcquireStream(codec.DialectAnthropic, codec.DialectGemini, &r, false)
	defer ReleaseStream(s)
	out, err := s.AppendBody(nil, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"signature":"SsOrGemiR2VtaW5pU2ln"`) {
		t.Fatalf("no tagged signature:\n%s", out)
	}
}
