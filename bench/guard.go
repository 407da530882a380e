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
// on ("guarded"), paired (pairedBudget).
func runGuard(ctx context.Context, env *Env) error {
	d := env.duration(time.Second)
	p := pairedBudget{label: "guardrails", without: "slipstream", with: "guarded", budget: func(lc *loadCase) float64 {
		if len(lc.req.Body) >= largeSize {
			return guardBudgetLarge
		}
		return guardBudgetSmall
	}}
	p.run(ctx, env, []loadCase{
		{"guard", "messages 10.8KB", 16, fixedReq(Anthropic, ModelClaude, smallClaudeSize, false, 1), d},
		{"guard", "messages 10.8KB stream", 8, fixedReq(Anthropic, ModelClaude, smallClaudeSize, true, 1), d},
		{"guard", "messages 1MB", 4, fixedReq(Anthropic, ModelClaude, largeSize, false, 3), d},
	})
	return nil
}
