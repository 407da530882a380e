// Package mock is the built-in provider that answers every dialect locally
// and deterministically: a fixed text reply, split into paced stream
// deltas, or a tool call when the request offers tools and its last user
// text says "call <tool_name>". It produces dialect-neutral Events; the
// client dialect's encoder (the same one translated responses use) writes
// them, so the mock exercises the real output path.
package mock

import (
	"bytes"
	"strconv"
	"sync/atomic"
	"time"

	"slipstream/codec"
	"slipstream/server/config"
)

// Mock is one configured mock provider. It is immutable and safe for
// concurrent use.
type Mock struct {
	chunks [][]byte // the escaped reply, split at word boundaries
	delay  time.Duration
	seq    atomic.Uint64
}

// New builds the mock from its provider configuration (defaults applied).
func New(c *config.Provider) *Mock {
	reply := codec.AppendEscaped(nil, []byte(c.Reply))
	return &Mock{chunks: split(reply, c.Chunks), delay: c.ChunkDelay.D()}
}

// Delay is the pause between two stream deltas.
func (m *Mock) Delay() time.Duration { return m.delay }

// split cuts escaped text into at most n pieces at spaces, so no piece
// ends inside an escape sequence.
func split(esc []byte, n int) [][]byte {
	if n <= 1 || len(esc) == 0 {
		return [][]byte{esc}
	}
	var out [][]byte
	size := (len(esc) + n - 1) / n
	for len(esc) > 0 && len(out) < n-1 {
		i := bytes.IndexByte(esc[min(size, len(esc)):], ' ')
		if i < 0 {
			break
		}
		cut := min(size, len(esc)) + i + 1
		out = append(out, esc[:cut])
		esc = esc[cut:]
	}
	if len(esc) > 0 {
		out = append(out, esc)
	}
	return out
}

// Answer is the mock's reply to one request, as Events. IDs are views into
// the Answer's own buffer; Reset keeps capacity.
type Answer struct {
	Events []codec.Event
	idBuf  []byte
}

// Reset empties a, keeping capacity.
func (a *Answer) Reset() {
	clear(a.Events[:cap(a.Events)])
	a.Events = a.Events[:0]
	a.idBuf = a.idBuf[:0]
}

// Build fills a with the answer to r. inputTokens is the request's token
// count (the caller counts it); output counts are the reply's words.
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
	if tool := calledTool(r); tool != nil {
		a.add(codec.Event{Kind: codec.EventToolCall, Block: 0, ID: callID, Name: tool.Name})
		// Arguments are JSON text escaped as string content; a custom
		// (free-text) tool is a function of one string "input" outside
		// Responses, and the Responses encoder turns it back.
		args := []byte(`{}`)
		if tool.Kind == codec.ToolCustom {
			args = []byte(`{\"input\":\"mock input\"}`)
		}
		a.add(codec.Event{Kind: codec.EventToolArgs, Block: 0, Text: args})
		a.add(codec.Event{Kind: codec.EventBlockStop, Block: 0})
		usage.Output = 8
		stop = codec.StopToolUse
	} else {
		for _, c := range m.chunks {
			a.add(codec.Event{Kind: codec.EventText, Block: 0, Text: c})
			usage.Output += int64(bytes.Count(c, []byte{' '})) + 1
		}
		a.add(codec.Event{Kind: codec.EventBlockStop, Block: 0})
	}
	a.add(codec.Event{Kind: codec.EventFinish, Stop: stop, Usage: usage})
	a.add(codec.Event{Kind: codec.EventEnd})
}

func (a *Answer) add(ev codec.Event) { a.Events = append(a.Events, ev) }

// calledTool returns the tool named in "call <name>" in the last user
// message's text, when the request offers that tool.
func calledTool(r *codec.Request) *codec.Tool {
	if len(r.Tools) == 0 {
		return nil
	}
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role != codec.RoleUser {
			continue
		}
		for _, p := range r.MessageParts(i) {
			if p.Kind != codec.PartText {
				continue
			}
			if t := toolIn(r, p.Text); t != nil {
				return t
			}
		}
		return nil
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
