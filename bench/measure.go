package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"
)

// Options are the harness's knobs (flags of cmd/slipstream-bench).
type Options struct {
	Duration time.Duration // measured time per run; 0 = each workload's default
	Warmup   time.Duration // per run; default 300 ms
	Runs     int           // runs per case, the median is reported; default 3
	Rest     time.Duration // fieldmix rest between 160-turn blocks; default 20 s
	Pin      Pinning       // where proxies run
	Targets  []string      // subset of direct, revproxy, fastproxy, slipstream; default all
	NoLedger bool          // slipstream runs with its usage ledger off
	// Baseline is an earlier slipstream binary the baseline workload
	// pairs this one with; BaselineBudget is how much more CPU per
	// request this one may spend (a fraction: -0.15 = 15% less).
	Baseline       string
	BaselineBudget float64
	// Perf is the path of Linux perf; when set, every slipstream case gets
	// one extra, unmeasured run under `perf record` and its top symbols go
	// into the row's Profile. "" = no profiles.
	Perf string
	Log  io.Writer // progress lines; default io.Discard
}

// Env is what workloads run in: the stub, how to start each target, and
// the report they add rows to.
type Env struct {
	Opts       Options
	Stub       *Stub
	SelfExe    string // this binary, re-executed as `revproxy`
	Slipstream string // built slipstream binary; "" = unavailable
	FastProxy  string // built ./bench/fastproxy binary; "" = unavailable
	TmpDir     string // for generated configs
	Report     *Report
}

func (e *Env) logf(format string, args ...any) {
	if e.Opts.Log != nil {
		fmt.Fprintf(e.Opts.Log, format+"\n", args...)
	}
}

// targets returns the selected targets among want, in order; slipstream
// is dropped when it is unavailable.
func (e *Env) targets(want ...string) []string {
	var out []string
	for _, t := range want {
		variant := t == "guarded" || t == "ledgerless" || t == "baseline" // beside slipstream
		slip := t == "slipstream" || variant                              // need the binary
		if t == "baseline" && e.Opts.Baseline == "" || t == "fastproxy" && e.FastProxy == "" {
			continue
		}
		if (len(e.Opts.Targets) == 0 || contains(e.Opts.Targets, t) || (variant && contains(e.Opts.Targets, "slipstream"))) && (!slip || e.Slipstream != "") {
			out = append(out, t)
		}
	}
	return out
}

// duration returns the measured duration per run: the flag when set,
// else def.
func (e *Env) duration(def time.Duration) time.Duration {
	if e.Opts.Duration > 0 {
		return e.Opts.Duration
	}
	return def
}

// Start starts a fresh instance of target with the given limits.
func (e *Env) Start(target string, lim ConfigLimits, env ...string) (*Proc, error) {
	switch target {
	case "direct":
		return &Proc{Name: "direct", URL: e.Stub.URL()}, nil
	case "revproxy":
		return StartReverseProxy(e.SelfExe, e.Stub.URL(), e.Opts.Pin)
	case "fastproxy":
		return StartFastProxy(e.FastProxy, e.Stub.URL(), e.Opts.Pin)
	case "slipstream":
		return e.startSlipstream(e.Stub.URL(), lim, env...)
	case "guarded":
		lim.Guardrails = true
		return e.startSlipstream(e.Stub.URL(), lim, env...)
	case "ledgerless":
		lim.NoLedger = true
		return e.startSlipstream(e.Stub.URL(), lim, env...)
	case "baseline":
		return e.startBaseline(lim, env...)
	}
	return nil, fmt.Errorf("cannot start target %q: unknown", target)
}

// startSlipstream starts slipstream on a generated config whose providers
// point at stubURL.
func (e *Env) startSlipstream(stubURL string, lim ConfigLimits, env ...string) (*Proc, error) {
	lim.NoLedger = lim.NoLedger || e.Opts.NoLedger
	return e.startBinary(e.Slipstream, stubURL, lim, env...)
}

// startBaseline starts the baseline binary on a generated config without
// the usage section, which a build older than the ledger refuses.
func (e *Env) startBaseline(lim ConfigLimits, env ...string) (*Proc, error) {
	lim.NoLedger = false
	return e.startBinary(e.Opts.Baseline, e.Stub.URL(), lim, env...)
}

// startBinary starts the slipstream binary bin on a generated config
// whose providers point at stubURL.
func (e *Env) startBinary(bin, stubURL string, lim ConfigLimits, env ...string) (*Proc, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	cfg, err := WriteConfig(e.TmpDir, addr, stubURL, lim)
	if err != nil {
		return nil, err
	}
	return StartSlipstream(bin, cfg, addr, append(stateEnv(e.TmpDir), env...), e.Opts.Pin)
}

// loadCase is one fixed-request load measurement.
type loadCase struct {
	workload, name string
	conc           int
	req            *Req
	dur            time.Duration
}

// cpuWindow reads the proxy's and the harness's CPU time at the edges of
// a measured window.
type cpuWindow struct {
	pid               int
	proxy0, proxy1    time.Duration
	self0, self1      time.Duration
	errProxy, errSelf error
}

func (c *cpuWindow) edge(open bool) {
	p, errP := ReadCPU(c.pid)
	s, errS := ReadCPU(0)
	if c.errProxy == nil {
		c.errProxy = errP
	}
	if c.errSelf == nil {
		c.errSelf = errS
	}
	if open {
		c.proxy0, c.self0 = p, s
		return
	}
	c.proxy1, c.self1 = p, s
}

