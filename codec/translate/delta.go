package translate

import (
	"slipstream/codec"
	"slipstream/codec/anthropic"
	"slipstream/codec/gemini"
	"slipstream/codec/openai"
)

// DeltaOf finds the incremental content of data, one stream event of
// dialect d as a client of d receives it (see codec.Delta), or false for
// an event that carries none.
func DeltaOf(d codec.Dialect, data []byte) (codec.Delta, bool) {
	switch d {
	case codec.DialectAnthropic:
		return anthropic.DeltaOf(data)
	case codec.DialectChat:
		return openai.ChatDeltaOf(data)
	case codec.DialectResponses:
		return openai.ResponsesDeltaOf(data)
	case codec.DialectGemini:
		return gemini.DeltaOf(data)
	}
	return codec.Delta{}, false
}
