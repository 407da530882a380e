package openai

import (
	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/pool"
)

// respStr returns the escaped content of obj's string member key as a view
// into the document obj came from, or nil (codec/jsonraw.go: never through
// gjson's unescaping copy).
func respStr(obj gjson.Result, key string) []byte {
	return codec.StrContent(codec.Member(pool.S2B(obj.Raw), key))
}

// respVal returns the raw value of obj's member key (a view), or nil.
func respVal(obj gjson.Result, key string) []byte {
	return codec.Member(pool.S2B(obj.Raw), key)
}

// respParse returns a gjson view of a raw value that is not a string (so
// gjson has nothing to unescape).
func respParse(raw []byte) gjson.Result {
	if len(raw) == 0 || raw[0] == '"' {
		return gjson.Result{}
	}
	return gjson.Parse(pool.B2S(raw))
}
