//go:build !race

// Heap budgets are measured without the race detector: under -race,
// sync.Pool drops a share of Puts on purpose, so pooled buffers miss.

package translate

import (
	"runtime"
	"runtime/debug"
	"testing"

	"slipstream/codec"
	"slipstream/pool"
)

// TestRequestMemory checks the heap budget of a translated request: a
// ~2 MB agent session allocates at most 1.1 x its body + 64 KiB across
// DecodeRequest and AppendRequest, with a fresh codec.Request (its slices
// grow from nothing) and a dst from the pool sized with RequestSizeHint.
// The body of each client dialect is the Anthropic session translated to
// it, so every pair is measured on the same conversation.
func TestRequestMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a few MB")
	}
	// No GC while measuring: a collection between the warm-up and the
	// measured run would empty the buffer pool, and the test is about the
	// steady state in which the server's pool is warm.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	anthropicBody := bigRequest()
	for _, client := range allDialects {
		body := clientBody(t, client, anthropicBody)
		if body == nil {
			continue
		}
		for _, upstream := range allDialects {
			if upstream == client || !requestsWired(upstream) {
				continue
			}
			t.Run(fileNames[client]+"_to_"+fileNames[upstream], func(t *testing.T) {
				translateOnce(t, client, upstream, body) // warm the pool
				// The least of three runs: sync.Pool keeps a Put buffer
				// per P, so a goroutine that moved to another P misses it
				// once in a while, which is not what the test is about.
				alloc := ^uint64(0)
				for range 3 {
					alloc = min(alloc, heapDuring(func() { translateOnce(t, client, upstream, body) }))
				}
				budget := uint64(len(body))*11/10 + 64<<10
				t.Logf("body %d bytes, allocated %d bytes (%.2fx), budget %d", len(body), alloc, float64(alloc)/float64(len(body)), budget)
				if alloc > budget {
					t.Errorf("translating %d bytes allocated %d bytes, over the budget of %d", len(body), alloc, budget)
				}
			})
		}
	}
}

// clientBody returns the big session as a client request of dialect d
// (written by d's request writer from the Anthropic original), or nil when
// a dialect is not wired.
func clientBody(t *testing.T, d codec.Dialect, anthropicBody []byte) []byte {
	if !requestsWired(d) || !requestsWired(codec.DialectAnthropic) {
		return nil
	}
	if d == codec.DialectAnthropic {
		return anthropicBody
	}
	var r codec.Request
	if err := DecodeRequest(codec.DialectAnthropic, &r, anthropicBody); err != nil {
		t.Fatalf("cannot decode the big session: %s", err)
	}
	out, err := AppendRequest(d, nil, &r, upstreamModels[d])
	if err != nil {
		t.Fatalf("cannot write the big session as %s: %s", d, err)
	}
	return out
}

// translateOnce does what the server does for one translated request.
func translateOnce(t *testing.T, client, upstream codec.Dialect, body []byte) {
	r := new(codec.Request)
	if err := DecodeRequest(client, r, body); err != nil {
		t.Fatalf("cannot decode: %s", err)
	}
	buf := pool.Get(RequestSizeHint(len(body)))
	out, err := AppendRequest(upstream, buf.B[:0], r, upstreamModels[upstream])
	if err != nil {
		t.Fatalf("cannot write: %s", err)
	}
	if cap(out) != cap(buf.B) {
		t.Errorf("dst grew from %d to %d bytes for a %d-byte body: RequestSizeHint is too small", cap(buf.B), cap(out), len(body))
	}
	buf.B = out
	pool.Put(buf)
}

// heapDuring returns the bytes allocated while f ran.
func heapDuring(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
