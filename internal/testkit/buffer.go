package testkit

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// Buffer is a bytes.Buffer safe for one writer (a server's log) and a
// reader (the test) at once. The zero value is ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// Bytes returns a copy of what was written so far.
func (s *Buffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// WaitFor waits until the buffer holds every one of want (a log line a
// server writes after its answer, say) and fails the test with the
// buffer's content if it does not within d.
func (s *Buffer) WaitFor(t testing.TB, d time.Duration, want ...string) {
	t.Helper()
	missing := ""
	held := Eventually(d, func() bool {
		missing = ""
		text := s.String()
		for _, w := range want {
			if !strings.Contains(text, w) {
				missing = w
				return false
			}
		}
		return true
	})
	if !held {
		t.Fatalf("timed out after %v: the log lacks %q:\n%s", d, missing, s.String())
	}
}
