package bench

import (
	"context"
	"slices"
)

// A pairedBudget compares slipstream in two configurations on the same
// requests: CPU per request of with over without must stay within a
// budget. Both processes run side by side and their runs alternate, so
// that a change in the machine's load falls on both alike; a note gives
// each case's ratio, the median of the paired runs' ratios, beside its
// budget.
type pairedBudget struct {
	label         string // what with adds, for the notes
	without, with string // the two targets
	budget        func(lc *loadCase) float64
}

// run measures every case; when either target is not selected, it falls
// back to measuring the selected ones without ratios.
func (p *pairedBudget) run(ctx context.Context, env *Env, cases []loadCase) {
	targets := env.targets(p.without, p.with)
	if len(targets) < 2 {
		runCases(ctx, env, targets, cases)
		return
	}
	for i := 0; i < len(cases) && ctx.Err() == nil; i++ {
		lc := &cases[i]
		without, with, xs := env.measurePaired(ctx, *lc, p.without, p.with)
		env.Report.Add(without)
		env.Report.Add(with)
		if without.Failed || with.Failed || without.CPUPerReqUs == 0 {
			continue
		}
		if len(xs) == 0 {
			continue
		}
		x, lo, hi := xs[len(xs)/2], xs[len(xs)/4], xs[(3*len(xs))/4]
		budget := p.budget(lc)
		verdict := "within"
		if x > budget {
			verdict = "OVER"
		}
		env.Report.Notef("%s: %s: on %.0f us/req, off %.0f us/req: %+.1f%% (median of %d paired runs, middle half %+.1f%% to %+.1f%%; budget %+.0f%%, %s)",
			p.label, lc.name, with.CPUPerReqUs, without.CPUPerReqUs, 100*x, len(xs), 100*lo, 100*hi, 100*budget, verdict)
	}
}

// measurePaired runs lc against fresh instances of targets a and b,
// started together, alternating a run of each Opts.Runs times (a then b,
// then b then a, and so on). The rows
// are each target's medians; xs are the pairs' ratios of b's CPU per
// request over a's, minus 1, sorted.
func (e *Env) measurePaired(ctx context.Context, lc loadCase, a, b string) (ra, rb Row, xs []float64) {
	ra = Row{Workload: lc.workload, Case: lc.name, Target: a, Concurrency: lc.conc}
	rb = Row{Workload: lc.workload, Case: lc.name, Target: b, Concurrency: lc.conc}
	pa, err := e.Start(a, ConfigLimits{})
	if err != nil {
		ra.Failed, ra.Note = true, err.Error()
		return ra, rb, nil
	}
	pb, err := e.Start(b, ConfigLimits{})
	if err != nil {
		e.closeTarget(pa, &ra, nil)
		rb.Failed, rb.Note = true, err.Error()
		return ra, rb, nil
	}
	sa, sb := NewSampler(pa.PID(), 0), NewSampler(pb.PID(), 0)
	sa.Start()
	sb.Start()
	var runsA, runsB []Row
	var ratios []float64
	for i := 0; i < e.Opts.Runs && ctx.Err() == nil; i++ {
		var one, two Row
		if i%2 == 0 {
			one, two = e.runOnce(ctx, pa, lc), e.runOnce(ctx, pb, lc)
		} else { // every other pair b first, so that neither gains from going first
			two, one = e.runOnce(ctx, pb, lc), e.runOnce(ctx, pa, lc)
		}
		runsA, runsB = append(runsA, one), append(runsB, two)
		if one.CPUPerReqUs > 0 && two.CPUPerReqUs > 0 {
			ratios = append(ratios, two.CPUPerReqUs/one.CPUPerReqUs-1)
		}
	}
	ra, rb = medianRow(ra, runsA), medianRow(rb, runsB)
	for _, t := range []struct {
		p *Proc
		s *Sampler
		r *Row
	}{{pa, sa, &ra}, {pb, sb, &rb}} {
		peak, last, serr := t.s.Stop()
		t.r.PeakRSSMB = mb(max(peak, last.HWM))
		e.closeTarget(t.p, t.r, serr)
	}
	for _, r := range []*Row{&ra, &rb} {
		e.logf("%-10s %-28s %-10s c=%-3d %8.0f req/s p50 %.3f ms cpu %.0f us/req err %d %s",
			r.Workload, r.Case, r.Target, r.Concurrency, r.RPS, r.LatP50Ms, r.CPUPerReqUs, r.Errors, r.Note)
	}
	slices.Sort(ratios)
	return ra, rb, ratios
}
