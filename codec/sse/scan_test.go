package sse

import (
	"bytes"
	"io"
	"math/rand"
	"strings"
	"testing"
)

// chunkReader returns at most n bytes per Read, as a network connection
// does: an event larger than n arrives in many reads.
type chunkReader struct {
	b []byte
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.b)
	c.b = c.b[k:]
	return k, nil
}

// scanWork frames stream read in chunks of chunk bytes and returns the
// bytes the framing scan examined and the number of events.
func scanWork(t *testing.T, stream []byte, chunk int) (scanned, events int) {
	t.Helper()
	var rd Reader
	rd.MaxEvent = 8 << 20
	rd.Reset(&chunkReader{b: stream, n: chunk})
	defer rd.Release()
	for {
		_, err := rd.Next()
		if err == io.EOF {
			return rd.scanned, events
		}
		if err != nil {
			t.Fatal(err)
		}
		events++
	}
}

// TestReaderScanIsLinear: framing one large event that arrives in many
// small reads examines each byte about once, as framing the same bytes cut
// into small events does. A scan that restarts at the event's first byte
// after every read examines ~size²/(2·chunk) bytes instead (here ~500 MiB
// for a 1 MiB event).
func TestReaderScanIsLinear(t *testing.T) {
	const size, chunk = 1 << 20, 1 << 10
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		big := []byte("data: " + strings.Repeat("x", size) + eol + eol)
		small := []byte(strings.Repeat("data: "+strings.Repeat("x", 1000)+eol+eol, size/1000))
		bigScanned, n := scanWork(t, big, chunk)
		if n != 1 {
			t.Fatalf("eol %q: %d events from one", eol, n)
		}
		smallScanned, _ := scanWork(t, small, chunk)
		t.Logf("eol %q: one %d-byte event: %d bytes scanned; %d bytes of small events: %d scanned",
			eol, len(big), bigScanned, len(small), smallScanned)
		if bigScanned > 2*len(big) || bigScanned > 2*smallScanned {
			t.Fatalf("eol %q: scanned %d bytes to frame one %d-byte event (small events: %d), want linear",
				eol, bigScanned, len(big), smallScanned)
		}
	}
}

// TestReaderScanManyLinesLinear: an event of many short lines (one '\n'
// far behind many '\r's, or the reverse) is still scanned in linear work.
func TestReaderScanManyLinesLinear(t *testing.T) {
	f := func(name string, stream []byte) {
		t.Helper()
		scanned, _ := scanWork(t, stream, 1<<10)
		if scanned > 2*len(stream) {
			t.Fatalf("%s: scanned %d bytes of %d", name, scanned, len(stream))
		}
	}
	f("cr lines", []byte(strings.Repeat("data: x\r", 100_000)+"\r"))
	f("lf lines", []byte(strings.Repeat("data: x\n", 100_000)+"\n"))
	f("crlf lines", []byte(strings.Repeat("data: x\r\n", 100_000)+"\r\n"))
}

// refEventEnd is the stateless framing rule, rescanning from the event's
// first byte: the reference the carried scan must agree with.
func refEventEnd(b []byte) int {
	lineStart := 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\n' && c != '\r' {
			continue
		}
		if c == '\r' {
			if i+1 == len(b) {
				return 0
			}
			if b[i+1] == '\n' {
				i++
			}
		}
		if lineStart == i || (c == '\r' && lineStart == i-1 && b[i] == '\n') {
			return i + 1
		}
		lineStart = i + 1
	}
	return 0
}

// refFrame splits a whole stream with refEventEnd.
func refFrame(stream []byte) []string {
	var out []string
	for len(stream) > 0 {
		n := refEventEnd(stream)
		if n == 0 {
			if len(bytes.TrimSpace(stream)) > 0 {
				out = append(out, string(stream))
			}
			break
		}
		out = append(out, string(stream[:n]))
		stream = stream[n:]
	}
	return out
}

// rawRest reads rd to its end and returns the raw bytes of each event.
func rawRest(t *testing.T, rd *Reader) []string {
	t.Helper()
	var out []string
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(ev.Raw))
	}
}

// TestReaderFramingMatchesReference: random streams of short lines with
// every kind of line ending, read in random chunk sizes, split into the
// same events as the stateless rule splits the whole stream.
func TestReaderFramingMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	pieces := []string{"data: a", "event: e", ": c", "\n", "\r", "\r\n", "x", "data:", "\n\n", "\r\r"}
	for iter := 0; iter < 2000; iter++ {
		var b []byte
		for n := rng.Intn(40); n > 0; n-- {
			b = append(b, pieces[rng.Intn(len(pieces))]...)
		}
		want := refFrame(b)
		var rd Reader
		rd.MaxEvent = 1 << 20
		rd.Reset(&chunkReader{b: b, n: 1 + rng.Intn(8)})
		got := rawRest(t, &rd)
		rd.Release()
		if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Fatalf("stream %q:\n got %q\nwant %q", b, got, want)
		}
	}
}
