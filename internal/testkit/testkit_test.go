package testkit

import (
	"net"
	"sync/atomic"
	"testing"
	"time"
)

func TestWaitForReturnsOnTheEvent(t *testing.T) {
	t.Parallel()
	var done atomic.Bool
	time.AfterFunc(20*time.Millisecond, func() { done.Store(true) })
	start := time.Now()
	WaitFor(t, 5*time.Second, "the flag", done.Load)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("WaitFor returned after %v, long after the event", d)
	}
	if Eventually(30*time.Millisecond, func() bool { return false }) {
		t.Fatal("Eventually held for a condition that never holds")
	}
}

func TestClosedAddrRefuses(t *testing.T) {
	t.Parallel()
	if c, err := net.Dial("tcp", ClosedAddr(t)); err == nil {
		c.Close()
		t.Fatal("a dial to ClosedAddr connected")
	}
}

func TestBuffer(t *testing.T) {
	t.Parallel()
	var b Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			_, _ = b.Write([]byte("x"))
		}
	}()
	for range 100 {
		_ = b.String()
	}
	<-done
	if got := len(b.Bytes()); got != 100 {
		t.Fatalf("%d bytes, want 100", got)
	}
}

func TestEnv(t *testing.T) {
	t.Parallel()
	if v, ok := Env()("HOME"); ok || v != "" {
		t.Fatalf("Env() holds HOME = %q", v)
	}
	env := Env("K", "v", "EMPTY", "")
	if v, ok := env("K"); !ok || v != "v" {
		t.Fatalf("K = %q, %v", v, ok)
	}
	if v, ok := env("EMPTY"); !ok || v != "" {
		t.Fatalf("EMPTY = %q, %v; want set and empty", v, ok)
	}
	if _, ok := env("OTHER"); ok {
		t.Fatal("OTHER is set")
	}
}

func TestBufferWaitFor(t *testing.T) {
	t.Parallel()
	var b Buffer
	time.AfterFunc(20*time.Millisecond, func() { _, _ = b.Write([]byte("one two\n")) })
	b.WaitFor(t, 5*time.Second, "one", "two")
}
