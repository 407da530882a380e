package bench

import (
	"context"
	"time"
)

// ledgerBudget: with the usage ledger on (an SQLite file), CPU per request
// at most this much above the same request with it off
// (docs/OPERATIONS.md, "The usage ledger").
const ledgerBudget = 0.03

// ledger: the small, streamed, translated and large bodies against
// slipstream with its usage ledger on and one with it off ("ledgerless"),
// paired (pairedBudget). With -no-ledger both would be off: the
// workload measures nothing then.
func runLedger(ctx context.Context, env *Env) error {
	if env.Opts.NoLedger {
		env.Report.Notef("ledger: skipped: -no-ledger turns the ledger off in both")
		return nil
	}
	d := env.duration(time.Second)
	p := pairedBudget{label: "ledger", without: "ledgerless", with: "slipstream", budget: func(*loadCase) float64 { return ledgerBudget }}
	p.run(ctx, env, []loadCase{
		{"ledger", "messages 10.8KB", 16, fixedReq(Anthropic, ModelClaude, smallClaudeSize, false, 1), d},
		{"ledger", "messages 10.8KB stream", 8, fixedReq(Anthropic, ModelClaude, smallClaudeSize, true, 1), d},
		{"ledger", "messages->chat 10.8KB", 16, fixedReq(Anthropic, ModelXlateChat, smallClaudeSize, false, 1), d},
		{"ledger", "messages 1MB", 4, fixedReq(Anthropic, ModelClaude, largeSize, false, 3), d},
	})
	return nil
}
