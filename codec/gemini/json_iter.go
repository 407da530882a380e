package gemini

import "slipstream/codec"

// member returns the raw value of the member camel (or snake) of object
// raw: Gemini requests may be written in either casing (proto3 JSON).
func member(raw []byte, camel, snake string) []byte {
	m := codec.ObjectMembers(raw)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		if string(k) == camel || string(k) == snake {
			return v
		}
	}
	return nil
}
