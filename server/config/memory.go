package config

import (
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// The default of limits.max_bytes_in_flight when the process has a memory
// limit: a quarter of it. Each admitted request holds its body (one
// exact-size buffer); a translated one also holds its translation (up to
// 1.1x the body), so the bodies of a full quarter take about half the limit
// at worst, leaving the other half for the Go runtime, the tokenizer
// tables, connection buffers and the collector's headroom. The make bench
// GOMEMLIMIT test runs this ratio (16 MiB of bodies under GOMEMLIMIT=64MiB)
// and keeps RSS within the limit.
const bytesInFlightShare = 4

// MemoryLimit returns the memory limit the process runs under: the smaller
// of Go's soft limit (GOMEMLIMIT or debug.SetMemoryLimit) and the cgroup
// limit (v2 memory.max, else v1 memory.limit_in_bytes), or 0 when neither
// is set.
func MemoryLimit() int64 {
	lim := int64(0)
	if v := debug.SetMemoryLimit(-1); v > 0 && v < math.MaxInt64 {
		lim = v
	}
	if v := cgroupMemoryLimit(); v > 0 && (lim == 0 || v < lim) {
		lim = v
	}
	return lim
}

// DerivedBytesInFlight is the default of limits.max_bytes_in_flight for a
// memory limit (0: no limit, no cap).
func DerivedBytesInFlight(memLimit int64) Size {
	return Size(memLimit / bytesInFlightShare)
}

func cgroupMemoryLimit() int64 {
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 || n >= 1<<60 { // "max", or v1's "unlimited" (about 2^63)
			return 0
		}
		return n
	}
	return 0
}
