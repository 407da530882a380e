package sse

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

type got struct{ name, data, raw string }

func readAll(t *testing.T, r io.Reader, max int) ([]got, error) {
	t.Helper()
	var rd Reader
	rd.MaxEvent = max
	rd.Reset(r)
	defer rd.Release()
	var out []got
	for {
		ev, err := rd.Next()
		if err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
		out = append(out, got{string(ev.Name), string(ev.Data), string(ev.Raw)})
	}
}

func TestReaderFraming(t *testing.T) {
	f := func(in string, want ...got) {
		t.Helper()
		for _, r := range []io.Reader{strings.NewReader(in), iotest.OneByteReader(strings.NewReader(in))} {
			evs, err := readAll(t, r, 0)
			if err != nil {
				t.Fatalf("%q: %v", in, err)
			}
			if len(evs) != len(want) {
				t.Fatalf("%q: got %d events %q, want %d", in, len(evs), evs, len(want))
			}
			for i := range want {
				if evs[i] != want[i] {
					t.Fatalf("%q: event %d = %q, want %q", in, i, evs[i], want[i])
				}
			}
		}
	}
	f("")
	f("data: {}\n\n", got{"", "{}", "data: {}\n\n"})
	f("event: a\ndata: 1\n\nevent: b\ndata: 2\n\n",
		got{"a", "1", "event: a\ndata: 1\n\n"}, got{"b", "2", "event: b\ndata: 2\n\n"})
	f("data: x\r\n\r\ndata: y\r\n\r\n", got{"", "x", "data: x\r\n\r\n"}, got{"", "y", "data: y\r\n\r\n"})
	f(": ping\n\ndata: [DONE]\n\n", got{"", "", ": ping\n\n"}, got{"", "[DONE]", "data: [DONE]\n\n"})
	f("data:nospace\n\n", got{"", "nospace", "data:nospace\n\n"})
	f("data: a\ndata: b\n\n", got{"", "a\nb", "data: a\ndata: b\n\n"})
	// A stream that ends without the final blank line still yields its event.
	f("data: {\"a\":1}\n", got{"", `{"a":1}`, "data: {\"a\":1}\n"})
	f("data: last", got{"", "last", "data: last"})
}

// TestReaderPartial: only an event cut off by the end of the stream (no
// closing blank line) is marked Partial.
func TestReaderPartial(t *testing.T) {
	f := func(in string, want ...bool) {
		t.Helper()
		var rd Reader
		rd.Reset(strings.NewReader(in))
		defer rd.Release()
		for i, w := range want {
			ev, err := rd.Next()
			if err != nil || ev.Partial != w {
				t.Fatalf("%q: event %d: Partial %v, err %v; want %v", in, i, ev.Partial, err, w)
			}
		}
		if _, err := rd.Next(); err != io.EOF {
			t.Fatalf("%q: after the events: %v", in, err)
		}
	}
	f("data: 1\n\ndata: 2\n\n", false, false)
	f("data: 1\n\ndata: {\"type\":\"content_block_delt", false, true)
	f("data: 1\r\n\r\ndata: 2\r\n", false, true)
	f("data: 1\r\r", false)
	f("data: 1\r\n\r", false)
	f("data: 1\r", true)
}

func TestReaderCommentHasNoData(t *testing.T) {
	var rd Reader
	rd.Reset(strings.NewReader(": keepalive\n\n"))
	defer rd.Release()
	ev, err := rd.Next()
	if err != nil || !ev.IsComment() {
		t.Fatalf("got %+v, %v", ev, err)
	}
}

func TestReaderGrowsForLargeEvent(t *testing.T) {
	big := strings.Repeat("x", 100_000)
	evs, err := readAll(t, strings.NewReader("data: "+big+"\n\ndata: small\n\n"), 0)
	if err != nil || len(evs) != 2 || evs[0].data != big || evs[1].data != "small" {
		t.Fatalf("got %d events, err %v", len(evs), err)
	}
}

func TestReaderTooLarge(t *testing.T) {
	big := strings.Repeat("x", 100_000)
	_, err := readAll(t, strings.NewReader("data: "+big+"\n\n"), 50_000)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}

func TestReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("data: 1\n\n"), iotest.ErrReader(boom))
	evs, err := readAll(t, r, 0)
	if len(evs) != 1 || !errors.Is(err, boom) {
		t.Fatalf("got %q, %v", evs, err)
	}
}

func TestAppend(t *testing.T) {
	b := AppendEvent(nil, "message_stop", []byte(`{"type":"message_stop"}`))
	b = AppendData(b, []byte("[DONE]"))
	b = AppendEventStart(b, "x")
	b = append(b, "{}"...)
	b = AppendEventEnd(b)
	want := "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\ndata: [DONE]\n\nevent: x\ndata: {}\n\n"
	if string(b) != want {
		t.Fatalf("got %q", b)
	}
}

