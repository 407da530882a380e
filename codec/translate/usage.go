package translate

import "slipstream/codec"

// BodyUsage reads the usage of a whole response body of dialect d, or of
// its end only: each dialect puts its usage object last but for a little
// metadata, so the caller may keep just a body's last few KiB. A dialect
// without a row is read as Chat. It returns Known false when b holds no
// usage object whole.
func BodyUsage(d codec.Dialect, b []byte) codec.Usage {
	r := row(d)
	if r == nil || r.readUsage == nil {
		r = row(codec.DialectChat)
	}
	obj := codec.LastObjectMember(b, r.usageKey)
	if obj == nil {
		return codec.Usage{}
	}
	return r.readUsage(obj)
}

var (
	keyUsage         = []byte(`"usage"`)
	keyUsageMetadata = []byte(`"usageMetadata"`)
)
