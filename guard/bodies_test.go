package guard

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Realistic agent request bodies without secrets, for benchmarks and the
// negative tests: an Anthropic Messages conversation whose tool results hold
// source code, diffs, logs, JSON, lockfiles and an encrypted reasoning blob,
// JSON-encoded as the SDKs do.

var goLines = []string{
	"func (s *Server) handle(ctx *fasthttp.RequestCtx) {",
	"\tif err := s.validate(req); err != nil {",
	"\t\treturn fmt.Errorf(\"cannot read config %q: %w\", path, err)",
	"\tfor i, item := range items {",
	"\tbuf = append(buf, item.Name...)",
	"\tdefer mu.Unlock()",
	"// Acquire returns a pooled request; Release it when done.",
	"\tcase http.StatusTooManyRequests:",
	"\tm := make(map[string]int, len(keys))",
	"\treturn nil, errors.New(\"upstream closed the stream\")",
	"\tt.Fatalf(\"got %d, want %d\", got, want)",
	"import (\n\t\"bytes\"\n\t\"context\"\n\t\"sync/atomic\"\n)",
	"type Config struct {\n\tListenAddr string `yaml:\"listen_addr\"`\n\tMaxBodySize int64 `yaml:\"max_body_size\"`\n}",
}

var pyLines = []string{
	"def load_settings(path: str) -> dict[str, Any]:",
	"    with open(path, encoding=\"utf-8\") as fh:",
	"        return yaml.safe_load(fh) or {}",
	"class UserRepository(BaseRepository):",
	"    async def get_by_id(self, user_id: int) -> User | None:",
	"        logger.info(\"fetched user_id=%s in %.2fms\", user_id, elapsed)",
	"    __slots__ = (\"_conn\", \"_cache\", \"_max_retries\")",
	"if __name__ == \"__main__\":\n    main(sys.argv[1:])",
	"    df = pd.read_csv(\"data/orders_2024.csv\", parse_dates=[\"created_at\"])",
}

var tsLines = []string{
	"export async function fetchJSON<T>(url: string, init?: RequestInit): Promise<T> {",
	"  const res = await fetch(url, { ...init, headers: { 'Content-Type': 'application/json' } });",
	"  if (!res.ok) throw new Error(`HTTP ${res.status}: ${res.statusText}`);",
	"import { useEffect, useState } from 'react';",
	"const AUTH_HEADER = process.env.API_TOKEN_HEADER ?? 'Authorization';",
	"  return items.filter((x) => x.enabled).map((x) => ({ id: x.id, label: x.title }));",
	"!function(e,t){\"object\"==typeof exports?module.exports=t():e.lib=t()}(this,function(){return{a:1}});",
}

var proseLines = []string{
	"I'll look at the failing test first and then check the config loader.",
	"The build fails because the generated file is stale; regenerating it fixes the import cycle.",
	"Let me run the linter and the unit tests for the package we changed.",
	"This looks like a race between the reader goroutine and Close; I'll add a mutex.",
	"Here is the plan: 1) reproduce, 2) write a failing test, 3) fix, 4) run the full suite.",
}

type bodyGen struct{ r *rand.Rand }

func (g *bodyGen) pick(l []string) string { return l[g.r.IntN(len(l))] }

func (g *bodyGen) hex(n int) string {
	var sb strings.Builder
	for k := 0; k < n; k++ {
		sb.WriteByte(hexDigits[g.r.IntN(16)])
	}
	return sb.String()
}