func TestWalk(t *testing.T) {
	var got []string
	n, err := Walk([]byte(": ping\n\nevent: a\ndata: 1\n\ndata: 2\n\n"), func(i int, ev *Event) error {
		got = append(got, fmt.Sprintf("%d:%s:%s", i, ev.Name, ev.Data))
		return nil
	})
	if err != nil || n != 2 || strings.Join(got, ",") != "0:a:1,1::2" {
		t.Fatalf("Walk = %d, %v, %q", n, err, got)
	}
	boom := errors.New("boom")
	n, err = Walk([]byte("data: 1\n\ndata: 2\n\n"), func(i int, _ *Event) error {
		if i == 1 {
			return boom
		}
		return nil
	})
	if n != 1 || err != boom {
		t.Fatalf("stop at fn's error: %d, %v", n, err)
	}
}

// countingReader counts the reads made of it.
type countingReader struct {
	r     io.Reader
	reads int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads++
	return c.r.Read(p)
}

// TestReaderReady: Ready is true exactly when Next can return an event
// without reading, never reads itself, and asking it costs no second scan.
func TestReaderReady(t *testing.T) {
	// Two whole events and a third cut short arrive in the first read.
	cr := &countingReader{r: iotest.HalfReader(strings.NewReader("data: 1\n\nevent: e\ndata: 2\n\ndata: 3"))}
	var rd Reader
	rd.Reset(cr)
	defer rd.Release()
	if rd.Ready() || cr.reads != 0 {
		t.Fatalf("Ready before any read = %v after %d reads", rd.Ready(), cr.reads)
	}
	ev, err := rd.Next()
	if err != nil || string(ev.Data) != "1" {
		t.Fatalf("Next = %q, %v", ev.Data, err)
	}
	reads := cr.reads
	if !rd.Ready() {
		t.Fatal("Ready = false with the second event buffered")
	}
	scanned := rd.scanned
	if ev, err = rd.Next(); err != nil || string(ev.Data) != "2" || cr.reads != reads {
		t.Fatalf("Next = %q, %v after %d more reads", ev.Data, err, cr.reads-reads)
	}
	if rd.scanned != scanned {
		t.Fatalf("Next scanned %d bytes Ready had scanned already", rd.scanned-scanned)
	}
	if rd.Ready() || cr.reads != reads {
		t.Fatalf("Ready = true with only a partial event buffered (or it read: %d)", cr.reads-reads)
	}
	if rest := rawRest(t, &rd); len(rest) != 1 || rest[0] != "data: 3" {
		t.Fatalf("rest = %q, want the partial third event", rest)
	}
}

// TestIsKeepAlive: comments, events without data and Anthropic's ping
// events keep a connection open; any event with data is progress.
func TestIsKeepAlive(t *testing.T) {
	f := func(raw string, want bool) {
		t.Helper()
		var rd Reader
		rd.Reset(strings.NewReader(raw))
		defer rd.Release()
		ev, err := rd.Next()
		if err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		if got := ev.IsKeepAlive(); got != want {
			t.Fatalf("%q: IsKeepAlive = %v, want %v", raw, got, want)
		}
	}
	f(": ping\n\n", true)
	f(":\n\n", true)
	f("data:\n\n", true)
	f("event: ping\ndata: {\"type\": \"ping\"}\n\n", true)
	f("id: 7\nretry: 100\n\n", true)
	f("data: {\"choices\":[]}\n\n", false)
	f("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", false)
	f("data: [DONE]\n\n", false)
}

func TestIndexEOL(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 100)
	for _, c := range []struct {
		in   string
		want int
	}{
		{"", -1},
		{"abc", -1},
		{"a\nb", 1},
		{"a\rb", 1},
		{"a\r\nb", 1},
		{"ab\n\r", 2},
		{long + "\n" + long + "\r", 100},
		{long + "\r" + long + "\n", 100},
		{long, -1},
	} {
		if got := IndexEOL([]byte(c.in)); got != c.want {
			t.Errorf("IndexEOL(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

// TestReaderReleaseDropsLargeData: an event of many data lines grows the
// scratch that joins them; Release must not keep a large one, or a pooled
// reader pins one big event's size for the life of the process.
func TestReaderReleaseDropsLargeData(t *testing.T) {
	line := "data: " + strings.Repeat("x", 1023) + "\n"
	big := strings.Repeat(line, 8192) + "\n" // ~8 MB of data over 8192 lines
	var rd Reader
	rd.Reset(strings.NewReader(big))
	ev, err := rd.Next()
	if err != nil || len(ev.Data) != 8192*1024-1 {
		t.Fatalf("big event: %d data bytes, %v", len(ev.Data), err)
	}
	rd.Release()
	rd.Reset(strings.NewReader("data: a\ndata: b\n\n"))
	if ev, err := rd.Next(); err != nil || string(ev.Data) != "a\nb" {
		t.Fatalf("small event: %q, %v", ev.Data, err)
	}
	rd.Release()
	if c := cap(rd.data); c > maxData {
		t.Fatalf("after Release the data scratch keeps %d bytes, want at most %d", c, maxData)
	}
}
