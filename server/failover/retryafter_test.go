package failover

import (
	"testing"
	"time"

	"slipstream/server/config"
	"slipstream/server/provider"
)

// TestRetryAfterHuge: a Retry-After of more seconds than a Duration holds
// rests the credential the configured maximum, never a wrapped (negative
// or tiny) time.
func TestRetryAfterHuge(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fo := config.Failover{RateLimitedMax: config.Duration(30 * time.Minute)}
	f := func(v string) {
		t.Helper()
		d, ok := RetryAfter([]byte(v), now)
		if !ok {
			t.Fatalf("RetryAfter(%q): not parsed", v)
		}
		verdict := Classify(&fo, Outcome{Status: 429, RetryAfter: d, HasRetryAfter: true})
		until := provider.NewLocal().Cool(1, 1, now.UnixNano(), verdict.Rest)
		if rest := time.Duration(until - now.UnixNano()); rest != 30*time.Minute {
			t.Errorf("Retry-After %q (parsed %v) rests %v, want 30m", v, d, rest)
		}
	}
	f("9223372037")
	f("18446744074")
	f("99999999999")
	f("9223372036") // the largest count of seconds a Duration holds
}
