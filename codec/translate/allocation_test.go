//go:build !race

package translate

import (
	"bytes"
	"testing"

	"slipstream/codec"
)

// TestStreamEventAllocs proves that a translated stream event costs no
// allocation in steady state, for every pair: the upstream stream is
// replayed up to a delta event, then that delta is translated again and
// again into a reused dst.
func TestStreamEventAllocs(t *testing.T) {
	for _, sc := range []string{"plain_text", "parallel_tools", "thinking"} {
		for _, p := range pairs() {
			t.Run(sc+"/"+p.String(), func(t *testing.T) {
				if !streamsReady(p) {
					t.Skipf("%s: stream translation not wired yet", p)
				}
				r, _ := decodeClient(t, sc, p.client)
				evs := readEvents(t, readFile(t, "scenarios/"+sc+"/stream."+fileNames[p.upstream]+".sse"))
				k := lastDelta(p.upstream, evs)
				s := AcquireStream(p.client, p.upstream, r, true)
				defer ReleaseStream(s)
				s.SetEstimate(inputOnly{10})
				var dst []byte
				var err error
				for _, ev := range evs[:k+1] {
					if dst, err = s.AppendEvent(dst[:0], ev.name, ev.data); err != nil {
						t.Fatal(err)
					}
				}
				ev := evs[k]
				allocs := testing.AllocsPerRun(200, func() {
					dst, err = s.AppendEvent(dst[:0], ev.name, ev.data)
				})
				if err != nil {
					t.Fatal(err)
				}
				if allocs != 0 {
					t.Errorf("%.1f allocs per event %s %s", allocs, ev.name, ev.data)
				}
			})
		}
	}
}

// lastDelta returns the index of the last incremental event of an upstream
// stream (text, thinking or tool-argument delta) that may be repeated.
func lastDelta(d codec.Dialect, evs []sseEvent) int {
	k := 0
	for i, ev := range evs {
		switch d {
		case codec.DialectAnthropic:
			if string(ev.name) == "content_block_delta" && !bytes.Contains(ev.data, []byte("signature_delta")) {
				k = i
			}
		case codec.DialectChat:
			if bytes.Contains(ev.data, []byte(`"content":"`)) && !bytes.Contains(ev.data, []byte(`"content":""`)) ||
				bytes.Contains(ev.data, []byte(`"arguments":"{`)) || bytes.Contains(ev.data, []byte(`"reasoning_content"`)) {
				k = i
			}
		case codec.DialectResponses:
			if bytes.HasSuffix(ev.name, []byte(".delta")) {
				k = i
			}
		case codec.DialectGemini:
			if bytes.Contains(ev.data, []byte(`"text"`)) && !bytes.Contains(ev.data, []byte("finishReason")) {
				k = i
			}
		}
	}
	return k
}

// TestTailsForAllocs: picking a same-dialect tail and watching an event
// with it cost no allocation.
func TestTailsForAllocs(t *testing.T) {
	var ts Tails
	model := []byte("gpt-x")
	data := []byte(`{"type":"response.output_text.delta","sequence_number":3,"delta":"hi"}`)
	name := []byte("response.output_text.delta")
	for d := range codec.Dialect(codec.NumDialects) {
		allocs := testing.AllocsPerRun(100, func() {
			ts.For(d, model, 1).Observe(name, data)
		})
		if allocs != 0 {
			t.Errorf("%v: %.1f allocs", d, allocs)
		}
	}
}

// TestBodyUsageAllocs: reading a body's usage costs no allocation.
func TestBodyUsageAllocs(t *testing.T) {
	body := []byte(`{"choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":12,"completion_tokens":3,"completion_tokens_details":{"reasoning_tokens":1}}}`)
	gem := []byte(`{"candidates":[],"usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":3}}`)
	for d := range codec.Dialect(codec.NumDialects) {
		b := body
		if d == codec.DialectGemini {
			b = gem
		}
		var u codec.Usage
		allocs := testing.AllocsPerRun(100, func() { u = BodyUsage(d, b) })
		if allocs != 0 || !u.Known {
			t.Errorf("%v: %.1f allocs, usage %+v", d, allocs, u)
		}
	}
}

// TestArrayStreamAllocs: framing an event into the array form costs no
// allocation once the buffers are grown.
func TestArrayStreamAllocs(t *testing.T) {
	var a ArrayStream
	ev := []byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}]}}]}\n\n")
	a.Frame(ev)
	if allocs := testing.AllocsPerRun(100, func() { a.Frame(ev) }); allocs != 0 {
		t.Errorf("%.1f allocs per event", allocs)
	}
}

// loopSource repeats b forever, whole per Read.
type loopSource struct{ b []byte }

func (l *loopSource) Read(p []byte) (int, error) { return copy(p, l.b), nil }

// TestCodeAssistReaderAllocs: unwrapping one more Code Assist event costs
// no allocation once the buffers are grown.
func TestCodeAssistReaderAllocs(t *testing.T) {
	ev := []byte("data: {\"response\":{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}]}}]},\"traceId\":\"t\"}\r\n\r\n")
	var r CodeAssistReader
	r.Reset(&loopSource{ev})
	p := make([]byte, 4096)
	for range 100 {
		if _, err := r.Read(p); err != nil {
			t.Fatal(err)
		}
	}
	if allocs := testing.AllocsPerRun(200, func() { _, _ = r.Read(p) }); allocs != 0 {
		t.Errorf("%.1f allocs per read", allocs)
	}
}