func (g *bodyGen) uuid() string {
	h := g.hex(32)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func (g *bodyGen) code(lines []string, n int) string {
	var sb strings.Builder
	for sb.Len() < n {
		sb.WriteString(g.pick(lines))
		sb.WriteByte('\n')
	}
	return sb.String()
}

func (g *bodyGen) diff(n int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "diff --git a/internal/app/server.go b/internal/app/server.go\nindex %s..%s 100644\n--- a/internal/app/server.go\n+++ b/internal/app/server.go\n", g.hex(7), g.hex(7))
	for sb.Len() < n {
		fmt.Fprintf(&sb, "@@ -%d,7 +%d,9 @@ func (s *Server) Start() error {\n", g.r.IntN(900), g.r.IntN(900))
		for k := 0; k < 6; k++ {
			sb.WriteString(g.pick([]string{" ", "-", "+"}))
			sb.WriteString(g.pick(goLines))
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

func (g *bodyGen) logs(n int) string {
	var sb strings.Builder
	for sb.Len() < n {
		fmt.Fprintf(&sb, "2025-0%d-%02dT%02d:%02d:%02d.%03dZ %s request_id=%s ip=10.%d.%d.%d method=%s path=/api/v1/orders/%d status=%s dur=%dms sha=%s\n",
			1+g.r.IntN(9), 1+g.r.IntN(28), g.r.IntN(24), g.r.IntN(60), g.r.IntN(60), g.r.IntN(1000),
			g.pick([]string{"INFO", "WARN", "ERROR", "DEBUG"}), g.uuid(), g.r.IntN(256), g.r.IntN(256), g.r.IntN(256),
			g.pick([]string{"GET", "POST", "PUT"}), g.r.IntN(1e9), g.pick([]string{"200", "201", "404", "500"}), g.r.IntN(3000), g.hex(40))
	}
	return sb.String()
}

func (g *bodyGen) jsonDoc(n int) string {
	var sb strings.Builder
	sb.WriteString("{\n  \"name\": \"web-app\",\n  \"version\": \"3.14.2\",\n  \"packages\": {\n")
	for sb.Len() < n {
		fmt.Fprintf(&sb, "    \"node_modules/@scope/pkg-%d\": {\"version\": \"%d.%d.%d\", \"resolved\": \"https://registry.npmjs.org/pkg/-/pkg-%d.tgz\", \"integrity\": \"sha512-%s\"},\n",
			g.r.IntN(1e4), g.r.IntN(20), g.r.IntN(50), g.r.IntN(100), g.r.IntN(100), base64.StdEncoding.EncodeToString([]byte(g.hex(32))))
	}
	sb.WriteString("  }\n}\n")
	return sb.String()
}

func (g *bodyGen) blob(n int) string {
	raw := make([]byte, n*3/4)
	for k := range raw {
		raw[k] = byte(g.r.IntN(256))
	}
	return base64.StdEncoding.EncodeToString(raw)
}

// agentBody returns a Messages request body of about size bytes.
func agentBody(seed uint64, size int) []byte {
	g := &bodyGen{rand.New(rand.NewPCG(seed, 42))}
	type block struct {
		Type      string          `json:"type"`
		Text      string          `json:"text,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Input     json.RawMessage `json:"input,omitempty"`
		ToolUseID string          `json:"tool_use_id,omitempty"`
		Content   string          `json:"content,omitempty"`
		Signature string          `json:"signature,omitempty"`
		Thinking  string          `json:"thinking,omitempty"`
	}
	type msg struct {
		Role    string  `json:"role"`
		Content []block `json:"content"`
	}
	var msgs []msg
	total := 0
	for turn := 0; total < size; turn++ {
		chunk := 500 + g.r.IntN(3000)
		var content string
		switch turn % 6 {
		case 0:
			content = g.code(goLines, chunk)
		case 1:
			content = g.diff(chunk)
		case 2:
			content = g.logs(chunk)
		case 3:
			content = g.code(pyLines, chunk) + g.code(tsLines, chunk/2)
		case 4:
			content = g.jsonDoc(chunk)
		case 5:
			content = g.code(proseLines, chunk/4)
		}
		id := "toolu_01" + g.hex(22)
		input, _ := json.Marshal(map[string]string{"command": "cat internal/app/" + g.hex(6) + ".go", "description": "Read the file"})
		assistant := msg{"assistant", []block{{Type: "text", Text: g.pick(proseLines)}, {Type: "tool_use", ID: id, Name: "Bash", Input: input}}}
		if turn%5 == 2 {
			assistant.Content = append([]block{{Type: "thinking", Thinking: g.pick(proseLines), Signature: g.blob(400)}}, assistant.Content...)
		}
		msgs = append(msgs, assistant, msg{"user", []block{{Type: "tool_result", ToolUseID: id, Content: content}}})
		total += len(content) + 300
	}
	body, err := json.Marshal(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 32000, "stream": true,
		"system": []block{{Type: "text", Text: "You are Claude Code, Anthropic's official CLI for Claude."}}, "messages": msgs})
	if err != nil {
		panic(err)
	}
	return body
}
