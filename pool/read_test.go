package pool

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestAppendCapped(t *testing.T) {
	f := func(prefix, body string, wrap func(io.Reader) io.Reader, maxBytes int, want string, wantErr error) {
		t.Helper()
		got, err := AppendCapped([]byte(prefix), wrap(strings.NewReader(body)), maxBytes)
		if !errors.Is(err, wantErr) || string(got) != want {
			t.Fatalf("AppendCapped(%q, %q, %d) = %q, %v; want %q, %v", prefix, body, maxBytes, got, err, want, wantErr)
		}
		b := Get(0)
		b.B = append(b.B, prefix...)
		n, err := ReadCapped(b, wrap(strings.NewReader(body)), maxBytes)
		if !errors.Is(err, wantErr) || string(b.B) != want || n != len(want)-len(prefix) {
			t.Fatalf("ReadCapped(%q, %q, %d) = %q (%d), %v; want %q, %v", prefix, body, maxBytes, b.B, n, err, want, wantErr)
		}
		Put(b)
	}
	same := func(r io.Reader) io.Reader { return r }
	for name, wrap := range map[string]func(io.Reader) io.Reader{
		"whole": same, "one byte": iotest.OneByteReader, "half": iotest.HalfReader, "data+EOF": iotest.DataErrReader,
	} {
		t.Run(name, func(t *testing.T) {
			f("", "", wrap, 4, "", nil)
			f("", "abc", wrap, 4, "abc", nil)
			f("", "abcd", wrap, 4, "abcd", nil)          // exactly at the cap
			f("", "abcde", wrap, 4, "abcde", ErrOverCap) // one over: the probe byte is kept
			f("", "abcdefgh", wrap, 4, "abcde", ErrOverCap)
			f("xy", "abcd", wrap, 4, "xyabcd", nil) // the cap counts appended bytes only
			f("xy", "abcdefgh", wrap, 4, "xyabcde", ErrOverCap)
			f("", "abc", wrap, 0, "a", ErrOverCap)
			f("", "", wrap, 0, "", nil)
			f("", "abc", wrap, -1, "a", ErrOverCap)
		})
	}
}

func TestAppendCappedLeavesTheRest(t *testing.T) {
	r := strings.NewReader("abcdefgh")
	got, err := AppendCapped(nil, r, 4)
	rest, _ := io.ReadAll(r)
	if err != ErrOverCap || string(got)+string(rest) != "abcdefgh" {
		t.Fatalf("read %q then %q (%v): bytes lost or repeated", got, rest, err)
	}
}

func TestAppendCappedErrors(t *testing.T) {
	boom := errors.New("boom")
	got, err := AppendCapped(nil, io.MultiReader(strings.NewReader("ab"), iotest.ErrReader(boom)), 10)
	if err != boom || string(got) != "ab" {
		t.Fatalf("got %q, %v; want the bytes before the error and the error", got, err)
	}
	got, err = AppendCapped(nil, iotest.TimeoutReader(strings.NewReader("abcdef")), 10)
	if err != iotest.ErrTimeout || len(got) == 0 {
		t.Fatalf("got %q, %v; want the first read's bytes and ErrTimeout", got, err)
	}
	got, err = AppendCapped(nil, emptyReader{}, 10)
	if err != io.ErrNoProgress || len(got) != 0 {
		t.Fatalf("got %q, %v; want io.ErrNoProgress", got, err)
	}
}

func TestAppendCappedLarge(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 100_000) // 1 MB, many growths
	got, err := AppendCapped(nil, iotest.HalfReader(bytes.NewReader(body)), len(body))
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("1 MB read: %d bytes, %v", len(got), err)
	}
	if cap(got) > 2*len(body)+minRead {
		t.Fatalf("capacity %d for %d bytes: grows too far", cap(got), len(body))
	}
	b := Get(0)
	n, err := ReadCapped(b, iotest.HalfReader(bytes.NewReader(body)), len(body))
	if err != nil || n != len(body) || !bytes.Equal(b.B, body) {
		t.Fatalf("1 MB pooled read: %d bytes, %v", n, err)
	}
	Put(b)
	got, err = AppendCapped(nil, bytes.NewReader(body), 1000)
	if err != ErrOverCap || len(got) != 1001 || cap(got) > 1001+minRead {
		t.Fatalf("over the cap: %d bytes (cap %d), %v", len(got), cap(got), err)
	}
}

// emptyReader never yields a byte and never fails.
type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }
