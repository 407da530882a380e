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
