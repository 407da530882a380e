package guardtest

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Traffic returns a request body in dialect (one of Dialects) of a coding
// agent in the middle of a tool loop: a system prompt, the user's task,
// then assistant turns with tool calls and the tool results that answer
// them (whole files: .env, config.yaml, key files, service-account JSON;
// git diffs; shell logs), ending with a tool result. Each secret is
// embedded once, by its Text, in one of these places, taken in turn: a
// file a tool read, the arguments of a tool call that writes a file, the
// user's text, the system prompt, a diff, a shell log or a shell command.
// Multi-line secrets (private keys, key files) go into files, tool
// arguments, user text and the system prompt, not diffs. In the anthropic
// dialect every other file read is numbered as Claude Code's Read tool
// returns it ("     1→line"); in openai-responses every other shell
// result is wrapped in JSON ({"output": ..., "metadata": ...}) as Codex's
// shell tool wraps it, so a secret there is escaped twice.
//
// The body is valid JSON, encoded as one of four SDK encoders does, chosen
// by seed: only what JSON requires (JavaScript), non-ASCII as \uXXXX
// (Python), <, > and & as \u003c... (Go), or / as \/ and non-ASCII as
// \uXXXX (PHP); the text around the secrets carries non-ASCII characters.
// Tool-call arguments are a JSON string inside the JSON in openai-chat and
// openai-responses (so a secret there is escaped twice) and an object in
// anthropic and gemini. The same arguments give the same body.
func Traffic(dialect string, seed uint64, secrets []Secret) []byte {
	return traffic(dialect, seed, secrets, escapeMode(seed%uint64(numEscapeModes)))
}

// traffic is Traffic in a given encoder's style; dialect "ws" is TrafficWS.
func traffic(dialect string, seed uint64, secrets []Secret, m escapeMode) []byte {
	c := buildConvo(seed, secrets)
	if dialect == "ws" {
		return encodeJSON(nil, c.body(DialectResponses, true), m)
	}
	return encodeJSON(nil, c.body(dialect, false), m)
}

// TrafficWS is Traffic for the Responses API over WebSocket: the
// response.create frame Codex sends, whose envelope differs from the HTTP
// body (a "type" member first, no instructions, client_metadata with
// string values; see docs/WEBSOCKET.md).
func TrafficWS(seed uint64, secrets []Secret) []byte {
	return traffic("ws", seed, secrets, escapeMode(seed%uint64(numEscapeModes)))
}

// convo is a conversation before it is written in a dialect.
type convo struct {
	r      *rand.Rand
	system string
	task   string
	steps  []step
}

// step is one assistant turn with a tool call and the tool's result,
// optionally followed by more user text.
type step struct {
	say      string
	tool     string // read, write or shell
	args     obj
	result   string
	userText string
	// numbered: Claude Code's Read tool shows the file with line numbers
	// (cat -n style, "     1→text"); the anthropic body writes it so.
	numbered bool
}

// Slots of a secret, taken in turn.
const (
	slotFile = iota
	slotWrite
	slotUser
	slotSystem
	slotDiff
	slotShell
	numSlots
)

func buildConvo(seed uint64, secrets []Secret) *convo {
	r := newRand(seed, 2)
	c := &convo{
		r:      r,
		system: "You are a coding agent working in the user’s repository. Use the tools to read and edit files; keep changes minimal — and never print credentials.",
		task:   pick(r, []string{"The deploy to staging fails with a 403 since yesterday – can you find out why and fix it?", "Bitte prüfe, warum der Build auf main kaputt ist, und repariere ihn.", "Set up the billing service locally and make the integration tests pass 🚀"}),
	}
	for i, s := range secrets {
		slot := (i + int(seed%numSlots)) % numSlots
		c.addSecret(s, slot, i)
	}
	c.steps = append(c.steps, c.fillerStep())
	return c
}

// multiLine reports whether a secret spans lines (or is a whole file).
func multiLine(s Secret) bool { return strings.Contains(s.Text(), "\n") }

