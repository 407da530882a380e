//go:build !race

package translate

import (
	"testing"

	"slipstream/codec"
)

// TestReplayTokensAllocs: sorting replay tokens by origin allocates
// nothing in steady state, on the way up and down.
func TestReplayTokensAllocs(t *testing.T) {
	var r codec.Request
	if err := DecodeRequest(codec.DialectAnthropic, &r, []byte(thinkingHistory)); err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, 0, 4096)
	model := []byte("m")
	up := testing.AllocsPerRun(200, func() {
		var err error
		dst, err = AppendRequestFrom(codec.DialectAnthropic, codec.DialectGemini, dst[:0], &r, model)
		if err != nil {
			t.Fatal(err)
		}
	})
	if up != 0 {
		t.Fatalf("%v allocs per request write, want 0", up)
	}
	body := []byte(`{"candidates":[{"content":{"role":"model","parts":[{"text":"hmm","thought":true,"thoughtSignature":"R2VtaW5pU2ln"},{"text":"Done."}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":2,"candidatesTokenCount":2,"totalTokenCount":4}}`)
	s := AcquireStream(codec.DialectAnthropic, codec.DialectGemini, &r, false)
	defer ReleaseStream(s)
	down := testing.AllocsPerRun(200, func() {
		s.reset()
		s.enc.Reset(&r, false)
		var err error
		dst, err = s.AppendBody(dst[:0], body)
		if err != nil {
			t.Fatal(err)
		}
	})
	if down != 0 {
		t.Fatalf("%v allocs per tagged response, want 0", down)
	}
}