// perReq returns proxy and harness CPU microseconds per request; for the
// direct target (pid 0) both are the harness's.
func (c *cpuWindow) perReq(n int) (proxy, self float64) {
	if n == 0 {
		return 0, 0
	}
	proxy = float64(c.proxy1-c.proxy0) / float64(time.Microsecond) / float64(n)
	self = float64(c.self1-c.self0) / float64(time.Microsecond) / float64(n)
	return proxy, self
}

// measure runs lc against a fresh instance of target Opts.Runs times and
// returns the row of medians (counts summed).
func (e *Env) measure(ctx context.Context, target string, lc loadCase) Row {
	row := Row{Workload: lc.workload, Case: lc.name, Target: target, Concurrency: lc.conc}
	p, err := e.Start(target, ConfigLimits{})
	if err != nil {
		row.Failed, row.Note = true, err.Error()
		return row
	}
	s := NewSampler(p.PID(), 0)
	s.Start()
	runs := make([]Row, 0, e.Opts.Runs)
	for i := 0; i < e.Opts.Runs && ctx.Err() == nil; i++ {
		runs = append(runs, e.runOnce(ctx, p, lc))
	}
	peak, last, serr := s.Stop()
	row = medianRow(row, runs)
	row.PeakRSSMB = mb(max(peak, last.HWM))
	if target == "slipstream" {
		row.Profile = e.profile(ctx, p, lc)
		row.SyscallsPerReq, row.SyscallMix = e.syscalls(ctx, p, lc)
	}
	e.closeTarget(p, &row, serr)
	e.logf("%-10s %-28s %-10s c=%-3d %8.0f req/s p50 %.3f ms cpu %.0f us/req err %d %s",
		row.Workload, row.Case, row.Target, row.Concurrency, row.RPS, row.LatP50Ms, row.CPUPerReqUs, row.Errors, row.Note)
	return row
}

// closeTarget stops p and marks row failed if the process died or did
// not stop cleanly.
func (e *Env) closeTarget(p *Proc, row *Row, samplerErr error) {
	if !p.Alive() {
		row.Failed = true
		row.Note = fmt.Sprintf("%s died: %s", p.Name, p.Stderr())
		return
	}
	if err := p.Stop(); err != nil {
		row.Note = err.Error()
	}
	if samplerErr != nil && p.PID() != 0 {
		row.Note += " sampler: " + samplerErr.Error()
	}
}

// runOnce is one warm-up plus measured window against a running target.
func (e *Env) runOnce(ctx context.Context, p *Proc, lc loadCase) Row {
	cw := &cpuWindow{pid: p.PID()}
	res, err := Run(ctx, LoadConfig{
		URL: p.URL, Concurrency: lc.conc, Warmup: e.Opts.Warmup, Duration: lc.dur,
		Next:      func(w, i int) *Req { return lc.req },
		OnMeasure: cw.edge,
	})
	if err != nil {
		return Row{Failed: true, Note: err.Error()}
	}
	proxy, self := cw.perReq(res.Requests)
	note := res.FirstError
	if cw.errProxy != nil || cw.errSelf != nil {
		note = fmt.Sprintf("%s cannot read CPU time: %v %v", note, cw.errProxy, cw.errSelf)
	}
	return Row{
		Requests: res.Requests, Errors: res.Errors, RPS: res.RPS(),
		LatP50Ms: ms(res.Lat.P50), LatP90Ms: ms(res.Lat.P90), LatP99Ms: ms(res.Lat.P99),
		TTFEP50Ms: ms(res.TTFE.P50), TTFEP99Ms: ms(res.TTFE.P99),
		CPUPerReqUs: proxy, LoadCPUPerReqUs: self, Note: note,
	}
}

// medianRow fills base with the medians of runs' figures and the sums of
// their counts.
func medianRow(base Row, runs []Row) Row {
	base.Runs = len(runs)
	med := func(get func(*Row) float64) float64 {
		v := make([]float64, len(runs))
		for i := range runs {
			v[i] = get(&runs[i])
		}
		slices.Sort(v)
		if len(v) == 0 {
			return 0
		}
		return v[len(v)/2]
	}
	for i := range runs {
		base.Requests += runs[i].Requests
		base.Errors += runs[i].Errors
		base.Failed = base.Failed || runs[i].Failed
		if base.Note == "" {
			base.Note = runs[i].Note
		}
	}
	base.RPS = med(func(r *Row) float64 { return r.RPS })
	base.LatP50Ms = med(func(r *Row) float64 { return r.LatP50Ms })
	base.LatP90Ms = med(func(r *Row) float64 { return r.LatP90Ms })
	base.LatP99Ms = med(func(r *Row) float64 { return r.LatP99Ms })
	base.TTFEP50Ms = med(func(r *Row) float64 { return r.TTFEP50Ms })
	base.TTFEP99Ms = med(func(r *Row) float64 { return r.TTFEP99Ms })
	base.CPUPerReqUs = med(func(r *Row) float64 { return r.CPUPerReqUs })
	base.LoadCPUPerReqUs = med(func(r *Row) float64 { return r.LoadCPUPerReqUs })
	return base
}

// profile runs lc once more under perf (when Options.Perf is set) and
// returns the top symbols; the run is not part of the row's figures.
func (e *Env) profile(ctx context.Context, p *Proc, lc loadCase) []string {
	if e.Opts.Perf == "" || ctx.Err() != nil {
		return nil
	}
	prof, err := StartProfiler(e.Opts.Perf, e.TmpDir, p.PID())
	if err != nil {
		return []string{err.Error()}
	}
	e.runOnce(ctx, p, lc)
	top, err := prof.Stop(5)
	if err != nil {
		return []string{err.Error()}
	}
	return top
}
