// Command slipstream-bench is slipstream's benchmark harness (docs/BENCHMARKS.md).
//
//	slipstream-bench [-out bench/out] [-workload small,stream,...] [-duration D] ...
//	slipstream-bench revproxy -upstream URL [-listen 127.0.0.1:0]
//
// It builds ./cmd/slipstream (or takes -slipstream BIN), starts a stub
// upstream in this process, and measures each workload against direct
// (the stub itself), a net/http/httputil.ReverseProxy baseline (this
// binary re-executed as `revproxy`), fastproxy (./bench/fastproxy, the
// least a fasthttp proxy holds: startup and live only) and slipstream,
// each started fresh,
// the proxies pinned to CPU 1 and this process to CPU 0 when taskset and
// two CPUs are available. It writes report.md and report.json into -out
// and exits 1 if any request failed or any gate failed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"slipstream/bench"
)

const pinnedEnv = "SLIPSTREAM_BENCH_PINNED"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "revproxy" {
		os.Exit(revproxyMain(os.Args[2:]))
	}
	os.Exit(benchMain())
}

// revproxyMain serves the baseline proxy and prints "listening ADDR".
func revproxyMain(args []string) int {
	fs := flag.NewFlagSet("revproxy", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on (loopback)")
	upstream := fs.String("upstream", "", "upstream base URL")
	fs.Parse(args) //nolint:errcheck // ExitOnError
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := bench.ServeReverseProxy(ctx, *listen, *upstream, func(addr string) {
		fmt.Printf("listening %s\n", addr)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

type flags struct {
	out, workloads, targets, slipstream string
	baseline                            string
	baselineBudget                      float64
	duration, warmup, rest              time.Duration
	runs                                int
	noPin, noPerf, noLedger             bool
	cpuprofile                          string
}

func parseFlags() *flags {
	f := &flags{}
	flag.StringVar(&f.out, "out", "bench/out", "directory for report.md and report.json")
	flag.StringVar(&f.workloads, "workload", "all", "comma-separated workloads: small,stream,large,translate,soak,fieldmix,startup,ws,live,guard,ledger,baseline,tokens")
	flag.StringVar(&f.baseline, "baseline", "", "an earlier slipstream binary for the baseline workload to pair this one with (default: the workload is skipped)")
	flag.Float64Var(&f.baselineBudget, "baseline-budget", 0, "baseline workload: CPU per request over the baseline's, in percent, that this build may not exceed (-15: at least 15% less)")
	flag.StringVar(&f.targets, "targets", "direct,revproxy,fastproxy,slipstream", "comma-separated targets")
	flag.StringVar(&f.slipstream, "slipstream", "", "prebuilt slipstream binary (default: go build ./cmd/slipstream)")
	flag.DurationVar(&f.duration, "duration", 0, "measured time per run (fieldmix: total time, at least 3 blocks; soak: load time); 0 = workload defaults")
	flag.DurationVar(&f.warmup, "warmup", 300*time.Millisecond, "warm-up per run")
	flag.DurationVar(&f.rest, "rest", 20*time.Second, "fieldmix rest after every 160 turns")
	flag.IntVar(&f.runs, "runs", 3, "runs per case; the median is reported")
	flag.BoolVar(&f.noPin, "no-pin", false, "do not pin processes with taskset")
	flag.BoolVar(&f.noPerf, "no-perf", false, "do not profile slipstream or count its system calls with perf (default: both when perf is installed)")
	flag.BoolVar(&f.noLedger, "no-ledger", false, "run slipstream with its usage ledger off (default: on, in an SQLite file in the run's directory)")
	flag.StringVar(&f.cpuprofile, "cpuprofile", "", "write the harness's own CPU profile (stub + load generator) to this file")
	flag.Parse()
	return f
}

func benchMain() int {
	f := parseFlags()
	cores := countCPUs()
	pin := bench.Pinning{}
	if ts, err := exec.LookPath("taskset"); err == nil && cores >= 2 && !f.noPin {
		if os.Getenv(pinnedEnv) == "" {
			return repin(ts)
		}
		pin = bench.Pinning{Taskset: ts, CPU: "1"}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env, cleanup, err := setup(f, pin, cores)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	if f.cpuprofile != "" {
		stopProfile, err := startProfile(f.cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer stopProfile()
	}
	for _, w := range bench.Workloads {
		if f.workloads != "all" && !inList(f.workloads, w.Name) {
			continue
		}
		fmt.Fprintf(os.Stderr, "== %s\n", w.Name)
		if err := w.Run(ctx, env); err != nil {
			env.Report.Notef("%s: %v", w.Name, err)
		}
	}
	return finish(env.Report, f.out)
}

// repin re-executes this binary on CPU 0 so that the stub and the load
// generator stay off the proxy's CPU.
func repin(taskset string) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot find own executable: %v\n", err)
		return 1
	}
	cmd := exec.Command(taskset, append([]string{"-c", "0", exe}, os.Args[1:]...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), pinnedEnv+"=1")
	signal.Ignore(os.Interrupt) // the child gets it from the terminal and reports
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		fmt.Fprintf(os.Stderr, "cannot run pinned harness: %v\n", err)
		return 1
	}
	return 0
}

func setup(f *flags, pin bench.Pinning, cores int) (*bench.Env, func(), error) {
	tmp, err := os.MkdirTemp("", "slipstream-bench-")
	if err != nil {
		return nil, nil, fmt.Errorf("cannot create temp dir: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("cannot find own executable: %w", err)
	}
	stub := bench.NewStub(bench.StubConfig{Events: 20})
	if err := stub.Start(); err != nil {
		return nil, nil, err
	}
	rep := &bench.Report{Conditions: conditions(cores, pin)}
	env := &bench.Env{
		Opts: bench.Options{Duration: f.duration, Warmup: f.warmup, Runs: max(f.runs, 1), Rest: f.rest,
			Pin: pin, Targets: strings.Split(f.targets, ","), NoLedger: f.noLedger, Log: os.Stderr,
			Baseline: f.baseline, BaselineBudget: f.baselineBudget / 100},
		Stub: stub, SelfExe: exe, TmpDir: tmp, Report: rep,
	}
	env.Slipstream = f.slipstream
	if perf, err := exec.LookPath("perf"); err == nil && !f.noPerf {
		env.Opts.Perf = perf
	}
	if env.Slipstream == "" && inList(f.targets, "slipstream") {
		env.Slipstream = build(tmp, "slipstream", "./cmd/slipstream", rep)
	}
	if inList(f.targets, "fastproxy") {
		env.FastProxy = build(tmp, "fastproxy", "./bench/fastproxy", rep)
	}
	cleanup := func() {
		stub.Close() //nolint:errcheck // exiting anyway
		os.RemoveAll(tmp)
	}
	return env, cleanup, nil
}

// build runs go build pkg into dir/name; on failure it notes why and
// returns "" (that target's rows are then skipped).
func build(dir, name, pkg string, rep *bench.Report) string {
	bin := filepath.Join(dir, name)
	out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		rep.Notef("%s skipped: `go build %s` failed: %s", name, pkg, msg)
		fmt.Fprintf(os.Stderr, "%s does not build, skipping it:\n%s\n", name, msg)
		return ""
	}
	return bin
}

func finish(rep *bench.Report, out string) int {
	rep.Finish()
	rep.TargetNotes()
	if err := rep.Write(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := rep.WriteMarkdown(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if rep.Failed() {
		fmt.Fprintln(os.Stderr, "bench: FAILED (errors or a gate failed; see the report)")
		return 1
	}
	return 0
}

func conditions(cores int, pin bench.Pinning) bench.Conditions {
	pinning := "not pinned"
	if pin.Taskset != "" {
		pinning = "proxy pinned to CPU 1, stub + load generator to CPU 0 (taskset)"
	}
	commit, _ := exec.Command("git", "rev-parse", "--short", "HEAD").Output() // best effort: no git, no commit
	return bench.Conditions{
		Date:      time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		CPU:       cpuModel(),
		Cores:     cores,
		GoVersion: runtime.Version(),
		Commit:    strings.TrimSpace(string(commit)),
		LoadAvg:   loadAvg(),
		Pinning:   pinning,
		Args:      strings.Join(append([]string{"slipstream-bench"}, os.Args[1:]...), " "),
	}
}

// countCPUs counts the machine's processors from /proc/cpuinfo (not the
// affinity mask, which is one CPU after repinning).
func countCPUs() int {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.NumCPU()
	}
	return max(strings.Count(string(b), "\nprocessor\t")+boolInt(strings.HasPrefix(string(b), "processor\t")), 1)
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func inList(list, name string) bool {
	for _, v := range strings.Split(list, ",") {
		if strings.TrimSpace(v) == name {
			return true
		}
	}
	return false
}

// loadAvg returns /proc/loadavg's first three figures: other work on the
// machine skews req/s and latency (CPU per request much less).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// startProfile starts a CPU profile of this process into path.
func startProfile(path string) (func(), error) {
	pf, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cannot create CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(pf); err != nil {
		pf.Close()
		return nil, fmt.Errorf("cannot start CPU profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); pf.Close() }, nil
}
