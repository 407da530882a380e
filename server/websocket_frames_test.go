package server

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// TestWSFrameValidation: a text frame that is not one complete JSON object
// (truncated, trailing bytes, two objects) or whose previous_response_id
// is not a string gets a 400 error event and never reaches the upstream
// (before, a truncated frame was completed by the expansion into a valid
// request and billed); the socket stays usable. Invalid UTF-8 in a text
// frame closes the socket with 1007 (RFC 6455 section 8.1).
func TestWSFrameValidation(t *testing.T) {
	t.Parallel()
	u := &sseUpstream{reply: func(int, []byte) upReply { return upReply{body: textAnswer("resp_1", "ok")} }}
	base, _ := wsServer(t, u, "")
	c, _ := wsDial(t, base, "/v1/responses")
	whole := frameJSON("["+userHi+"]", "")
	f := func(frame string) {
		t.Helper()
		wsSend(t, c, frame)
		if e := last(wsResponse(t, c)); e.Type != "error" || e.Status != 400 || e.Error.Type != "invalid_request_error" {
			t.Errorf("frame %.80q: %s, want a 400 error event", frame, e.Raw)
		}
	}
	f(whole[:len(whole)-1]) // truncated: the closing brace
	f(whole[:len(whole)-3]) // truncated inside the input
	f(whole + " x")         // trailing bytes
	f(whole + whole)        // two objects
	f(frameJSON("["+userHi+"]", "", `"previous_response_id":42`))
	f(frameJSON("["+userHi+"]", "", `"previous_response_id":{"id":"resp_1"}`))
	if n := u.count(); n != 0 {
		t.Fatalf("the upstream saw %d requests for invalid frames, want none", n)
	}
	wsSend(t, c, whole)
	if e := last(wsResponse(t, c)); e.Type != "response.completed" {
		t.Fatalf("a valid frame after the invalid ones: %s", e.Raw)
	}

	bad := []byte(frameJSON(`[{"type":"message","role":"user","content":"caf`+"\xc3"+`"}]`, ""))
	if err := c.WriteMessage(websocket.TextMessage, bad); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, b, err := c.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseInvalidFramePayloadData) {
		t.Fatalf("invalid UTF-8: %v %s, want close 1007", err, b)
	}
	if n := u.count(); n != 1 {
		t.Fatalf("the upstream saw %d requests, want 1", n)
	}
}

// TestWSFrameAdmittedFromItsHeader: with limits.max_bytes_in_flight taken,
// a frame is refused from its header alone: the 429 error event arrives
// while most of its payload is still unsent, the payload is then read and
// dropped, and the socket serves the next frame. Before, the whole frame
// was read into memory first and only its expanded body was refused.
func TestWSFrameAdmittedFromItsHeader(t *testing.T) {
	hold := make(chan struct{})
	u := &sseUpstream{reply: func(n int, b []byte) upReply {
		if strings.Contains(string(b), "hold-please") {
			return upReply{body: textAnswer("resp_h", "held"), hold: hold, gone: make(chan struct{})}
		}
		return upReply{body: textAnswer("resp_1", "ok")}
	}}
	base, s := wsServer(t, u, "limits: {max_bytes_in_flight: 1MiB}\n")
	// A held turn takes the budget: its 900 KB body stays in flight.
	holder, _ := wsDial(t, base, "/v1/responses")
	wsSend(t, holder, frameJSON(`[{"type":"message","role":"user","content":"hold-please `+strings.Repeat("h", 900<<10)+`"}]`, ""))
	_ = holder.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, _, err := holder.ReadMessage(); err != nil { // its first event: it is in flight
		t.Fatal(err)
	}

	w := dialRawWS(t, base)
	payload := []byte(frameJSON(`[{"type":"message","role":"user","content":"`+strings.Repeat("p", 600<<10)+`"}]`, ""))
	hdr := []byte{0x81, 0x80 | 127}
	hdr = binary.BigEndian.AppendUint64(hdr, uint64(len(payload)))
	hdr = append(hdr, 0, 0, 0, 0) // the zero mask
	if _, err := w.c.Write(append(hdr, payload[:1024]...)); err != nil {
		t.Fatal(err)
	}
	_ = w.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	op, p := w.next(t)
	for op == 9 { // pings
		op, p = w.next(t)
	}
	if op != 1 || !strings.Contains(string(p), `"status":429`) || !strings.Contains(string(p), "max_bytes_in_flight") {
		t.Fatalf("a frame over the budget, 1 KiB of it sent: opcode %d %s, want a 429 error event", op, p)
	}
	if _, err := w.c.Write(payload[1024:]); err != nil {
		t.Fatal(err)
	}
	close(hold)
	if e := last(wsResponse(t, holder)); e.Type != "response.completed" {
		t.Fatalf("the held turn: %s", e.Raw)
	}
	if _, last := w.turn(t, []byte(frameJSON("["+userHi+"]", ""))); !strings.Contains(string(last), "response.completed") {
		t.Fatalf("the next frame on the refused socket: %s", last)
	}
	waitIdle(t, s) // nothing left counted in the bytes in flight
}

