package anthropic

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"slipstream/codec"
	"slipstream/codec/sse"
)

type rawEvent struct{ name, data []byte }

// splitSSE frames a whole stream with the sse Reader, copying each event.
func splitSSE(t testing.TB, stream []byte) []rawEvent {
	t.Helper()
	var rd sse.Reader
	rd.Reset(bytes.NewReader(stream))
	defer rd.Release()
	var out []rawEvent
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("sse: %v", err)
		}
		if ev.IsComment() {
			continue
		}
		out = append(out, rawEvent{bytes.Clone(ev.Name), bytes.Clone(ev.Data)})
	}
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var eventNames = [...]string{"start", "text", "thinking", "sig", "redacted", "call", "args", "stop", "usage", "finish", "end", "error"}

// dumpEvent renders an Event on one line for f-tests.
func dumpEvent(ev *codec.Event) string {
	s := fmt.Sprintf("%s#%d", eventNames[ev.Kind], ev.Block)
	switch ev.Kind {
	case codec.EventStart:
		s += fmt.Sprintf(" %s %s", ev.ID, ev.Name)
	case codec.EventToolCall:
		s += fmt.Sprintf(" %s %s", ev.ID, ev.Name)
	case codec.EventError:
		return fmt.Sprintf("error %d %d %s %s", ev.Err.Status, ev.Err.Kind, ev.Err.Message, ev.Err.Code)
	case codec.EventFinish:
		s += fmt.Sprintf(" stop=%d", ev.Stop)
	}
	if len(ev.Text) > 0 {
		s += " " + string(ev.Text)
	}
	if ev.Usage.Known {
		u := ev.Usage
		s += fmt.Sprintf(" [in=%d cr=%d cw=%d out=%d r=%d]", u.Input, u.CacheRead, u.CacheWrite, u.Output, u.Reasoning)
	}
	return s
}

func dumpEvents(evs []codec.Event) string {
	var b strings.Builder
	for i := range evs {
		b.WriteString(strings.TrimRight(dumpEvent(&evs[i]), " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// decodeStream runs a whole upstream stream through a Decoder, copying
// nothing: the caller must consume each batch before the next call, so it
// renders them as it goes.
func decodeStream(t testing.TB, d *Decoder, stream []byte, each func([]codec.Event)) {
	t.Helper()
	var evs []codec.Event
	for _, e := range splitSSE(t, stream) {
		var err error
		evs, err = d.DecodeEvent(evs[:0], e.name, e.data)
		if err != nil {
			t.Fatalf("DecodeEvent(%s): %v", e.data, err)
		}
		each(evs)
	}
}
