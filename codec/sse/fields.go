package sse

import "bytes"

// Fields returns the name and data of ev, one raw SSE event (its
// lines, without the blank line). Several data lines are joined with '\n'
// in scratch; otherwise both are views into ev.
func Fields(ev []byte, scratch *[]byte) (name, data []byte) {
	multi := false
	for len(ev) > 0 {
		var line []byte
		line, ev = nextLine(ev)
		k, v, _ := bytes.Cut(line, []byte(":"))
		if len(v) > 0 && v[0] == ' ' {
			v = v[1:]
		}
		switch string(k) {
		case "event":
			name = v
		case "data":
			switch {
			case data == nil:
				data = v
			case !multi:
				*scratch = append(append(append((*scratch)[:0], data...), '\n'), v...)
				data, multi = *scratch, true
			default:
				*scratch = append(append(*scratch, '\n'), v...)
				data = *scratch
			}
		}
	}
	return name, data
}
