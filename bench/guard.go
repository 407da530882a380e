package bench

import (
	"context"
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
// on ("guarded"), one after the other, each in a fresh process; a note
// gives each case's CPU ratio beside its budget.
func runGuard(ctx context.Context, env *Env) error {
	targets := env.targets("slipstream", "guarded")
	d := env.duration(time.Second)
	cases := []loadCase{
		{"guard", "messages 10.8KB", 16, fixedReq(Anthropic, ModelClaude, smallClaudeSize, false, 1), d},
		{"guard", "messages 10.8KB stream", 8, fixedReq(Anthropic, ModelClaude, smallClaudeSize, true, 1), d},
		{"guard", "messages 1MB", 4, fixedReq(Anthropic, ModelClaude, largeSize, false, 3), d},
	}
	runCases(ctx, env, targets, cases)
	for _, lc := range cases {
		like := &Row{Workload: lc.workload, Case: lc.name, Concurrency: lc.conc}
		plain, guarded := env.Report.find(like, "slipstream"), env.Report.find(like, "guarded")
		if plain == nil || guarded == nil || plain.CPUPerReqUs == 0 {
			continue
		}
		budget := guardBudgetSmall
		if len(lc.req.Body) >= largeSize {
			budget = guardBudgetLarge
		}
		x := guarded.CPUPerReqUs/plain.CPUPerReqUs - 1
		verdict := "within"
		if x > budget {
			verdict = "OVER"
		}
		env.Report.Notef("guard: %s: guardrails on %.0f us/req, off %.0f us/req: %+.1f%% (budget +%.0f%%, %s)",
			lc.name, guarded.CPUPerReqUs, plain.CPUPerReqUs, 100*x, 100*budget, verdict)
	}
	return nil
}
