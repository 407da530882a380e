package failover

import (
	"math"
	"time"

	"github.com/valyala/fasthttp"
)

// RetryAfter parses a Retry-After value: delay seconds or an HTTP date
// (a date at or before now is no wait). False when v is empty or neither.
// More seconds than a Duration holds is the largest Duration, never a
// wrapped one: the rest is then the configured maximum.
func RetryAfter(v []byte, now time.Time) (time.Duration, bool) {
	if len(v) == 0 {
		return 0, false
	}
	if n, err := fasthttp.ParseUint(v); err == nil {
		return seconds(n), true
	}
	if t, err := fasthttp.ParseHTTPDate(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d, true
		}
		return 0, true
	}
	return 0, false
}

// maxSeconds is the most whole seconds a Duration holds.
const maxSeconds = int(math.MaxInt64 / time.Second)

// seconds returns n seconds, saturating at the largest Duration.
func seconds(n int) time.Duration {
	if n > maxSeconds {
		return math.MaxInt64
	}
	return time.Duration(n) * time.Second
}
