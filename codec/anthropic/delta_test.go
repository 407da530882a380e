package anthropic

import "testing"

func TestDeltaAsWrittenFast(t *testing.T) {
	f := func(data string, wantSure, wantOK bool, want string) {
		t.Helper()
		d, ok, sure := deltaAsWritten([]byte(data))
		if sure != wantSure || ok != wantOK || (ok && data[d.Start:d.End] != want) {
			t.Fatalf("%s: %+v ok %v sure %v", data, d, ok, sure)
		}
	}
	f(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi \"x\""}}`, true, true, `Hi \"x\"`)
	f(`{"type":"content_block_delta","index":7,"delta":{"type":"input_json_delta","partial_json":"{\"a"}}`, true, true, `{\"a`)
	f(`{"type":"message_stop"}`, true, false, "")
	f(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"},"extra":1}`, false, false, "")
	f(`{"index":0,"type":"content_block_delta"}`, false, false, "")
	f(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"unterminated`, false, false, "")
}
