package codec

import "bytes"

// ParseDataURL splits a base64 data URL, data:<mime>;base64,<payload>, into
// its media type and payload (views into url). ok is false for any other
// URL.
func ParseDataURL(url []byte) (mediaType, data []byte, ok bool) {
	rest, found := bytes.CutPrefix(url, []byte("data:"))
	if !found {
		return nil, nil, false
	}
	meta, payload, found := bytes.Cut(rest, []byte(","))
	if !found {
		return nil, nil, false
	}
	mediaType, found = bytes.CutSuffix(meta, []byte(";base64"))
	if !found {
		return nil, nil, false
	}
	return mediaType, payload, true
}

// AppendDataURL appends data:<mime>;base64,<data>.
func AppendDataURL(dst, mediaType, data []byte) []byte {
	dst = append(dst, "data:"...)
	dst = append(dst, mediaType...)
	dst = append(dst, ";base64,"...)
	return append(dst, data...)
}
