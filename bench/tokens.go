package bench

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
	"time"

	"slipstream/tokenize"
	"slipstream/tokenize/corpus"
)

// The tokens workload: how fast slipstream's tokenizer counts, against
// its budgets (docs/BENCHMARKS.md, Tokenizer). Count runs over 1 MiB of
// the mixed corpus (prose, code, an agent request: >= 100 MB/s) and over
// 1 MiB of all of it (six more scripts, emoji, base64: >= 60 MB/s), for
// both encodings, in the harness's own process on one locked OS thread;
// the figure is MB per CPU-second of that thread, so other processes on
// the core do not count. The corpus is read from the repository
// (corpus.Dir): the workload runs from its root, as make bench does.

// tokensFor is how long one run of a case counts.
const tokensFor = time.Second

func runTokens(ctx context.Context, env *Env) error {
	files, err := corpus.Read(corpus.Dir)
	if err != nil {
		env.Report.Notef("tokens: skipped: %v", err)
		return nil
	}
	inputs := []struct {
		name   string
		text   []byte
		budget float64
	}{
		{"mix1MB", files.Mix(1 << 20), 100},
		{"all1MB", files.All(1 << 20), 60},
	}
	for _, e := range []*tokenize.Encoding{tokenize.O200k(), tokenize.Cl100k()} {
		for _, in := range inputs {
			if ctx.Err() != nil {
				return nil //nolint:nilerr // a cancelled run ends with what it measured
			}
			row := Row{Workload: "tokens", Case: "Count " + e.Name() + " " + in.name, Target: "slipstream", BudgetMBPerSec: in.budget}
			var runs []float64
			for i := 0; i < max(env.Opts.Runs, 1); i++ {
				runs = append(runs, countRate(e, in.text))
			}
			row.Runs = len(runs)
			row.MBPerSec = median(runs)
			row.Failed = row.MBPerSec < in.budget
			row.Note = fmt.Sprintf("%d tokens; runs %s MB/s", e.Count(in.text), joinFloats(runs))
			env.logf("tokens     %-32s %.0f MB/s (budget %.0f)", row.Case, row.MBPerSec, in.budget)
			env.Report.Add(row)
		}
	}
	return nil
}

// countRate counts text over and over for tokensFor of this thread's CPU
// time (after one warm-up count) and returns MB per CPU-second.
func countRate(e *tokenize.Encoding, text []byte) float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	e.Count(text)
	start := threadCPU()
	n := 0
	for threadCPU()-start < tokensFor {
		e.Count(text)
		n++
	}
	return float64(n*len(text)) / (threadCPU() - start).Seconds() / 1e6
}

// threadCPU is the calling thread's CPU time, user and system (0 when it
// cannot be read, which ends countRate's loop at once).
func threadCPU() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD, Linux
	var ru syscall.Rusage
	if syscall.Getrusage(rusageThread, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// joinFloats prints the runs of a case, in order.
func joinFloats(v []float64) string {
	s := ""
	for i, f := range v {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%.0f", f)
	}
	return s
}
