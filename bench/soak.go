package bench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// soak: 150 KB bodies at c=256 for 20 s by default (-duration
// lengthens): peak RSS relative to bytes in flight, and RSS 10 s after
// the load relative to idle.
func runSoak(ctx context.Context, env *Env) error {
	dur := env.duration(20 * time.Second)
	req := fixedReq(Anthropic, ModelClaude, soakSize, true, 5)
	for _, t := range env.targets("revproxy", "slipstream") {
		if ctx.Err() != nil {
			return nil //nolint:nilerr // a cancelled run ends with what it measured
		}
		env.Report.Add(env.soakOne(ctx, t, req, 256, dur))
	}
	return nil
}

// Soak gates (docs/BENCHMARKS.md): peak <= 1.3 x bytes in flight + 16 MB; RSS after
// load within 10 MB of idle.
const (
	soakPeakFactor = 1.3
	soakPeakSlack  = 16 << 20
	soakRestSlack  = 10 << 20
)

func (env *Env) soakOne(ctx context.Context, target string, req *Req, conc int, dur time.Duration) Row {
	row := Row{Workload: "soak", Case: fmt.Sprintf("messages %dKB stream", len(req.Body)>>10), Target: target, Concurrency: conc}
	p, err := env.Start(target, ConfigLimits{MaxConcurrent: 4096})
	if err != nil {
		row.Failed, row.Note = true, err.Error()
		return row
	}
	sleepCtx(ctx, 2*time.Second)
	idle, errIdle := ReadMem(p.PID())
	s := NewSampler(p.PID(), 0)
	s.Start()
	res := env.runOnce(ctx, p, loadCase{"soak", row.Case, conc, req, dur})
	peak, last, serr := s.Stop()
	sleepCtx(ctx, 10*time.Second)
	rest, errRest := ReadMem(p.PID())
	row = medianRow(row, []Row{res})
	inflight := int64(conc) * int64(len(req.Body))
	budget := soakPeakFactor*float64(inflight) + soakPeakSlack
	row.IdleRSSMB, row.PeakRSSMB, row.RestRSSMB, row.BudgetMB = mb(idle.RSS), mb(max(peak, last.HWM)), mb(rest.RSS), budget/(1<<20)
	row.Note = fmt.Sprintf("bytes in flight %.1f MB; rest-idle %.1f MB (gate 10)", mb(inflight), mb(rest.RSS-idle.RSS))
	if target == "slipstream" {
		overPeak := float64(max(peak, last.HWM)) > budget
		overRest := rest.RSS > idle.RSS+soakRestSlack
		row.Failed = row.Failed || overPeak || overRest || errIdle != nil || errRest != nil
	}
	env.closeTarget(p, &row, serr)
	env.logf("soak       %-28s %-10s peak %.1f MB rest %.1f MB idle %.1f MB err %d", row.Case, target, row.PeakRSSMB, row.RestRSSMB, row.IdleRSSMB, row.Errors)
	return row
}

// startup: ms from exec to the first proxied 200 (a real POST of the
// small body), and idle RSS 2 s later; median of 5 starts.
func runStartup(ctx context.Context, env *Env) error {
	req := fixedReq(Anthropic, ModelClaude, smallClaudeSize, false, 1)
	for _, t := range env.targets("revproxy", "fastproxy", "slipstream") {
		row := Row{Workload: "startup", Case: "exec -> first proxied 200", Target: t}
		var runs []Row
		for i := 0; i < 5 && ctx.Err() == nil; i++ {
			r, err := env.startupOnce(ctx, t, req)
			if err != nil {
				row.Failed, row.Note = true, err.Error()
				break
			}
			runs = append(runs, r)
		}
		row = medianStartup(row, runs)
		env.logf("startup    %-10s first 200 after %.1f ms, idle %.1f MB (anonymous %.1f)", t, row.ReadyMs, row.IdleRSSMB, row.IdleAnonMB)
		env.Report.Add(row)
	}
	return nil
}

func medianStartup(row Row, runs []Row) Row {
	row.Runs = len(runs)
	if len(runs) == 0 {
		return row
	}
	ready := make([]float64, len(runs))
	idle := make([]float64, len(runs))
	anon := make([]float64, len(runs))
	for i := range runs {
		ready[i], idle[i], anon[i] = runs[i].ReadyMs, runs[i].IdleRSSMB, runs[i].IdleAnonMB
	}
	row.ReadyMs, row.IdleRSSMB, row.IdleAnonMB = median(ready), median(idle), median(anon)
	row.Requests = len(runs)
	return row
}

// startupOnce execs target, polls with the real POST until a complete
// 200, then reads RSS 2 s later.
func (env *Env) startupOnce(ctx context.Context, target string, req *Req) (Row, error) {
	addr, err := FreeAddr()
	if err != nil {
		return Row{}, err
	}
	start := time.Now()
	var p *Proc
	switch target {
	case "slipstream":
		var cfg string
		if cfg, err = WriteConfig(env.TmpDir, addr, env.Stub.URL(), ConfigLimits{NoLedger: env.Opts.NoLedger}); err != nil {
			return Row{}, err
		}
		start = time.Now()
		p, err = startProc(target, env.Opts.Pin.command(env.Slipstream, "-config", cfg), stateEnv(env.TmpDir))
	case "fastproxy":
		p, err = startProc(target, env.Opts.Pin.command(env.FastProxy, "-listen", addr, "-upstream", env.Stub.URL()), nil)
	default:
		p, err = startProc(target, env.Opts.Pin.command(env.SelfExe, "revproxy", "-listen", addr, "-upstream", env.Stub.URL()), nil)
	}
	if err != nil {
		return Row{}, err
	}
	defer p.Stop() //nolint:errcheck // startup only measures time and RSS
	first, err := firstOK(ctx, p, "http://"+addr, req, start)
	if err != nil {
		return Row{}, err
	}
	sleepCtx(ctx, 2*time.Second)
	m, err := ReadMem(p.PID())
	if err != nil {
		return Row{}, err
	}
	return Row{ReadyMs: ms(first), IdleRSSMB: mb(m.RSS), IdleAnonMB: mb(m.Anon)}, nil
}

// firstOK posts req every 200 us until a 200 whose body is complete, for
// at most 10 s, and returns the time since start.
func firstOK(ctx context.Context, p *Proc, url string, req *Req, start time.Time) (time.Duration, error) {
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	w := &worker{buf: make([]byte, 0, 16<<10)}
	for time.Since(start) < 10*time.Second && ctx.Err() == nil {
		if !p.Alive() {
			return 0, fmt.Errorf("cannot start %s: exited: %s", p.Name, p.Stderr())
		}
		hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url+req.Path, bytes.NewReader(req.Body))
		if err != nil {
			return 0, fmt.Errorf("cannot build request: %w", err)
		}
		req.Dialect.SetHeaders(hr.Header)
		resp, err := c.Do(hr)
		if err == nil {
			_, rerr := w.read(resp.Body, start, false)
			resp.Body.Close()
			if rerr == nil && resp.StatusCode == 200 && req.Dialect.Complete(w.buf, false) {
				return time.Since(start), nil
			}
		}
		time.Sleep(200 * time.Microsecond)
	}
	return 0, fmt.Errorf("cannot get a 200 from %s within 10 s: %s", p.Name, p.Stderr())
}

// sleepCtx sleeps d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