// TestWSFrameSentWithTheUpgrade: a client that sends its first frame in
// the same write as the upgrade request (so the server may read both at
// once) has it served, then a second one: no byte read ahead of the
// hijack is lost when the socket is taken from fasthttp, over TCP or TLS
// (where the read-ahead may also wait in the TLS layer).
func TestWSFrameSentWithTheUpgrade(t *testing.T) {
	t.Parallel()
	for _, overTLS := range []bool{false, true} {
		u := &sseUpstream{reply: func(int, []byte) upReply { return upReply{body: textAnswer("resp_1", "ok")} }}
		up := newUpstream(t, u)
		cfg := parseConfig(t, "providers:\n  - {name: up, kind: openai, api: responses, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 0s, ws_ping: 100ms}\n", up.URL)
		var wrap func(net.Listener) net.Listener
		if overTLS {
			wrap = func(ln net.Listener) net.Listener { return tls.NewListener(ln, testServerTLS(t)) }
		}
		base, _ := serveConfigListener(t, cfg, nil, wrap)
		addr := strings.TrimPrefix(base, "http://")
		var c net.Conn
		var err error
		if overTLS {
			c, err = tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
		} else {
			c, err = net.Dial("tcp", addr)
		}
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		frame := maskedFrame([]byte(frameJSON("["+userHi+"]", "")))
		req := []byte("GET /v1/responses HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
		if _, err := c.Write(append(req, frame...)); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		br := bufio.NewReader(c)
		if r := wsAnswer(skipHead(t, br)); r != "completed" {
			t.Fatalf("tls %v: a frame sent with the upgrade: %s", overTLS, r)
		}
		if _, err := c.Write(frame); err != nil {
			t.Fatal(err)
		}
		if r := wsAnswer(br); r != "completed" {
			t.Fatalf("tls %v: the frame after it: %s", overTLS, r)
		}
	}
}

// maskedFrame is a client text frame holding p, masked with the zero key.
func maskedFrame(p []byte) []byte {
	return append([]byte{0x81, 0x80 | 126, byte(len(p) >> 8), byte(len(p)), 0, 0, 0, 0}, p...)
}

// testServerTLS is a server TLS configuration with httptest's
// certificate.
func testServerTLS(t *testing.T) *tls.Config {
	cert := httptest.NewTLSServer(http.NotFoundHandler())
	defer cert.Close()
	return cert.TLS.Clone()
}

// skipHead reads an HTTP response head, which must be a 101.
func skipHead(t *testing.T, br *bufio.Reader) *bufio.Reader {
	t.Helper()
	for first := true; ; first = false {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if first && !strings.Contains(line, " 101 ") {
			t.Fatalf("upgrade answered %q", line)
		}
		if line == "\r\n" {
			return br
		}
	}
}

// wsAnswer reads frames until the one that answers the frame sent, and
// returns "completed", "429", "close <code>", another error event, or
// what went wrong.
func wsAnswer(br *bufio.Reader) string {
	for {
		var h [10]byte
		if _, err := io.ReadFull(br, h[:2]); err != nil {
			return "read: " + err.Error()
		}
		op, n := h[0]&0x0f, uint64(h[1]&0x7f)
		var err error
		switch n {
		case 126:
			_, err = io.ReadFull(br, h[:2])
			n = uint64(binary.BigEndian.Uint16(h[:2]))
		case 127:
			_, err = io.ReadFull(br, h[:8])
			n = binary.BigEndian.Uint64(h[:8])
		}
		if err != nil || n > 1<<20 {
			return fmt.Sprintf("frame of %d bytes: %v", n, err)
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(br, p); err != nil {
			return "read: " + err.Error()
		}
		switch {
		case op == 8 && len(p) >= 2:
			return "close " + strconv.Itoa(int(binary.BigEndian.Uint16(p)))
		case op != 1:
			continue // pings
		case bytes.HasPrefix(p, []byte(`{"type":"error","status":429`)):
			return "429"
		case bytes.HasPrefix(p, []byte(`{"type":"response.completed"`)):
			return "completed"
		case bytes.HasPrefix(p, []byte(`{"type":"error"`)):
			return string(p)
		}
	}
}
