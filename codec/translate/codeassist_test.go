package translate

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/tidwall/gjson"
)

// readCodeAssist unwraps stream read n bytes at a time.
func readCodeAssist(t testing.TB, stream []byte, n int) []byte {
	t.Helper()
	var r CodeAssistReader
	r.Reset(&chunks{b: stream, n: n})
	out, err := io.ReadAll(&r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// chunks hands out b at most n bytes per Read.
type chunks struct {
	b []byte
	n int
}

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.b)
	c.b = c.b[k:]
	return k, nil
}

// TestCodeAssistReader: wrapped events lose their envelope, anything else
// passes byte for byte, however the source splits the stream.
func TestCodeAssistReader(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		for _, n := range []int{1, 5, 1 << 16} {
			if got := readCodeAssist(t, []byte(in), n); string(got) != want {
				t.Errorf("%q in %d-byte reads:\n got %q\nwant %q", in, n, got, want)
			}
		}
	}
	f("data: {\"response\":{\"candidates\":[]},\"traceId\":\"t\"}\n\n", "data: {\"candidates\":[]}\n\n")
	f("data: {\"response\": {\"a\":1}}\r\n\r\n: ping\n\n", "data: {\"a\":1}\n\n: ping\n\n")
	f("data: {\"response\":[1]}\n\n", "data: {\"response\":[1]}\n\n")
	f("event: x\ndata: {\"error\":{}}\n\n", "event: x\ndata: {\"error\":{}}\n\n")
	f("data: {\"response\":{\"a\":1}}\n", "data: {\"response\":{\"a\":1}}\n") // cut: as it is
	f("", "")
}

func TestCodeAssistEnvelope(t *testing.T) {
	got := AppendCodeAssistRequest([]byte("x"), []byte(`gemini-2.5-pro`), `p"1`, []byte(" {\"contents\":[]}\n"))
	if want := `x{"model":"gemini-2.5-pro","project":"p\"1","request":{"contents":[]}}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got := CodeAssistResponse([]byte(`{"response":{"candidates":[]},"traceId":"t"}`)); string(got) != `{"candidates":[]}` {
		t.Errorf("response: %s", got)
	}
	if got := CodeAssistResponse([]byte(`{"response":"x"}`)); got != nil {
		t.Errorf("a response that is no object: %s", got)
	}
}

// FuzzCodeAssistReader: any stream unwraps without a panic, the same for
// every way the source splits it; an event of valid JSON data unwraps as
// gjson reads its "response" member.
func FuzzCodeAssistReader(f *testing.F) {
	f.Add([]byte("data: {\"response\":{\"candidates\":[]},\"traceId\":\"t\"}\n\n: ping\r\n\r\ndata: [1]\n\n"))
	f.Add([]byte("data: {\"response\":{\"a\":\"}\"},\"response\":{\"b\":2}}\n\n"))
	f.Add([]byte("data: {\"x\":{\"response\":{}}}\n\ndata: {\"response\""))
	f.Fuzz(func(t *testing.T, stream []byte) {
		if len(stream) > 4<<10 {
			return // 1-byte reads rescan the carry: quadratic
		}
		whole := readCodeAssist(t, stream, len(stream)+1)
		for _, n := range []int{1, 3} {
			if got := readCodeAssist(t, stream, n); !bytes.Equal(got, whole) {
				t.Fatalf("%d-byte reads differ:\n got %q\nwant %q", n, got, whole)
			}
		}
		ev, _, ok := bytes.Cut(stream, []byte("\n\n"))
		data, isData := bytes.CutPrefix(ev, []byte("data: "))
		if !ok || !isData || bytes.ContainsAny(data, "\r\n") || !json.Valid(data) {
			return
		}
		want := ev
		if r := gjson.GetBytes(data, "response"); r.Exists() && r.IsObject() {
			want = []byte("data: " + r.Raw)
		}
		if !bytes.HasPrefix(whole, append(want, '\n', '\n')) {
			t.Fatalf("%q: unwrapped to %q, want %q first", stream, whole, want)
		}
	})
}
