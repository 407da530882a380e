package bench

import (
	"encoding/json"
	"testing"

	"github.com/tidwall/gjson"
)

// TestCodexTurns: the ws workload's frames and HTTP bodies describe the
// same conversation: frame 0 is the whole first request, later frames
// chain with one tool output each, and HTTP turn j holds the first input
// plus 2j items (the answer and the tool output of each earlier turn).
func TestCodexTurns(t *testing.T) {
	turns, err := buildCodexTurns()
	if err != nil {
		t.Fatal(err)
	}
	first := len(gjson.GetBytes(turns.posts[0].Body, "input").Array())
	for j := range turns.frames {
		if !json.Valid(turns.frames[j]) || !json.Valid(turns.posts[j].Body) {
			t.Fatalf("turn %d: frame or body is not JSON", j)
		}
		f := gjson.ParseBytes(turns.frames[j])
		if f.Get("type").String() != "response.create" || f.Get("previous_response_id").Exists() != (j > 0) {
			t.Errorf("frame %d: type %q, previous_response_id %q", j, f.Get("type"), f.Get("previous_response_id"))
		}
		if j > 0 && len(f.Get("input").Array()) != 1 {
			t.Errorf("frame %d carries %d items, want 1", j, len(f.Get("input").Array()))
		}
		if n := len(gjson.GetBytes(turns.posts[j].Body, "input").Array()); n != first+2*j {
			t.Errorf("HTTP turn %d has %d input items, want %d", j, n, first+2*j)
		}
	}
}
