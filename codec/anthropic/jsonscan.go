package anthropic

import (
	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/pool"
)

// str returns the escaped content (no quotes) of the string member key of
// the JSON object r, as a view into r's document, or nil when r is not an
// object or the member is missing or not a string. It never goes through
// gjson's unescaped Str (see codec/jsonraw.go).
func str(r gjson.Result, key string) []byte {
	if r.Type != gjson.JSON {
		return nil
	}
	return codec.StrContent(codec.Member(pool.S2B(r.Raw), key))
}

// field is codec.Field: the member as a Result with Type and Raw only.
func field(r gjson.Result, key string) gjson.Result { return codec.Field(r, key) }

// typeOf returns the "type" member of the JSON object r as a string (a
// view: block and source types hold no escapes), or "".
func typeOf(r gjson.Result) string { return typeOfKey(r, "type") }

// typeOfKey is typeOf for another short enum-like member ("role").
func typeOfKey(r gjson.Result, key string) string { return pool.B2S(str(r, key)) }
