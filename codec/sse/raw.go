package sse

import "bytes"

// The raw helpers below read events straight out of bytes already in
// hand (the start of a stream peeked before the relay, a whole stream
// read for aggregation), where a Reader over an io.Reader is not wanted.
// Events end at a blank line, "\n\n" or "\r\n\r\n".

// FirstEvent returns the first event in b that is not a comment (its raw
// lines, without the blank line that ends it), and whether one is
// complete. The event is a view into b.
func FirstEvent(b []byte) ([]byte, bool) {
	for {
		b = bytes.TrimLeft(b, "\r\n")
		end, _ := rawEventEnd(b)
		if end < 0 {
			return nil, false
		}
		ev := b[:end]
		if len(ev) > 0 && ev[0] != ':' {
			return ev, true
		}
		b = b[end:]
	}
}

// NextEvent splits the first event off b: ev is its raw lines, without
// the blank line; rest is what follows the blank line. ok is false when b
// holds no complete event yet. Both are views into b.
func NextEvent(b []byte) (ev, rest []byte, ok bool) {
	end, sep := rawEventEnd(b)
	if end < 0 {
		return nil, b, false
	}
	return b[:end], b[end+sep:], true
}

// rawEventEnd returns where the first event in b ends and the length of
// the blank line after it, or -1 when b holds none.
func rawEventEnd(b []byte) (end, sep int) {
	end, sep = bytes.Index(b, []byte("\n\n")), 2
	if e := bytes.Index(b, []byte("\r\n\r\n")); e >= 0 && (end < 0 || e < end) {
		end, sep = e, 4
	}
	return end, sep
}

// AppendRawData appends the data lines of the raw event ev to dst, each
// with its surrounding space trimmed and no separator between them (the
// form the account stream readers have always compared).
func AppendRawData(dst, ev []byte) []byte {
	for len(ev) > 0 {
		var line []byte
		line, ev = nextLine(ev)
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			dst = append(dst, bytes.TrimSpace(v)...)
		}
	}
	return dst
}

// nextLine splits the first line off the lines of a raw event: the line
// without its line end ("\n" or "\r\n"), and what follows it.
func nextLine(ev []byte) (line, rest []byte) {
	line = ev
	if i := bytes.IndexByte(ev, '\n'); i >= 0 {
		line, rest = ev[:i], ev[i+1:]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, rest
}
