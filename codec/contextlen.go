package codec

import "bytes"

// IsContextLengthMessage reports whether an error message says the prompt
// did not fit the model's context, in any provider's wording.
func IsContextLengthMessage(msg []byte) bool {
	for _, s := range contextLengthPhrases {
		if bytes.Contains(msg, []byte(s)) {
			return true
		}
	}
	return false
}

var contextLengthPhrases = [...]string{
	"prompt is too long",
	"exceed context limit",
	"maximum context length",
	"context_length_exceeded",
	"input token count",
}

// ContextNumbers finds the prompt size and the limit in a context-length
// message: the largest and the smallest of its first numbers, since
// providers word the two in either order. ok is false unless both exist.
func ContextNumbers(msg []byte) (prompt, limit int64, ok bool) {
	var nums [4]int64
	n := 0
	for i := 0; i < len(msg) && n < len(nums); {
		if msg[i] < '0' || msg[i] > '9' {
			i++
			continue
		}
		var v int64
		for i < len(msg) && msg[i] >= '0' && msg[i] <= '9' {
			v = v*10 + int64(msg[i]-'0')
			i++
		}
		if v >= 100 { // skip stray small numbers ("gpt-4", "3 messages")
			nums[n] = v
			n++
		}
	}
	if n < 2 {
		return 0, 0, false
	}
	prompt, limit = max(nums[0], nums[1]), min(nums[0], nums[1])
	return prompt, limit, prompt != limit
}
