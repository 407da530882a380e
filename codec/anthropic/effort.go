package anthropic

import "slipstream/codec"

const (
	// minBudget is the smallest budget_tokens Anthropic accepts.
	minBudget = 1024
	// defaultMaxTokens is max_tokens when the client gave none.
	defaultMaxTokens = 8192
	// budgetHeadroom is added to the budget when max_tokens must grow
	// past it (Anthropic needs budget_tokens < max_tokens).
	budgetHeadroom = 4096
)

// effortName returns the output_config.effort value of an effort level;
// levels below low map to low, the lowest Anthropic has.
func effortName(e codec.Effort) string {
	switch e {
	case codec.EffortNone, codec.EffortMinimal, codec.EffortLow:
		return "low"
	case codec.EffortMedium:
		return "medium"
	case codec.EffortXHigh:
		return "xhigh"
	case codec.EffortMax:
		return "max"
	}
	return "high"
}
