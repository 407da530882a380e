package anthropic

import "slipstream/codec"

// Thinking budgets per effort level (api-formats.md F.8; a proxy policy,
// not vendor-defined). xhigh and max stay well under the 64000 output
// tokens of current models once defaultMaxTokens headroom is added.
const (
	budgetLow    = 2048
	budgetMedium = 8192
	budgetHigh   = 24576
	budgetXHigh  = 32768
	budgetMax    = 49152

	// minBudget is the smallest budget_tokens Anthropic accepts.
	minBudget = 1024
	// defaultMaxTokens is max_tokens when the client gave none.
	defaultMaxTokens = 8192
	// budgetHeadroom is added to the budget when max_tokens must grow
	// past it (Anthropic needs budget_tokens < max_tokens).
	budgetHeadroom = 4096
)

// budgetForEffort returns the thinking budget of an effort level, or 0
// when the level turns thinking off or leaves it unset.
func budgetForEffort(e codec.Effort) int64 {
	switch e {
	case codec.EffortLow:
		return budgetLow
	case codec.EffortMedium:
		return budgetMedium
	case codec.EffortHigh:
		return budgetHigh
	case codec.EffortXHigh:
		return budgetXHigh
	case codec.EffortMax:
		return budgetMax
	}
	return 0
}

// effortForBudget returns the nearest effort bucket of a budget.
func effortForBudget(b int64) codec.Effort {
	switch {
	case b <= 0:
		return codec.EffortUnset
	case b < (budgetLow+budgetMedium)/2:
		return codec.EffortLow
	case b < (budgetMedium+budgetHigh)/2:
		return codec.EffortMedium
	case b < (budgetHigh+budgetXHigh)/2:
		return codec.EffortHigh
	case b < (budgetXHigh+budgetMax)/2:
		return codec.EffortXHigh
	}
	return codec.EffortMax
}

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
