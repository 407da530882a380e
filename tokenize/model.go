package tokenize

import "strings"

// ForModel returns the encoding to count tokens for model.
//
// OpenAI's GPT-4o, GPT-4.1, GPT-4.5, GPT-5, o-series and codex models use
// o200k_base; GPT-4 (including gpt-4-turbo), GPT-3.5 and the ada-002 and
// text-embedding-3 embedding models use cl100k_base. Anthropic (claude-*),
// Google (gemini-*) and every unknown model get o200k_base as an ESTIMATE:
// their tokenizers are not public. A provider prefix such as "openai/" and
// letter case are ignored.
func ForModel(model string) *Encoding {
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	for _, p := range o200kPrefixes {
		if hasPrefixFold(model, p) {
			return o200k
		}
	}
	for _, p := range cl100kPrefixes {
		if hasPrefixFold(model, p) {
			return cl100k
		}
	}
	return o200k
}

// o200kPrefixes are checked first, so that "gpt-4o" does not fall under the
// cl100k prefix "gpt-4".
var o200kPrefixes = []string{
	"gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "chatgpt-4o", "gpt-oss",
	"o1", "o3", "o4", "codex",
}

var cl100kPrefixes = []string{
	"gpt-4", "gpt-3.5", "gpt-35", "text-embedding-ada-002", "text-embedding-3",
	"davinci-002", "babbage-002",
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
