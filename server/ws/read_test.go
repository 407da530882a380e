package ws

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"testing"
	"time"
)

// TestExpandInPlace: a frame that does not chain, expanded within its own
// bytes, gives the body the copying expansion gives, whether its members
// grow (moved right first) or not.
func TestExpandInPlace(t *testing.T) {
	f := func(frame string, grows bool) {
		t.Helper()
		var vals frameVals
		fr, ok := parseFrame([]byte(frame), &vals)
		if !ok {
			t.Fatalf("parseFrame(%s) refused", frame)
		}
		if fr.grows() != grows {
			t.Fatalf("grows(%s) = %v, want %v", frame, !grows, grows)
		}
		var e1, e2 expansion
		want := e1.appendBody(nil, []byte(frame), nil, nil)
		buf := make([]byte, len(frame), len(frame)+slack)
		copy(buf, frame)
		got := e2.expandInPlace(buf[:cap(buf)], buf[:len(frame)], grows)
		if !bytes.Equal(got, want) || e1.inStart != e2.inStart || e1.inEnd != e2.inEnd || !json.Valid(got) {
			t.Errorf("in place %s\n got %s\nwant %s", frame, got, want)
		}
		if len(got) <= cap(buf) && &got[0] != &buf[0] {
			t.Errorf("in place %s: the body left its buffer", frame)
		}
		if e2.nhdr != e1.nhdr {
			t.Errorf("in place %s: %d headers, want %d", frame, e2.nhdr, e1.nhdr)
		}
		for i := 0; i < e1.nhdr; i++ {
			n1, v1 := e1.header(i)
			n2, v2 := e2.header(i)
			if string(n1) != string(n2) || string(v1) != string(v2) {
				t.Errorf("in place %s: header %s: %s, want %s: %s", frame, n2, v2, n1, v1)
			}
		}
	}
	f(`{"type":"response.create","model":"m","stream":false,"input":[{"a":1}],"generate":true}`, false)
	f(`{"model":"m"}`, false)       // input and stream appended at the end
	f(`{"input":[ ],"x":1}`, false) // an empty array
	f(` { "type" : "response.create" , "model" : "m" , "input" : [ {"a" : 1} , {"b":2} ] , "stream" : true } `[1:], false)
	f(`{"input":[{"a":1}],"type":"response.create","client_metadata":{"x-codex-ws-stream-request-start-ms":"1","ws_request_header_x_a_b":"v","x-codex-turn-state":"s","k":"v"}}`, false)
	f(`{"model":"m","input":"hi"}`, true) // a string input grows
	f(`{"model":"m","input":5}`, true)    // so does a scalar
	f(`{"model":"m","stream":1}`, true)   // and a short stream value
	// The most a frame grows ahead of its reading: a short stream value,
	// then a string input, with nothing dropped before them.
	f(`{"stream":1,"input":"hi","model":"m","type":"response.create"}`, true)
	f(`{"stream":0,"input":"","client_metadata":{"ws_request_header_x":"v"}}`, true)
	if maxGrowth >= slack {
		t.Fatalf("maxGrowth %d must stay under slack %d", maxGrowth, slack)
	}
}

// TestReadHeader: frame headers as RFC 6455 section 5.2 lays them out, and
// the ones a server must refuse.
func TestReadHeader(t *testing.T) {
	f := func(in []byte, want frameHeader, wantErr error) {
		t.Helper()
		a, b := net.Pipe()
		defer a.Close()
		defer b.Close()
		go func() { _, _ = a.Write(in); a.Close() }()
		c := &conn{nc: b}
		_ = b.SetReadDeadline(time.Now().Add(time.Second))
		got, err := c.readHeader()
		if err != wantErr || err == nil && got != want {
			t.Errorf("readHeader(% x) = %+v, %v; want %+v, %v", in, got, err, want, wantErr)
		}
	}
	m := [4]byte{1, 2, 3, 4}
	f([]byte{0x81, 0x85, 1, 2, 3, 4}, frameHeader{fin: true, op: opText, n: 5, mask: m}, nil)
	f([]byte{0x02, 0xfe, 0x01, 0x00, 1, 2, 3, 4}, frameHeader{op: opBinary, n: 256, mask: m}, nil)
	f(binary.BigEndian.AppendUint64([]byte{0x80, 0xff}, 70000), frameHeader{}, io.ErrUnexpectedEOF) // no mask yet
	f(append(binary.BigEndian.AppendUint64([]byte{0x80, 0xff}, 1<<40), 1, 2, 3, 4), frameHeader{fin: true, op: opContinuation, n: 1 << 40, mask: m}, nil)
	f(append(binary.BigEndian.AppendUint64([]byte{0x81, 0xff}, 1<<63), 1, 2, 3, 4), frameHeader{}, errProtocol)
	f([]byte{0x81, 0x05}, frameHeader{}, errProtocol)                     // not masked
	f([]byte{0xc1, 0x85, 1, 2, 3, 4}, frameHeader{}, errProtocol)         // RSV1: no extension
	f([]byte{0x83, 0x85, 1, 2, 3, 4}, frameHeader{}, errProtocol)         // reserved opcode
	f([]byte{0x09, 0x80, 1, 2, 3, 4}, frameHeader{}, errProtocol)         // fragmented ping
	f([]byte{0x89, 0xfe, 0, 126, 1, 2, 3, 4}, frameHeader{}, errProtocol) // ping over 125 bytes
}

func TestUnmask(t *testing.T) {
	key := [4]byte{0xa1, 0x02, 0xf3, 0x44}
	for n := 0; n < 40; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i * 7)
		}
		want := bytes.Clone(b)
		for i := range want {
			want[i] ^= key[i%4]
		}
		unmask(b, key)
		if !bytes.Equal(b, want) {
			t.Fatalf("unmask of %d bytes: % x, want % x", n, b, want)
		}
	}
}
