package failover

import (
	"time"

	"github.com/valyala/fasthttp"
)

// RetryAfter parses a Retry-After value: delay seconds or an HTTP date
// (a date at or before now is no wait). False when v is empty or neither.
func RetryAfter(v []byte, now time.Time) (time.Duration, bool) {
	if len(v) == 0 {
		return 0, false
	}
	if n, err := fasthttp.ParseUint(v); err == nil {
		return time.Duration(n) * time.Second, true
	}
	if t, err := fasthttp.ParseHTTPDate(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d, true
		}
		return 0, true
	}
	return 0, false
}
