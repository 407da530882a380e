package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Size is a byte count written in YAML as a plain integer (67108864) or
// with a unit: KiB, MiB, GiB, TiB (powers of 1024) or KB, MB, GB, TB
// (powers of 1000), case-insensitive, optionally after a space
// ("64MiB", "512 KB", "1.5GiB").
type Size int64

// N returns s as an int64.
func (s Size) N() int64 { return int64(s) }

var sizeUnits = []struct {
	suffix string
	mult   float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30},
	{"b", 1},
}

// ParseSize parses a size such as "64MiB" or "1048576".
func ParseSize(s string) (Size, error) {
	t := strings.TrimSpace(s)
	if n, err := strconv.ParseInt(strings.ReplaceAll(t, "_", ""), 10, 64); err == nil {
		return Size(n), nil
	}
	low := strings.ToLower(t)
	for _, u := range sizeUnits {
		num, ok := strings.CutSuffix(low, u.suffix)
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || strings.ContainsAny(num, "eEx") {
			break
		}
		v := f * u.mult
		if v > math.MaxInt64/2 || v < math.MinInt64/2 {
			return 0, fmt.Errorf("size %q is too large", clip(s))
		}
		return Size(math.Round(v)), nil
	}
	return 0, fmt.Errorf("cannot parse size %q (want bytes, or e.g. 64MiB, 512KB)", clip(s))
}

// UnmarshalText parses a size such as "64MiB".
func (s *Size) UnmarshalText(b []byte) error {
	v, err := ParseSize(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// MarshalText writes the size with the largest binary unit that divides
// it exactly, else as a plain integer.
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// MarshalYAML writes a size without a unit as a YAML integer.
func (s Size) MarshalYAML() (any, error) {
	if str := s.String(); str[len(str)-1] != 'B' {
		return int64(s), nil
	}
	return s.String(), nil
}

func (s Size) String() string {
	units := []string{"TiB", "GiB", "MiB", "KiB"}
	for i, u := range units {
		m := int64(1) << (10 * (len(units) - i))
		if s != 0 && int64(s)%m == 0 {
			return strconv.FormatInt(int64(s)/m, 10) + u
		}
	}
	return strconv.FormatInt(int64(s), 10)
}
