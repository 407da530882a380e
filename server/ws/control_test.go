package ws

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

// TestControlFrames: a control frame goes out whole and unmasked, a close
// frame carries its code and reason, and nothing follows the close frame.
func TestControlFrames(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := &conn{nc: a}
	got := make(chan []byte, 3)
	go func() {
		for _, n := range []int{3, 2 + 2 + len("bye")} {
			p := make([]byte, n)
			if _, err := io.ReadFull(b, p); err != nil {
				close(got)
				return
			}
			got <- p
		}
	}()
	if err := c.writeControl(opPing, []byte("x"), time.Second); err != nil {
		t.Fatal(err)
	}
	if p := <-got; !bytes.Equal(p, []byte{0x89, 1, 'x'}) {
		t.Fatalf("ping frame % x", p)
	}
	c.sendClose(closeGoingAway, "bye")
	if p := <-got; !bytes.Equal(p, []byte{0x88, 5, 0x03, 0xe9, 'b', 'y', 'e'}) {
		t.Fatalf("close frame % x", p)
	}
	if err := c.writeControl(opPong, nil, time.Second); err != errCloseSent {
		t.Fatalf("a pong after the close frame: %v", err)
	}
}

// TestCloseReasonFits: a reason longer than a control frame allows is cut
// to fit its 125 bytes.
func TestCloseReasonFits(t *testing.T) {
	p := closeFrame(nil, closePolicy, string(bytes.Repeat([]byte("r"), 200)))
	if len(p) != 125 || p[0] != 0x03 || p[1] != 0xf0 {
		t.Fatalf("close payload of %d bytes, code % x", len(p), p[:2])
	}
}
