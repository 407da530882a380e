package codec

// effortNames are the effort values the dialects share (OpenAI
// reasoning_effort and reasoning.effort, Anthropic output_config.effort),
// indexed by Effort. EffortUnset has none.
var effortNames = [...]string{
	EffortNone:    "none",
	EffortMinimal: "minimal",
	EffortLow:     "low",
	EffortMedium:  "medium",
	EffortHigh:    "high",
	EffortXHigh:   "xhigh",
	EffortMax:     "max",
}

// String returns the wire name of e, or "" for EffortUnset.
func (e Effort) String() string {
	if int(e) < len(effortNames) {
		return effortNames[e]
	}
	return ""
}

// ParseEffort maps an effort name (escaped content of a JSON string) to an
// Effort; an unknown name leaves it unset.
func ParseEffort(name []byte) Effort {
	for e, n := range effortNames {
		if n != "" && n == string(name) {
			return Effort(e)
		}
	}
	return EffortUnset
}

// Thinking budgets per effort level (docs/TRANSLATION.md; a proxy policy,
// not vendor-defined), shared by every dialect that speaks in budgets.
const (
	BudgetLow    = 2048
	BudgetMedium = 8192
	BudgetHigh   = 24576
	BudgetXHigh  = 32768
	BudgetMax    = 49152
)

// BudgetForEffort returns the thinking budget of an effort level, or 0
// when the level turns thinking off or leaves it unset.
func BudgetForEffort(e Effort) int64 {
	switch e {
	case EffortLow:
		return BudgetLow
	case EffortMedium:
		return BudgetMedium
	case EffortHigh:
		return BudgetHigh
	case EffortXHigh:
		return BudgetXHigh
	case EffortMax:
		return BudgetMax
	}
	return 0
}

// EffortForBudget returns the effort level whose budget is nearest to b,
// or EffortUnset for b <= 0 (unset, or -1: dynamic). Dialects without
// xhigh or max cap the result at EffortHigh.
func EffortForBudget(b int64) Effort {
	switch {
	case b <= 0:
		return EffortUnset
	case b < (BudgetLow+BudgetMedium)/2:
		return EffortLow
	case b < (BudgetMedium+BudgetHigh)/2:
		return EffortMedium
	case b < (BudgetHigh+BudgetXHigh)/2:
		return EffortHigh
	case b < (BudgetXHigh+BudgetMax)/2:
		return EffortXHigh
	}
	return EffortMax
}
