package testkit

import (
	"testing"
	"time"
)

// Poll is how often WaitFor and Eventually look at their condition.
const Poll = 5 * time.Millisecond

// Eventually polls cond until it holds (true) or d passes (false).
func Eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(Poll)
	}
	return true
}

// WaitFor waits for cond, the event a test depends on, and fails the test
// naming what if it has not happened within d. It returns as soon as cond
// holds: d bounds a broken run, it is not a delay.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Eventually(d, cond) {
		t.Fatalf("timed out after %v waiting for %s", d, what)
	}
}
