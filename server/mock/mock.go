// Package mock is the built-in provider that answers every dialect locally
// and deterministically: a fixed text reply, split into paced stream
// deltas, JSON text when the request asks for JSON output, or a tool call
// when the request offers tools and its last user text says
// "call <tool_name>". It produces dialect-neutral Events; the
// client dialect's encoder (the same one translated responses use) writes
// them, so the mock exercises the real output path.
package mock

import (
	"bytes"
	"strconv"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"slipstream/codec"
	"slipstream/server/config"
)

// Mock is one configured mock provider. It is immutable and safe for
// concurrent use.
type Mock struct {
	reply  []byte // the reply, escaped as JSON string content
	chunks int
	delay  time.Duration
	seq    atomic.Uint64
}

// New builds the mock from its provider configuration (defaults applied).
func New(c *config.Provider) *Mock {
	return &Mock{reply: codec.AppendEscaped(nil, []byte(c.Reply)), chunks: max(c.Chunks, 1), delay: c.ChunkDelay.D()}
}

// Delay is the pause between two stream deltas.
func (m *Mock) Delay() time.Duration { return m.delay }

// Answer is the mock's reply to one request, as Events. IDs and texts are
// views into the Answer's own buffers, valid until Reset; Reset keeps
// capacity.
type Answer struct {
	Events []codec.Event
	idBuf  []byte
	argBuf []byte // a tool call's arguments, JSON
	escBuf []byte // the same escaped as string content, or a reply text
}

// Reset empties a, keeping capacity.
func (a *Answer) Reset() {
	clear(a.Events[:cap(a.Events)])
	a.Events = a.Events[:0]
	a.idBuf = a.idBuf[:0]
	a.argBuf = a.argBuf[:0]
	a.escBuf = a.escBuf[:0]
}

// Build fills a with the answer to r. inputTokens is the request's token
// count (the caller counts it); output counts are the reply's words.
//
// When r offers tools and its last user message says "call <tool>", the
// answer is a call of that tool with arguments that satisfy its schema
// (AppendArgs). When the last user message carries tool results, the
// answer is text quoting the first result, so a client's tool round trip
// ends and shows what the tool printed. When r asks for JSON output, the
// answer is JSON text instead (appendJSON). Otherwise it is the
// configured reply. Text is streamed as exactly `chunks` non-empty text
// deltas (fewer only when it has fewer characters).
func (m *Mock) Build(a *Answer, r *codec.Request, inputTokens int64) {
	a.Reset()
	n := m.seq.Add(1)
	a.idBuf = append(a.idBuf, "mock_"...)
	a.idBuf = strconv.AppendUint(a.idBuf, n, 10)
	idEnd := len(a.idBuf)
	a.idBuf = append(a.idBuf, "call_mock_"...)
	a.idBuf = strconv.AppendUint(a.idBuf, n, 10)
	id, callID := a.idBuf[:idEnd], a.idBuf[idEnd:]

	usage := codec.Usage{Input: inputTokens, Known: true}
	a.add(codec.Event{Kind: codec.EventStart, ID: id, Name: r.Model, Usage: usage})
	stop := codec.StopEndTurn
	last := lastUserMessage(r)
	if tool := calledTool(r, last); tool != nil {
		a.add(codec.Event{Kind: codec.EventToolCall, Block: 0, ID: callID, Name: tool.Name})
		// Arguments are JSON text escaped as string content; a custom
		// (free-text) tool is a function of one string "input" outside
		// Responses, and the Responses encoder turns it back.
		if tool.Kind == codec.ToolCustom {
			a.argBuf = append(a.argBuf, `{"input":`...)
			a.argBuf = codec.AppendQuotedString(a.argBuf, customInput(tool.Name))
			a.argBuf = append(a.argBuf, '}')
		} else {
			a.argBuf = AppendArgs(a.argBuf, tool.Schema)
		}
		a.escBuf = codec.AppendEscaped(a.escBuf, a.argBuf)
		a.add(codec.Event{Kind: codec.EventToolArgs, Block: 0, Text: a.escBuf})
		a.add(codec.Event{Kind: codec.EventBlockStop, Block: 0})
		usage.Output = 8
		stop = codec.StopToolUse
	} else {
		text := m.reply
		if wantsJSON(r) {
			a.argBuf = m.appendJSON(a.argBuf, &r.Format)
			a.escBuf = codec.AppendEscaped(a.escBuf, a.argBuf)
			text = a.escBuf
		} else if res := toolResultText(r, last); res != nil {
			a.escBuf = append(a.escBuf, "The tool returned: "...)
			a.escBuf = bytes.TrimRight(appendPlain(a.escBuf, res, maxQuoted), " ")
			text = a.escBuf
		}
		usage.Output = a.addText(text, m.chunks)
		a.add(codec.Event{Kind: codec.EventBlockStop, Block: 0})
	}
	a.add(codec.Event{Kind: codec.EventFinish, Stop: stop, Usage: usage})
	a.add(codec.Event{Kind: codec.EventEnd})
}

func (a *Answer) add(ev codec.Event) { a.Events = append(a.Events, ev) }

