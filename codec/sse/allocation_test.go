//go:build !race

package sse

import (
	"strings"
	"testing"
)

// loopReader repeats b forever, in reads of at most n bytes.
type loopReader struct {
	b   []byte
	off int
	n   int
}

func (l *loopReader) Read(p []byte) (int, error) {
	k := copy(p[:min(len(p), l.n)], l.b[l.off:])
	l.off = (l.off + k) % len(l.b)
	return k, nil
}

// TestReaderNextAllocs: once a Reader runs, framing one more event
// allocates nothing, whether events arrive whole or split across reads.
// Budget: 0 allocations per event.
func TestReaderNextAllocs(t *testing.T) {
	ev := []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0}\n\n")
	multi := []byte("data: one\ndata: two\r\n\r\n")
	for _, in := range [][]byte{ev, multi} {
		for _, chunk := range []int{1, 7, 4096} {
			var rd Reader
			rd.Reset(&loopReader{b: in, n: chunk})
			for i := 0; i < 100; i++ { // warm up: buffer and data scratch
				if _, err := rd.Next(); err != nil {
					t.Fatal(err)
				}
			}
			allocs := testing.AllocsPerRun(1000, func() {
				if _, err := rd.Next(); err != nil {
					t.Fatal(err)
				}
			})
			rd.Release()
			if allocs != 0 {
				t.Fatalf("%q in %d-byte reads: %.2f allocations per event, want 0", in, chunk, allocs)
			}
		}
	}
}

// TestVerbatimAllocs: checking an event for the verbatim relay, on the
// fast path and on the line-by-line one, allocates nothing.
func TestVerbatimAllocs(t *testing.T) {
	for _, raw := range []string{
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0}\n\n",
		"id: 7\nevent: ping\ndata: {\"a\":\ndata: 1}\n\n",
		"data: [DONE]\n\n",
		": ping\n\n",
	} {
		var rd Reader
		rd.Reset(strings.NewReader(raw))
		ev, err := rd.Next()
		if err != nil || !Verbatim(&ev, []byte("[DONE]")) {
			t.Fatalf("%q: %v", raw, err)
		}
		if allocs := testing.AllocsPerRun(100, func() { Verbatim(&ev, []byte("[DONE]")) }); allocs != 0 {
			t.Errorf("%q: %.1f allocs", raw, allocs)
		}
		rd.Release()
	}
}
