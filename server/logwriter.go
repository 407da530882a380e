package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// JSONLines wraps w so that each Write becomes one JSON object on its own
// line, {"time","level","msg"}, as slog's JSON handler writes it: with
// log.format json every line slipstream writes is JSON, the start-up
// summary, reloads, upstream errors and TLS messages as much as the
// access log. A Write that already is a JSON object (an access-log line)
// passes through. Each Write is one record, as log.Logger and the
// summary's Fprintf calls make it; a message of several lines (a stack
// after a BUG line) stays one record. The level comes from the message's
// prefix: "warning:" WARN, "BUG:" and "upstream error:" ERROR, else INFO.
// Safe for concurrent use.
func JSONLines(w io.Writer) io.Writer {
	if j, ok := w.(*jsonLines); ok {
		return j
	}
	return &jsonLines{w: w, h: slog.NewJSONHandler(w, nil)}
}

type jsonLines struct {
	mu sync.Mutex
	w  io.Writer
	h  slog.Handler
}

// levelPrefixes map a message's first words to its level.
var levelPrefixes = [...]struct {
	prefix string
	level  slog.Level
	strip  bool
}{
	{"warning: ", slog.LevelWarn, true},
	{"BUG: ", slog.LevelError, false},
	{"upstream error: ", slog.LevelError, false},
}

func (j *jsonLines) Write(p []byte) (int, error) {
	msg := bytes.TrimSpace(p)
	if len(msg) == 0 {
		return len(p), nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if msg[0] == '{' && msg[len(msg)-1] == '}' {
		if _, err := j.w.Write(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	level := slog.LevelInfo
	for _, l := range levelPrefixes {
		if bytes.HasPrefix(msg, []byte(l.prefix)) {
			level = l.level
			if l.strip {
				msg = msg[len(l.prefix):]
			}
			break
		}
	}
	r := slog.NewRecord(time.Now(), level, string(msg), 0)
	if err := j.h.Handle(context.Background(), r); err != nil {
		return 0, err
	}
	return len(p), nil
}
