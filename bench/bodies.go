// Package bench is slipstream's benchmark harness: a stub upstream for the
// four dialects, a closed-loop load generator, an RSS/CPU sampler for
// /proc, the workload mixes of docs/BENCHMARKS.md, a minimal
// net/http/httputil.ReverseProxy baseline and the report writer.
//
// Nothing here is imported by slipstream; slipstream is always measured as
// a separate process.
package bench

import (
	"math/rand/v2"
	"strconv"
)

// Request bodies are generated, never copied from a product: the shapes
// follow what Claude Code and Codex CLI send,
// the text is synthesized from a seeded PRNG so every run sends the same
// bytes.

// words is the vocabulary of prose-like text.
var words = []string{
	"the", "request", "handler", "returns", "a", "buffer", "when", "stream", "ends",
	"we", "need", "to", "check", "that", "each", "event", "is", "flushed", "before",
	"next", "one", "arrives", "and", "client", "sees", "it", "in", "order", "file",
	"function", "test", "fails", "because", "value", "was", "nil", "after", "reload",
	"config", "provider", "model", "token", "count", "limit", "memory", "pool", "size",
	"class", "drop", "large", "bodies", "so", "process", "stays", "near", "idle",
	"let", "me", "look", "at", "this", "change", "then", "run", "again", "with",
	"race", "detector", "on", "its", "output", "shows", "three", "goroutines", "left",
	"behind", "which", "means", "reader", "not", "joined", "fix", "by", "closing",
	"upstream", "connection", "first", "error", "path", "should", "report", "status",
}

// idents is the vocabulary of code-like text.
var idents = []string{
	"buf", "err", "n", "ctx", "req", "resp", "body", "ev", "state", "cfg", "pool",
	"dst", "src", "tail", "key", "model", "limit", "count", "offset", "i", "w", "r",
}

var funcs = []string{
	"appendEvent", "readFrame", "parseModel", "writeHeader", "flushEvent", "Reset",
	"acquireState", "releaseState", "countTokens", "spliceModel", "nextEvent",
}

// gen is a deterministic text source.
type gen struct {
	r *rand.Rand
}

// newGen returns a generator seeded with seed; equal seeds give equal text.
func newGen(seed uint64) *gen {
	return &gen{r: rand.New(rand.NewPCG(seed, 0x5eed5eed))}
}

func (g *gen) pick(list []string) string {
	return list[g.r.IntN(len(list))]
}

// appendProse appends about n bytes of prose-like text (never more than n).
func (g *gen) appendProse(dst []byte, n int) []byte {
	end := len(dst) + n
	for {
		w := g.pick(words)
		if len(dst)+len(w)+2 > end {
			break
		}
		dst = append(dst, w...)
		if g.r.IntN(12) == 0 {
			dst = append(dst, '.')
		}
		dst = append(dst, ' ')
	}
	return padTo(dst, end)
}

// appendCode appends about n bytes of Go-like code (never more than n).
func (g *gen) appendCode(dst []byte, n int) []byte {
	end := len(dst) + n
	for {
		line := g.codeLine()
		if len(dst)+len(line)+1 > end {
			break
		}
		dst = append(dst, line...)
		dst = append(dst, '\n')
	}
	return padTo(dst, end)
}

func (g *gen) codeLine() string {
	a, b, f := g.pick(idents), g.pick(idents), g.pick(funcs)
	switch g.r.IntN(5) {
	case 0:
		return "\tif " + a + " != nil {\n\t\treturn " + b + ", fmt.Errorf(\"cannot " + f + ": %w\", " + a + ")\n\t}"
	case 1:
		return "\t" + a + " = " + f + "(" + a + "[:0], " + b + ")"
	case 2:
		return "func " + f + "(" + a + " []byte, " + b + " int) []byte {"
	case 3:
		return "\tfor " + a + " := 0; " + a + " < len(" + b + "); " + a + "++ {"
	default:
		return "\t// " + f + " keeps " + a + " until " + b + " is released."
	}
}

// padTo pads dst with spaces up to length end.
func padTo(dst []byte, end int) []byte {
	for len(dst) < end {
		dst = append(dst, ' ')
	}
	return dst
}

// appendJSONText appends a JSON string holding about n bytes of generated
// text; escaping may make the encoded string longer than n.
func (g *gen) appendJSONText(dst []byte, n int, code bool) []byte {
	var raw [64 << 10]byte
	tmp := raw[:0]
	if n > len(raw) {
		tmp = make([]byte, 0, n)
	}
	if code {
		tmp = g.appendCode(tmp, n)
	} else {
		tmp = g.appendProse(tmp, n)
	}
	return appendJSONString(dst, tmp)
}

// appendJSONString appends s as a JSON string literal.
func appendJSONString(dst, s []byte) []byte {
	dst = append(dst, '"')
	for _, c := range s {
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			if c < 0x20 {
				dst = append(dst, `\u00`...)
				dst = append(dst, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
				continue
			}
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// appendQuoted appends s (plain ASCII, no escapes needed) as a JSON string.
func appendQuoted(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// appendID appends prefix followed by 16 deterministic hex digits.
func (g *gen) appendID(dst []byte, prefix string) []byte {
	dst = append(dst, '"')
	dst = append(dst, prefix...)
	dst = strconv.AppendUint(dst, g.r.Uint64()|1<<60, 16)
	return append(dst, '"')
}

// toolNames are the names of the generated tools (shapes only; the
// descriptions and schemas are synthesized).
var toolNames = []string{
	"read_file", "write_file", "edit_file", "run_shell", "grep_repo", "list_dir",
	"web_fetch", "todo_write", "glob_files", "notebook_edit", "task_spawn", "ask_user",
	"search_symbols", "open_pr", "lint", "format", "test_runner", "diff_view",
	"git_log", "git_blame", "db_query", "http_call", "image_view", "plan_update",
}

// appendSchema appends a JSON Schema object with nprops string properties.
func (g *gen) appendSchema(dst []byte, nprops int, withDollarSchema bool) []byte {
	dst = append(dst, `{"type":"object"`...)
	if withDollarSchema {
		dst = append(dst, `,"$schema":"http://json-schema.org/draft-07/schema#"`...)
	}
	dst = append(dst, `,"properties":{`...)
	for i := 0; i < nprops; i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendQuoted(dst, idents[(i*7+3)%len(idents)]+strconv.Itoa(i))
		dst = append(dst, `:{"type":"string","description":`...)
		dst = g.appendJSONText(dst, 40+g.r.IntN(80), false)
		dst = append(dst, '}')
	}
	dst = append(dst, `},"required":[`...)
	dst = appendQuoted(dst, idents[3%len(idents)]+"0")
	return append(dst, `],"additionalProperties":false}`...)
}

// toolCount scales the number of tools with the body size: Claude Code
// sends 24 tools in a 76 KB body; a 10 KB body gets a few.
func toolCount(size int) int {
	return min(max(size/(8<<10), 2), len(toolNames))
}
