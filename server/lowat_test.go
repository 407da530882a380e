package server

import (
	"bytes"
	"io"
	"testing"
	"time"
)

// TestLargeBodyInPieces: a large body that arrives in pieces, with pauses
// in which the server waits on the socket's low-water mark, reaches the
// upstream whole and is answered at once; so is the small request after
// it on the same connection, read with the mark back at one byte. A mark
// above what is still to come would hold either until header_read ends.
func TestLargeBodyInPieces(t *testing.T) {
	t.Parallel()
	rec := &recorder{reply: chatReply}
	up := newUpstream(t, rec)
	base, _ := startServer(t, sameConfig+"  header_read: 30s\n", up.URL)
	body := chatBody(1<<20, false)
	req := rawRequest("/v1/chat/completions", body)
	head := len(req) - len(body)
	// The head with a few bytes of body (fasthttp's read buffer keeps
	// them), a part short of the first mark, most of the rest, the last
	// bytes one by one.
	cuts := []int{head + 3, head + 4<<10, head + 100<<10, head + 700<<10, len(req) - 3, len(req) - 2, len(req) - 1, len(req)}
	rc := dialRaw(t, base)
	start := time.Now()
	from := 0
	for _, cut := range cuts {
		if _, err := rc.c.Write(req[from:cut]); err != nil {
			t.Fatal(err)
		}
		from = cut
		time.Sleep(50 * time.Millisecond)
	}
	if status, got := rc.read(t); status != 200 {
		t.Fatalf("status %d: %s", status, clipT(got))
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the body took %v to be read", d)
	}
	small := rawRequest("/v1/chat/completions", chatBody(1<<10, false))
	start = time.Now()
	for i := range small { // byte by byte: every byte must wake the reader
		if _, err := rc.c.Write(small[i : i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if status, got := rc.read(t); status != 200 {
		t.Fatalf("second request: status %d: %s", status, clipT(got))
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the request after the large body took %v", d)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.bodies) != 2 {
		t.Fatalf("upstream got %d bodies, want 2", len(rec.bodies))
	}
	if got := rec.bodies[0]; !bytes.Equal(got, body) {
		t.Fatalf("upstream got a body of %d bytes that is not the client's (%d bytes)", len(got), len(body))
	}
}

// TestLargeBodyCutShort: a client that sends part of a large body and
// stops is let go when header_read ends, mark or no mark.
func TestLargeBodyCutShort(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, &recorder{reply: chatReply})
	base, _ := startServer(t, sameConfig+"  header_read: 500ms\n", up.URL)
	body := chatBody(1<<20, false)
	req := rawRequest("/v1/chat/completions", body)
	c := dialRaw(t, base).c
	if _, err := c.Write(req[:len(req)-len(body)+300<<10]); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	io.ReadAll(c) // until the server closes
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the server waited %v for the rest of the body", d)
	}
}
