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
