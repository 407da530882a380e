package openai

import (
	"testing"

	"slipstream/codec"
)

// TestResponsesTailErrorBeforeCreated: a stream that fails before the
// upstream's response.created still starts with one, and its
// response.failed carries created_at and model, so it passes the grammar.
func TestResponsesTailErrorBeforeCreated(t *testing.T) {
	var tail ResponsesTail
	tail.Reset()
	tail.Begin([]byte("gpt-5"), 1767225600)
	e := codec.Error{Status: 502, Kind: codec.ErrAPI, Message: []byte("upstream returned an error")}
	out := tail.AppendError(nil, &e)
	if err := CheckResponsesStream(out); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
}
