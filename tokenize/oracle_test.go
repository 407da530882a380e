package tokenize

import (
	"strconv"
	"sync"
	"testing"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// The oracle is tiktoken-go with its offline loader. It is slow to load
// (about half a second and 24 MB per encoding), so each is loaded once per
// test binary, and never in the memory test's subprocess.
var (
	oracleOnce sync.Once
	oracles    map[string]*tiktoken.Tiktoken
	oracleMu   sync.Mutex
)

func oracle(tb testing.TB, name string) *tiktoken.Tiktoken {
	tb.Helper()
	oracleOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		oracles = map[string]*tiktoken.Tiktoken{}
	})
	oracleMu.Lock()
	defer oracleMu.Unlock()
	if o := oracles[name]; o != nil {
		return o
	}
	o, err := tiktoken.GetEncoding(name)
	if err != nil {
		tb.Fatalf("cannot load oracle %s: %s", name, err)
	}
	oracles[name] = o
	return o
}

// oracleIDs returns tiktoken-go's EncodeOrdinary ids for text as uint32.
func oracleIDs(tb testing.TB, name string, text []byte) []uint32 {
	tb.Helper()
	got := oracle(tb, name).EncodeOrdinary(string(text))
	ids := make([]uint32, len(got))
	for i, id := range got {
		ids[i] = uint32(id)
	}
	return ids
}

// firstDiff returns the index of the first differing id, or -1.
func firstDiff(a, b []uint32) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// checkExact fails tb unless both encodings of text equal the oracle's.
func checkExact(tb testing.TB, e *Encoding, text []byte) {
	tb.Helper()
	want := oracleIDs(tb, e.Name(), text)
	got := e.AppendTokens(nil, text)
	if i := firstDiff(got, want); i >= 0 {
		tb.Fatalf("%s: ids differ at token %d of %q\ngot  %v\nwant %v\ngot  pieces %q\nwant pieces %q",
			e.Name(), i, clip(text), clipIDs(got, i), clipIDs(want, i),
			decodeEach(e, clipIDs(got, i)), decodeEach(e, clipIDs(want, i)))
	}
	if n := e.Count(text); n != len(want) {
		tb.Fatalf("%s: Count(%q) = %d, want %d", e.Name(), clip(text), n, len(want))
	}
}

func clip(b []byte) []byte {
	if len(b) > 200 {
		return b[:200]
	}
	return b
}

func clipIDs(ids []uint32, at int) []uint32 {
	lo, hi := max(0, at-3), min(len(ids), at+4)
	if lo > hi {
		return nil
	}
	return ids[lo:hi]
}

func decodeEach(e *Encoding, ids []uint32) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(e.Decode(nil, []uint32{id}))
	}
	return out
}

func syncOnceReset() sync.Once { return sync.Once{} }

func itoa(n int) string { return strconv.Itoa(n) }