// addText adds esc (escaped string content) as exactly n non-empty text
// events, cut between words when it has at least n words, else between
// characters (never inside an escape or a UTF-8 sequence); a text of
// fewer than n characters gives one event per character. It returns the
// word count, the mock's output token figure.
func (a *Answer) addText(esc []byte, n int) int64 {
	words := int64(bytes.Count(esc, []byte{' '})) + 1
	if len(esc) == 0 {
		a.add(codec.Event{Kind: codec.EventText, Block: 0, Text: esc})
		return 0
	}
	next := nextWord
	total := boundaries(esc, next) + 1
	if total < n {
		next = nextChar
		total = boundaries(esc, next) + 1
	}
	n = min(n, total)
	start, b, k := 0, 0, 1
	for i := next(esc, 0); i < len(esc) && k < n; i = next(esc, i) {
		b++
		if b == k*total/n {
			a.add(codec.Event{Kind: codec.EventText, Block: 0, Text: esc[start:i]})
			start = i
			k++
		}
	}
	a.add(codec.Event{Kind: codec.EventText, Block: 0, Text: esc[start:]})
	return words
}

// boundaries counts the cut points next finds inside esc.
func boundaries(esc []byte, next func([]byte, int) int) int {
	c := 0
	for i := next(esc, 0); i < len(esc); i = next(esc, i) {
		c++
	}
	return c
}

// nextWord returns the start of the word after position i: the first
// j > i where a space ends, or len(esc).
func nextWord(esc []byte, i int) int {
	for j := i + 1; j < len(esc); j++ {
		if esc[j-1] == ' ' && esc[j] != ' ' {
			return j
		}
	}
	return len(esc)
}

// nextChar returns the start of the character after the one at i: an
// escape sequence (a surrogate pair as one) or a UTF-8 sequence is one
// character.
func nextChar(esc []byte, i int) int {
	switch c := esc[i]; {
	case c == '\\' && i+1 < len(esc) && esc[i+1] == 'u':
		j := i + 6
		if j+1 < len(esc) && esc[j] == '\\' && esc[j+1] == 'u' && isHighSurrogate(esc[i+2:min(j, len(esc))]) {
			j += 6
		}
		return min(j, len(esc))
	case c == '\\':
		return min(i+2, len(esc))
	case c < utf8.RuneSelf:
		return i + 1
	}
	_, size := utf8.DecodeRune(esc[i:])
	return i + size
}

func isHighSurrogate(hex []byte) bool {
	return len(hex) == 4 && (hex[0] == 'd' || hex[0] == 'D') && hex[1] >= '8' && (hex[1] <= '9' || hex[1] == 'a' || hex[1] == 'A' || hex[1] == 'b' || hex[1] == 'B')
}

// maxQuoted bounds how much of a tool result the mock quotes.
const maxQuoted = 400

// appendPlain appends escaped string content reduced to printable ASCII
// (escapes and other characters become spaces, runs of spaces one), at
// most max bytes: a tool's output is the client's, quoted back safely.
func appendPlain(dst, esc []byte, max int) []byte {
	limit := len(dst) + max
	space := len(dst) > 0 && dst[len(dst)-1] == ' '
	for i := 0; i < len(esc) && len(dst) < limit; i = nextChar(esc, i) {
		c := esc[i]
		if c == '\\' && i+1 < len(esc) && esc[i+1] == '/' {
			c = '/'
		}
		if c <= ' ' || c >= 0x7f || c == '\\' || c == '"' {
			if !space {
				dst = append(dst, ' ')
			}
			space = true
			continue
		}
		dst = append(dst, c)
		space = false
	}
	return dst
}

// customInput is the free-text input of a custom tool call: for Codex's
// apply_patch, a patch that adds one small file.
func customInput(name []byte) string {
	if string(name) == "apply_patch" {
		return "*** Begin Patch\n*** Add File: slipstream-mock.txt\n+" + MockOutput + "\n*** End Patch\n"
	}
	return MockOutput
}

// lastUserMessage returns the index of the last message when it is the
// user's, else -1.
func lastUserMessage(r *codec.Request) int {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		switch r.Messages[i].Role {
		case codec.RoleUser:
			return i
		case codec.RoleAssistant:
			return -1
		}
	}
	return -1
}

// toolResultText returns the text of the first tool result in message
// last (escaped content), or nil when it carries none. A result with no
// text gives an empty, non-nil slice.
func toolResultText(r *codec.Request, last int) []byte {
	if last < 0 {
		return nil
	}
	parts := r.MessageParts(last)
	for i := range parts {
		if parts[i].Kind != codec.PartToolResult {
			continue
		}
		for j := i + 1; j <= i+parts[i].Children && j < len(parts); j++ {
			if parts[j].Kind == codec.PartText {
				return parts[j].Text
			}
		}
		return []byte{}
	}
	return nil
}

// calledTool returns the tool named in "call <name>" in the text of
// message last (the last message, the user's), when the request offers
// that tool and the message carries no tool results.
func calledTool(r *codec.Request, last int) *codec.Tool {
	if len(r.Tools) == 0 || last < 0 || toolResultText(r, last) != nil {
		return nil
	}
	// Last text first: clients put reminders before the user's words.
	parts := r.MessageParts(last)
	for i := len(parts) - 1; i >= 0; i-- {
		if parts[i].Kind != codec.PartText {
			continue
		}
		if t := toolIn(r, parts[i].Text); t != nil {
			return t
		}
	}
	return nil
}

func toolIn(r *codec.Request, text []byte) *codec.Tool {
	for rest := text; ; {
		i := bytes.Index(rest, []byte("call "))
		if i < 0 {
			return nil
		}
		rest = rest[i+5:]
		end := 0
		for end < len(rest) && isNameByte(rest[end]) {
			end++
		}
		if t := r.FindTool(rest[:end]); t != nil {
			return t
		}
	}
}

func isNameByte(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
