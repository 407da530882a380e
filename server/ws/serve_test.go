package ws

import (
	"io"
	"net"
	"strconv"
	"strings"
	"testing"

	"slipstream/pool"
)

// TestRelayOutputOverStateBudget: the output items a turn gathers from
// output_item.done events never hold more than the store accepts
// (StateBytes, measured as transcript.size); once they would, they are
// dropped, every event still goes out, and the completed response's
// transcript is not stored, so a frame chaining on it is answered
// previous_response_not_found. A turn within the budget keeps its
// transcript, whether the items came in output_item.done events or only
// in response.completed (one event: store.put refuses it when over).
func TestRelayOutputOverStateBudget(t *testing.T) {
	f := func(budget int64, items, itemSize int, inCompleted, wantKept bool) {
		t.Helper()
		a, b := net.Pipe()
		defer a.Close()
		defer b.Close()
		go func() { _, _ = io.Copy(io.Discard, a) }()
		c := &conn{t: New(Options{StateBytes: budget}), nc: b, gone: make(chan struct{})}
		c.body = pool.Get(1 << 10)
		c.body.B = append(c.body.B[:0], `{"input":[]}`...)
		c.out = pool.Get(4 << 10)
		s := &turnSink{c: c}
		item := `{"type":"message","role":"assistant","content":"` + strings.Repeat("x", itemSize) + `"}`
		var output []string
		for i := range items {
			output = append(output, item)
			if inCompleted {
				continue
			}
			if !s.Event([]byte("response.output_item.done"), []byte(`{"type":"response.output_item.done","output_index":`+strconv.Itoa(i)+`,"item":`+item+`}`), nil) {
				t.Fatalf("item %d: the sink reported the client gone", i)
			}
			if held := heldFor(c); held > budget {
				t.Fatalf("after item %d the turn holds %d bytes for its transcript, over the budget %d", i, held, budget)
			}
		}
		done := `{"type":"response.completed","response":{"id":"resp_1","output":[` + strings.Join(output, ",") + `]}}`
		if !s.Event([]byte("response.completed"), []byte(done), nil) {
			t.Fatal("completed: the sink reported the client gone")
		}
		c.endRelay(&s.r)
		c.releaseBody()
		st := c.t.store.take(c)
		defer st.release()
		if kept := st.matches([]byte("resp_1")); kept != wantKept {
			t.Fatalf("transcript kept = %v, want %v", kept, wantKept)
		}
		if _, out := st.items(); wantKept && string(out) != strings.Join(output, ",") {
			t.Fatalf("kept output items %.100q, want the %d items", out, items)
		}
	}
	f(1<<20, 3, 100, false, true)       // within the budget
	f(1<<20, 3, 100, true, true)        // only in response.completed
	f(64<<10, 200, 1<<10, false, false) // 200 KiB of items over 64 KiB
	f(64<<10, 1, 100<<10, false, false) // one item larger than the budget
	f(64<<10, 200, 1<<10, true, false)  // only in response.completed, over
}

// heldFor is what c holds for the transcript of the turn in flight.
func heldFor(c *conn) int64 {
	t := transcript{body: c.body, out: c.out}
	return t.size()
}
