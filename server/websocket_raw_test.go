package server

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
)

// rawWS is a WebSocket client that allocates nothing per frame, for the
// allocation and heap tests: it writes masked text frames from a reused
// buffer and reads frames into another.
type rawWS struct {
	c   net.Conn
	br  *bufio.Reader
	out []byte
	in  []byte
	h   []byte // frame header scratch
}

func dialRawWS(t testing.TB, base string) *rawWS {
	t.Helper()
	c, err := net.Dial("tcp", base[len("http://"):])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	req := "GET /v1/responses HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	w := &rawWS{c: c, br: bufio.NewReaderSize(c, 64<<10), out: make([]byte, 0, 64<<10), in: make([]byte, 256<<10), h: make([]byte, 8)}
	status := ""
	for {
		line, err := w.br.ReadSlice('\n')
		if err != nil {
			t.Fatalf("upgrade: %v", err)
		}
		if status == "" {
			status = string(line)
		}
		if len(line) <= 2 {
			break
		}
	}
	if !bytes.Contains([]byte(status), []byte(" 101 ")) {
		t.Fatalf("upgrade answered %q", status)
	}
	return w
}

// send writes one masked text frame (the zero mask: the payload goes as
// is, which any server must accept).
func (w *rawWS) send(t testing.TB, payload []byte) {
	b := append(w.out[:0], 0x81)
	switch n := len(payload); {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n < 1<<16:
		b = append(b, 0x80|126, byte(n>>8), byte(n))
	default:
		b = append(b, 0x80|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	b = append(b, 0, 0, 0, 0)
	b = append(b, payload...)
	w.out = b
	if _, err := w.c.Write(b); err != nil {
		t.Fatal(err)
	}
}

// next reads one frame and returns its opcode and payload (valid until
// the next call).
func (w *rawWS) next(t testing.TB) (byte, []byte) {
	h := w.h
	if _, err := io.ReadFull(w.br, h[:2]); err != nil {
		t.Fatalf("read frame: %v", err)
	}
	op, n := h[0]&0x0f, int(h[1]&0x7f)
	switch n {
	case 126:
		io.ReadFull(w.br, h[:2])
		n = int(binary.BigEndian.Uint16(h[:2]))
	case 127:
		io.ReadFull(w.br, h[:8])
		n = int(binary.BigEndian.Uint64(h[:8]))
	}
	if n > len(w.in) {
		t.Fatalf("frame of %d bytes", n)
	}
	if _, err := io.ReadFull(w.br, w.in[:n]); err != nil {
		t.Fatalf("read payload: %v", err)
	}
	return op, w.in[:n]
}

// turn sends a frame and reads text frames until response.completed (or
// an error), returning the number of frames and the last one.
func (w *rawWS) turn(t testing.TB, frame []byte) (int, []byte) {
	w.send(t, frame)
	for n := 1; ; n++ {
		op, p := w.next(t)
		if op != 1 {
			n--
			continue // pings
		}
		if bytes.HasPrefix(p, []byte(`{"type":"response.completed"`)) || bytes.HasPrefix(p, []byte(`{"type":"error"`)) || bytes.HasPrefix(p, []byte(`{"type":"response.failed"`)) {
			return n, p
		}
	}
}

// responsesStream is an upstream Responses stream of n text deltas whose
// completed response has id.
func responsesStream(n int, id string) string {
	var b strings.Builder
	ev := func(typ, rest string) {
		fmt.Fprintf(&b, "event: %s\ndata: {\"type\":%q%s}\n\n", typ, typ, rest)
	}
	item := `{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"done","annotations":[]}]}`
	ev("response.created", `,"response":{"id":"`+id+`","object":"response","status":"in_progress","output":[]}`)
	ev("response.output_item.added", `,"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}`)
	for i := 0; i < n; i++ {
		ev("response.output_text.delta", `,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"tok "`)
	}
	ev("response.output_item.done", `,"output_index":0,"item":`+item)
	ev("response.completed", `,"response":{"id":"`+id+`","object":"response","status":"completed","output":[`+item+`],"usage":{"input_tokens":10,"output_tokens":2,"total_tokens":12}}`)
	return b.String()
}

// wsBudgetServer serves one Responses upstream that answers every request
// with the same stream.
func wsBudgetServer(t *testing.T, stream string) string {
	up := rawUpstream(t, httpReply("text/event-stream", stream))
	yml := "providers:\n  - {name: r, kind: openai, api: responses, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 0s}\n"
	base, _ := startServer(t, yml, up)
	return base
}

// responsesBody is a Responses request of about size bytes.
func responsesBody(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"model":"gpt-t","stream":true,"store":false,"tool_choice":"auto","input":[`)
	line := strings.Repeat(`func main() { fmt.Println(\"hello, world\") } // code-like text\n`, 16)
	for i := 0; b.Len() < size-200; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"message","role":"user","content":[{"type":"input_text","text":"turn %d: %s"}]}`, i, line)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// asFrame turns a request body into a response.create frame.
func asFrame(body []byte, prev string) []byte {
	f := []byte(`{"type":"response.create",`)
	if prev != "" {
		f = append(f, `"previous_response_id":"`+prev+`",`...)
	}
	return append(f, body[1:]...)
}
