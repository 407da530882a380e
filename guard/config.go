package guard

// Action is what a rule does with a match.
type Action uint8

const (
	// Redact replaces the match with a placeholder [REDACTED:<rule>:<6 hex>].
	Redact Action = iota
	// Block refuses the request; the caller answers 400 naming the rule.
	Block
	// Log counts the match and changes nothing.
	Log
)

// String returns "redact", "block" or "log".
func (a Action) String() string {
	switch a {
	case Block:
		return "block"
	case Log:
		return "log"
	}
	return "redact"
}

// ParseAction maps "redact", "block" and "log" to an Action.
func ParseAction(s string) (Action, bool) {
	switch s {
	case "redact":
		return Redact, true
	case "block":
		return Block, true
	case "log":
		return Log, true
	}
	return 0, false
}

// Config is a guardrail rule set before compilation. The zero value is the
// default set: every credential detector with action Redact, no restore, no
// PII detectors, a hash key generated once per process.
type Config struct {
	// Rules enable or configure built-in detectors by name (see Detectors).
	// A rule for a detector overrides its default; a rule with Off set
	// disables it. Default: the credential detectors, Redact, no restore.
	Rules []Rule
	// OnlyRules, when true, enables exactly the detectors named in Rules
	// (without Off) and none by default.
	OnlyRules bool
	// Patterns are operator rules: RE2 expressions (Go regexp syntax).
	Patterns []Pattern
	// Literals are operator rules matching exact strings.
	Literals []Literal
	// Key is the HMAC-SHA256 key of the placeholders' hash. Default: 32
	// random bytes generated once per process, so placeholders are stable
	// within a process but differ across restarts and replicas.
	Key []byte
}

// Rule configures one built-in detector.
type Rule struct {
	Name    string // a built-in detector name
	Action  Action // default Redact
	Restore bool   // put the original back in responses (Redact only)
	Off     bool   // disable the detector
}

// Pattern is an operator rule over the raw (JSON-escaped) string content.
type Pattern struct {
	// Name appears in placeholders, logs and metrics: 1-48 bytes of
	// [a-z0-9_], distinct from every other rule's.
	Name string
	// Regexp is RE2 syntax. It runs over raw JSON string content, so a
	// newline in the text is the two bytes \n.
	Regexp string
	// Keywords, when set, are a prefilter: the expression runs only on a
	// body that contains at least one of them (case-sensitive). Without
	// keywords it runs on every body, at regexp speed.
	Keywords []string
	Action   Action
	Restore  bool
}

// Literal is an operator rule matching any of Values exactly.
type Literal struct {
	Name    string // as Pattern.Name
	Values  []string
	Action  Action
	Restore bool
}

// maxRuleName bounds a rule name, so that a placeholder's length is bounded
// for the restorer's hold-back.
const maxRuleName = 48
