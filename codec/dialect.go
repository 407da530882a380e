package codec

// Dialect is one of the wire formats slipstream speaks to clients and
// providers.
type Dialect uint8

// The dialects. DialectUnknown is the zero value.
const (
	DialectUnknown Dialect = iota
	DialectAnthropic
	DialectChat      // OpenAI Chat Completions
	DialectResponses // OpenAI Responses
	DialectGemini
	numDialects
)

// NumDialects is the number of known dialects, for tables indexed by Dialect.
const NumDialects = int(numDialects)

var dialectNames = [numDialects]string{
	DialectUnknown:   "unknown",
	DialectAnthropic: "anthropic",
	DialectChat:      "openai-chat",
	DialectResponses: "openai-responses",
	DialectGemini:    "gemini",
}

// String returns the dialect's name as it appears in logs and docs.
func (d Dialect) String() string {
	if d >= numDialects {
		return dialectNames[DialectUnknown]
	}
	return dialectNames[d]
}
