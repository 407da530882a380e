package bench

import (
	"context"
	"slices"
	"time"
)

// The guardrails' cost budgets (docs/GUARDRAILS.md): with the default
// rules on, CPU per request at most this much above the same request
// without guardrails, for a request in which nothing matches.
const (
	guardBudgetSmall = 0.08 // a 10 KB request
	guardBudgetLarge = 0.10 // a 1 MB body
)

// guard: the small, streamed and large Claude Code bodies (no secret in
// them) against slipstream without guardrails and with the default rules
// on ("guarded"). Both processes run side by side and their runs
// alternate, so that a change in the machine's load falls on both alike;
// a note gives each case's ratio (the median of the paired runs' ratios)
// beside its budget.
func runGuard(ctx context.Context, env *Env) error {
	targets := env.targets("slipstream", "guarded")
	d := env.duration(time.Second)
	cases := []loadCase{
		{"guard", "messages 10.8KB", 16, fixedReq(Anthropic, ModelClaude, smallClaudeSize, false, 1), d},
		{"guard", "messages 10.8KB stream", 8, fixedReq(Anthropic, ModelClaude, smallClaudeSize, true, 1), d},
		{"guard", "messages 1MB", 4, fixedReq(Anthropic, ModelClaude, largeSize, false, 3), d},
	}
	if !slices.Contains(targets, "slipstream") || !slices.Contains(targets, "guarded") {
		runCases(ctx, env, targets, cases)
		return nil
	}
	for i := 0; i < len(cases) && ctx.Err() == nil; i++ {
		lc := cases[i]
		plain, guarded, x := env.measurePaired(ctx, lc, "slipstream", "guarded")
		env.Report.Add(plain)
		env.Report.Add(guarded)
		if plain.Failed || guarded.Failed || plain.CPUPerReqUs == 0 {
			continue
		}
		budget := guardBudgetSmall
		if len(lc.req.Body) >= largeSize {
			budget = guardBudgetLarge
		}
		verdict := "within"
		if x > budget {
			verdict = "OVER"
		}
		env.Report.Notef("guard: %s: guardrails on %.0f us/req, off %.0f us/req: %+.1f%% (median of %d paired runs; budget +%.0f%%, %s)",
			lc.name, guarded.CPUPerReqUs, plain.CPUPerReqUs, 100*x, plain.Runs, 100*budget, verdict)
	}
	return nil
}

// measurePaired runs lc against fresh instances of targets a and b,
// started together, alternating a run of each Opts.Runs times. The rows
// are each target's medians; x is the median over the pairs of b's CPU
// per request over a's, minus 1.
func (e *Env) measurePaired(ctx context.Context, lc loadCase, a, b string) (ra, rb Row, x float64) {
	ra = Row{Workload: lc.workload, Case: lc.name, Target: a, Concurrency: lc.conc}
	rb = Row{Workload: lc.workload, Case: lc.name, Target: b, Concurrency: lc.conc}
	pa, err := e.Start(a, ConfigLimits{})
	if err != nil {
		ra.Failed, ra.Note = true, err.Error()
		return ra, rb, 0
	}
	pb, err := e.Start(b, ConfigLimits{})
	if err != nil {
		e.closeTarget(pa, &ra, nil)
		rb.Failed, rb.Note = true, err.Error()
		return ra, rb, 0
	}
	sa, sb := NewSampler(pa.PID(), 0), NewSampler(pb.PID(), 0)
	sa.Start()
	sb.Start()
	var runsA, runsB []Row
	var ratios []float64
	for i := 0; i < e.Opts.Runs && ctx.Err() == nil; i++ {
		one, two := e.runOnce(ctx, pa, lc), e.runOnce(ctx, pb, lc)
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
	if len(ratios) == 0 {
		return ra, rb, 0
	}
	slices.Sort(ratios)
	return ra, rb, ratios[len(ratios)/2]
}
