package ws

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"
)

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

// readFrom runs a connection's read loop over the bytes a client sends
// and returns what the server wrote back. A panic fails the test: in the
// server the reader has no recover, so it would end the process.
func readFrom(t *testing.T, o Options, in []byte) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := &conn{t: New(o), nc: b, gone: make(chan struct{}), idle: make(chan struct{}, 1)}
	c.idle <- struct{}{}
	go func() { _, _ = a.Write(in) }()
	got := make(chan []byte, 1)
	go func() {
		_ = a.SetReadDeadline(time.Now().Add(2 * time.Second))
		out, _ := io.ReadAll(a)
		got <- out
	}()
	_ = b.SetReadDeadline(time.Now().Add(2 * time.Second))
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("the read loop panicked on % x: %v", in[:min(len(in), 24)], p)
			}
		}()
		c.readLoop()
	}()
	b.Close()
	return <-got
}

// TestFragmentLengthsCannotOverflow: a continuation frame whose length
// would overflow the message's running total is a message over the
// limit (close 1009), not a negative total that passes the check and
// slices the buffer out of range.
func TestFragmentLengthsCannotOverflow(t *testing.T) {
	first := []byte{0x01, 0x81, 0, 0, 0, 0, '{'} // text, not final, 1 byte
	huge := append(binary.BigEndian.AppendUint64([]byte{0x80, 0xff}, 1<<63-1), 0, 0, 0, 0)
	out := readFrom(t, Options{MaxFrame: 1 << 20}, append(first, huge...))
	if len(out) < 4 || out[0] != 0x88 || binary.BigEndian.Uint16(out[2:]) != closeTooBig {
		t.Fatalf("server wrote % x, want a close 1009", out)
	}
}

// TestCloseCodes: a client's close code is echoed when a peer may send
// it; one that must never be sent (1005, 1006, 1015, the unassigned
// ranges) gets close 1002, and a close frame with a 1-byte payload too
// (RFC 6455 sections 5.5.1 and 7.4).
func TestCloseCodes(t *testing.T) {
	f := func(payload []byte, want int) {
		t.Helper()
		in := append([]byte{0x88, 0x80 | byte(len(payload)), 0, 0, 0, 0}, payload...)
		out := readFrom(t, Options{MaxFrame: 1 << 20}, in)
		got := -1
		if len(out) >= 2 && out[0] == 0x88 {
			got = closeNoStatus
			if out[1] >= 2 {
				got = int(binary.BigEndian.Uint16(out[2:]))
			}
		}
		if got != want {
			t.Errorf("client close % x: server answered % x (code %d), want %d", payload, out, got, want)
		}
	}
	code := func(c uint16) []byte { return binary.BigEndian.AppendUint16(nil, c) }
	f(nil, closeNoStatus)
	f(code(1000), 1000)
	f(code(1001), 1001)
	f(code(1011), 1011)
	f(code(3000), 3000)
	f(code(4999), 4999)
	f([]byte{0x03}, closeProtocolError)
	for _, c := range []uint16{0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000} {
		f(code(c), closeProtocolError)
	}
}

// deadlines counts the read deadlines set on a connection.
type deadlines struct {
	net.Conn
	n int
}

func (d *deadlines) SetReadDeadline(t time.Time) error {
	d.n++
	return d.Conn.SetReadDeadline(t)
}

// TestPongsDoNotStretchAMessage: a pong moves the read deadline on only
// between messages. Inside a fragmented message, whose bytes are
// reserved in the server's bytes in flight, a client that sends pongs
// and never the rest would otherwise hold them for as long as it likes.
func TestPongsDoNotStretchAMessage(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	d := &deadlines{Conn: b}
	c := &conn{t: New(Options{MaxFrame: 1 << 20}), nc: d, gone: make(chan struct{}), idle: make(chan struct{}, 1)}
	c.idle <- struct{}{}
	pong := []byte{0x8a, 0x80, 0, 0, 0, 0}
	go func() {
		_, _ = a.Write([]byte{0x8a, 0x80, 0, 0, 0, 0}) // between messages: extends
		_, _ = a.Write([]byte{0x01, 0x81, 0, 0, 0, 0, '{'})
		for range 3 {
			_, _ = a.Write(pong)
		}
		a.Close()
	}()
	c.readLoop()
	if d.n != 1 {
		t.Fatalf("%d read deadlines set, want 1 (the pong before the message)", d.n)
	}
}
