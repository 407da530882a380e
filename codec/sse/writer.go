package sse

// AppendEvent appends an event with a name: "event: name\ndata: data\n\n".
// data must be a single line (compact JSON).
func AppendEvent(dst []byte, name string, data []byte) []byte {
	dst = append(dst, "event: "...)
	dst = append(dst, name...)
	dst = append(dst, "\ndata: "...)
	dst = append(dst, data...)
	return append(dst, '\n', '\n')
}

// AppendData appends an unnamed event: "data: data\n\n".
func AppendData(dst []byte, data []byte) []byte {
	dst = append(dst, "data: "...)
	dst = append(dst, data...)
	return append(dst, '\n', '\n')
}

// AppendEventStart appends "event: name\ndata: " so that a writer can append
// the JSON payload in place and then close it with AppendEventEnd. This
// avoids building the payload in a second buffer.
func AppendEventStart(dst []byte, name string) []byte {
	if name != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, name...)
		dst = append(dst, '\n')
	}
	return append(dst, "data: "...)
}

// AppendEventEnd ends an event begun with AppendEventStart.
func AppendEventEnd(dst []byte) []byte { return append(dst, '\n', '\n') }

// Ping is the keep-alive comment sent while an upstream is silent.
const Ping = ": ping\n\n"

// Done is the Chat Completions terminal event.
const Done = "data: [DONE]\n\n"
