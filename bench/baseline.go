package bench

import (
	"context"
	"time"
)

// baseline: this build against an earlier build of slipstream
// (Options.Baseline), paired (pairedBudget): the streamed rows of stream
// and soak, and the 10 KB and 1 MB bodies, same-dialect and translated.
// CPU per request of this build over the baseline's must stay within
// Options.BaselineBudget. The baseline runs on the generated config
// without the usage section (a build older than a setting refuses it),
// so with its own default ledger, if it has one; -no-ledger turns off
// this build's only.
func runBaseline(ctx context.Context, env *Env) error {
	if env.Opts.Baseline == "" {
		env.Report.Notef("baseline: skipped: no -baseline binary")
		return nil
	}
	d := env.duration(time.Second)
	p := pairedBudget{label: "against the baseline", without: "baseline", with: "slipstream",
		budget: func(*loadCase) float64 { return env.Opts.BaselineBudget }}
	stream := fixedReq(Anthropic, ModelClaude, smallClaudeSize, true, 1)
	p.run(ctx, env, []loadCase{
		{"baseline", "messages 10.8KB stream", 1, stream, d},
		{"baseline", "messages 10.8KB stream", 8, stream, d},
		{"baseline", "messages 10.8KB stream", 32, stream, d},
		{"baseline", "messages 150KB stream", 256, fixedReq(Anthropic, ModelClaude, soakSize, true, 5), d},
		{"baseline", "messages 10.8KB", 16, fixedReq(Anthropic, ModelClaude, smallClaudeSize, false, 1), d},
		{"baseline", "chat 10KB", 16, fixedReq(Chat, ModelChat, smallChatSize, false, 2), d},
		{"baseline", "messages 1MB", 4, fixedReq(Anthropic, ModelClaude, largeSize, false, 3), d},
		{"baseline", "responses 1MB", 4, fixedReq(Responses, ModelResponses, largeSize, false, 4), d},
		{"baseline", "messages->chat 10.8KB", 16, fixedReq(Anthropic, ModelXlateChat, smallClaudeSize, false, 1), d},
		{"baseline", "messages->chat 10.8KB stream", 8, fixedReq(Anthropic, ModelXlateChat, smallClaudeSize, true, 1), d},
		{"baseline", "messages->chat 1MB", 4, fixedReq(Anthropic, ModelXlateChat, largeSize, false, 3), d},
	})
	return nil
}