func (c *convo) addSecret(s Secret, slot, i int) {
	r := c.r
	text := s.Text()
	if slot == slotDiff && multiLine(s) {
		slot = slotFile
	}
	switch slot {
	case slotFile:
		path, doc := c.fileWith(s)
		c.steps = append(c.steps, step{say: "Let me read " + path + " first.", tool: "read", args: obj{{"file_path", path}}, result: doc, numbered: i%2 == 0})
	case slotWrite:
		path, doc := c.fileWith(s)
		c.steps = append(c.steps, step{say: "I’ll write the corrected " + path + ".", tool: "write", args: obj{{"file_path", path}, {"content", doc}},
			result: "File written successfully: " + path})
	case slotUser:
		st := c.fillerStep()
		st.userText = pick(r, []string{"Still failing. Here is what I have locally:\n```\n", "FYI this is the value from the vault → \n", "Use exactly this, don’t change it:\n\n"}) + text + "\n```\nDoes that look right?"
		c.steps = append(c.steps, st)
	case slotSystem:
		c.system += "\n\n# Environment notes (from the team wiki)\n" + text
		c.steps = append(c.steps, c.fillerStep())
	case slotDiff:
		c.steps = append(c.steps, step{say: "Checking what changed.", tool: "shell", args: obj{{"command", "git diff HEAD~1 -- .env config/"}},
			result: "diff --git a/.env b/.env\nindex " + randString(r, hexChars, 7) + ".." + randString(r, hexChars, 7) + " 100644\n--- a/.env\n+++ b/.env\n@@ -3,6 +3,7 @@ LOG_LEVEL=info\n PORT=8080\n FEATURE_FLAGS=search,export\n-" + envFiller(r) + "\n+" + text + "\n " + envFiller(r) + "\n"})
	default:
		if i%2 == 0 {
			c.steps = append(c.steps, step{say: "Looking at the environment of the failing job.", tool: "shell", args: obj{{"command", "cat .env.ci && ./scripts/check-env.sh"}},
				result: "$ cat .env.ci\n" + envFiller(r) + "\n" + text + "\n" + envFiller(r) + "\n$ ./scripts/check-env.sh\n✔ 12 variables set\nexit status 0\n"})
			return
		}
		cmd := "cat > .env.local <<'EOF'\n" + text + "\nEOF\nchmod 600 .env.local"
		c.steps = append(c.steps, step{say: "Writing the local env file.", tool: "shell", args: obj{{"command", cmd}}, result: "exit status 0"})
	}
}

// fileWith returns a path and a file holding s among realistic lines.
func (c *convo) fileWith(s Secret) (string, string) {
	r := c.r
	switch {
	case s.Rule == "private_key":
		return pick(r, []string{"~/.ssh/id_deploy", "certs/server.key", "infra/keys/signing.pem"}), s.Text()
	case s.Rule == "gcp_service_account_key":
		return "secrets/gcp-sa.json", s.Text()
	case multiLine(s):
		return "config/settings.ini", "# local settings\n[default]\nregion = eu-west-1\n" + s.Text() + "\n"
	}
	switch r.IntN(3) {
	case 0:
		return ".env", "# generated by setup.sh — do not commit\n" + envFiller(r) + "\n" + s.Text() + "\n" + envFiller(r) + "\n"
	case 1:
		return "config.yaml", "service:\n  name: billing\n  port: 8080\n# credentials\n" + s.Text() + "\nretries: 3\n"
	}
	return "src/settings.py", pythonSource(r) + "\n# TODO(ops): move to the vault\nLEGACY = '''\n" + s.Text() + "\n'''\n"
}

// numberLines writes text as Claude Code's Read tool returns a file:
// each line after its number, right-aligned in six columns, and an arrow.
func numberLines(text string) string {
	var b strings.Builder
	for i, l := range strings.SplitAfter(strings.TrimSuffix(text, "\n"), "\n") {
		fmt.Fprintf(&b, "%6d→%s", i+1, l)
	}
	return b.String()
}

// fillerStep is a tool call whose result holds no secret.
func (c *convo) fillerStep() step {
	r := c.r
	var b strings.Builder
	for range 1 + r.IntN(3) {
		b.WriteString(pick(r, negativeChunks)(r))
		b.WriteString("\n")
	}
	return step{say: pick(r, []string{"Let me look at the code.", "Now the handler.", "Running the tests again…"}), tool: "read",
		args: obj{{"file_path", pick(r, []string{"internal/billing/client.go", "web/src/api.ts", "scripts/migrate.py"})}}, result: b.String()}
}

func envFiller(r *rand.Rand) string {
	return pick(r, []string{"NODE_ENV=production", "LOG_LEVEL=debug", "PORT=3000", "REGION=eu-central-1", "WORKERS=4", "CACHE_TTL=300s"})
}
