package tokenize

import (
	"bytes"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// loopCPU runs fn in b.Loop and reports, beside the wall-clock MB/s, the
// bytes per second of this thread's CPU time ("MB/cpu-s"): on a shared
// machine the wall clock also counts the time other processes hold the
// core, the thread's CPU time does not.
func loopCPU(b *testing.B, size int, fn func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.SetBytes(int64(size))
	start := threadCPU(b)
	for b.Loop() {
		fn()
	}
	if cpu := threadCPU(b) - start; cpu > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/cpu.Seconds()/1e6, "MB/cpu-s")
	}
}

// threadCPU returns the CPU time (user and system) of the calling thread.
func threadCPU(b *testing.B) time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD, Linux
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		b.Fatalf("cannot read thread CPU time: %s", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// mixText returns size bytes of prose, code and JSON (corpus.MixFiles),
// repeated and cut at a rune boundary.
func mixText(tb testing.TB, size int) []byte { return corpusFiles(tb).Mix(size) }

// allText is mixText over the whole corpus: adds prose in six other
// scripts, emoji, base64 and the edge-case files.
func allText(tb testing.TB, size int) []byte { return corpusFiles(tb).All(size) }

func BenchmarkFirstUse(b *testing.B) {
	for _, blob := range []struct {
		name string
		data string
	}{{"o200k_base", o200kBlob}, {"cl100k_base", cl100kBlob}} {
		b.Run(blob.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				newTable(blob.data, 3)
			}
		})
	}
}

func BenchmarkFirstUseTiktoken(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		oracles = nil
		oracleOnce = syncOnceReset()
		oracle(b, "o200k_base")
	}
}

// countInput is one input of the Count benchmarks.
type countInput struct {
	name string
	text []byte
}

// countInputs are the Count benchmarks' inputs: 1 MiB of the mixed
// corpus and 1 MiB of all of it (docs/TOKENS.md).
func countInputs(b *testing.B) []countInput {
	return []countInput{{"mix1MB", mixText(b, 1<<20)}, {"all1MB", allText(b, 1<<20)}}
}

func BenchmarkCount(b *testing.B) {
	inputs := countInputs(b)
	for _, e := range []*Encoding{O200k(), Cl100k()} {
		for _, in := range inputs {
			b.Run(e.Name()+"/"+in.name, func(b *testing.B) {
				e.Count(nil)
				loopCPU(b, len(in.text), func() { e.Count(in.text) })
			})
		}
	}
}

// BenchmarkCountNoPieceCache is BenchmarkCount with the piece cache off:
// the inputs repeat a 14-29 KB corpus, so with it every merged piece after
// the first pass is a cache hit, which measures the cache, not merging.
func BenchmarkCountNoPieceCache(b *testing.B) {
	inputs := countInputs(b)
	for _, e := range []*Encoding{O200k(), Cl100k()} {
		for _, in := range inputs {
			b.Run(e.Name()+"/"+in.name, func(b *testing.B) {
				t := e.table()
				st := &state{noPieceCache: true}
				loopCPU(b, len(in.text), func() { st.encode(e, t, in.text, nil, false) })
			})
		}
	}
}

func BenchmarkCountTiktoken(b *testing.B) {
	inputs := []struct {
		name string
		text string
	}{{"mix1MB", string(mixText(b, 1<<20))}, {"all1MB", string(allText(b, 1<<20))}}
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		for _, in := range inputs {
			b.Run(name+"/"+in.name, func(b *testing.B) {
				o := oracle(b, name)
				loopCPU(b, len(in.text), func() { o.EncodeOrdinary(in.text) })
			})
		}
	}
}

func BenchmarkAppendTokens(b *testing.B) {
	text := mixText(b, 1<<20)
	e := O200k()
	dst := e.AppendTokens(nil, text)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		dst = e.AppendTokens(dst[:0], text)
	}
}

// runTexts are the worst cases for merging: one piece of 100 KB.
var runTexts = []struct {
	name string
	text []byte
}{
	{"a", bytes.Repeat([]byte("a"), 100<<10)},
	{"space", bytes.Repeat([]byte(" "), 100<<10)},
	{"newline", bytes.Repeat([]byte("\n"), 100<<10)},
	{"digit", bytes.Repeat([]byte("7"), 100<<10)},
	{"han", bytes.Repeat([]byte("中"), 100<<10/3)},
	{"ab", bytes.Repeat([]byte("ab"), 100<<10/2)},
}

func BenchmarkRun100KB(b *testing.B) {
	for _, e := range []*Encoding{O200k(), Cl100k()} {
		for _, run := range runTexts {
			b.Run(e.Name()+"/"+run.name, func(b *testing.B) {
				e.Count(nil)
				b.ReportAllocs()
				b.SetBytes(int64(len(run.text)))
				for b.Loop() {
					e.Count(run.text)
				}
			})
		}
	}
}

// BenchmarkRun100KBTiktoken takes seconds per iteration: it is quadratic.
func BenchmarkRun100KBTiktoken(b *testing.B) {
	o := oracle(b, "o200k_base")
	for _, run := range runTexts[:2] {
		text := string(run.text)
		b.Run("o200k_base/"+run.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				o.EncodeOrdinary(text)
			}
		})
	}
}

func BenchmarkMerge(b *testing.B) {
	t := O200k().table()
	st := acquireState()
	defer releaseState(st)
	for _, n := range []int{8, 16, 32, 48, 64, 128} {
		piece := bytes.Repeat([]byte("xq"), n/2)
		if n <= smallParts {
			b.Run("small/"+itoa(n), func(b *testing.B) {
				for b.Loop() {
					st.mergeSmallBytes(t, piece, nil, false)
				}
			})
			b.Run("smallParts/"+itoa(n), func(b *testing.B) {
				for b.Loop() {
					m := t.initParts(piece, st.small.start[:], st.small.rank[:])
					st.mergeSmall(t, piece, m, nil, false)
				}
			})
		}
		b.Run("heap/"+itoa(n), func(b *testing.B) {
			for b.Loop() {
				st.mergeHeap(t, piece, nil, false)
			}
		})
	}
}
