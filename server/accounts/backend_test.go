package accounts

import (
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/server/config"
	"slipstream/server/provider"
)

// fakeCall is an attempt without a server: what the backend reads and
// what it sets.
type fakeCall struct {
	prov      *provider.Provider
	cred      *provider.Credential
	dialect   codec.Dialect
	stream    bool
	counting  bool
	ua, body  []byte
	upModel   []byte
	hdr       fasthttp.RequestHeader
	tok       any
	upBody    []byte
	path      string
	aggregate bool
}

var _ provider.Call = (*fakeCall)(nil)

func (c *fakeCall) Provider() *provider.Provider     { return c.prov }
func (c *fakeCall) Credential() *provider.Credential { return c.cred }
func (c *fakeCall) Dialect() codec.Dialect           { return c.dialect }
func (c *fakeCall) Streamed() bool                   { return c.stream }
func (c *fakeCall) Counting() bool                   { return c.counting }
func (c *fakeCall) UserAgent() []byte                { return c.ua }
func (c *fakeCall) ClientBody() []byte               { return c.body }
func (c *fakeCall) UpModel() []byte                  { return c.upModel }
func (c *fakeCall) Header() *fasthttp.RequestHeader  { return &c.hdr }
func (c *fakeCall) Token() any                       { return c.tok }
func (c *fakeCall) SetToken(t any)                   { c.tok = t }
func (c *fakeCall) UpBody() ([]byte, bool)           { return c.upBody, true }
func (c *fakeCall) BodyBuffer(n int) []byte          { return make([]byte, 0, n) }
func (c *fakeCall) SetUpBody(b []byte)               { c.upBody = b }
func (c *fakeCall) SetPath(p string)                 { c.path = p }
func (c *fakeCall) Aggregate()                       { c.aggregate = true }
func (c *fakeCall) ResponseHeader(string) []byte     { return nil }
func (c *fakeCall) StreamError() ([]byte, int, bool) { return nil, 0, false }
func (c *fakeCall) ErrorBody() []byte                { return nil }
func (c *fakeCall) Unwrap()                          {}

func newCall(kind string, d codec.Dialect, body string) *fakeCall {
	p := provider.New(&config.Provider{Name: "acct", Kind: kind})
	return &fakeCall{prov: p, dialect: d, body: []byte(body), upBody: []byte(body), cred: &provider.Credential{Name: "a@b"}}
}

// TestBackendRefuse: each subscription backend takes only what its own
// client sends, with no server in the way.
func TestBackendRefuse(t *testing.T) {
	f := func(typ string, c *fakeCall, want int) {
		t.Helper()
		b := &Backend{typ: typ}
		if got, msg := b.Refuse(c); got != want {
			t.Fatalf("%s: %d %q, want %d", typ, got, msg, want)
		}
	}
	claude := newCall(config.KindClaudeAccount, codec.DialectAnthropic, `{}`)
	claude.ua = []byte("claude-cli/2.0 (external, cli)")
	f(TypeClaude, claude, 0)
	other := newCall(config.KindClaudeAccount, codec.DialectAnthropic, `{}`)
	other.ua = []byte("curl/8")
	f(TypeClaude, other, fasthttp.StatusForbidden)
	f(TypeClaude, newCall(config.KindClaudeAccount, codec.DialectChat, `{}`), fasthttp.StatusForbidden)
	f(TypeCodex, newCall(config.KindCodexAccount, codec.DialectResponses, `{"store":false}`), 0)
	f(TypeCodex, newCall(config.KindCodexAccount, codec.DialectResponses, `{"store":true}`), fasthttp.StatusBadRequest)
	f(TypeCodex, newCall(config.KindCodexAccount, codec.DialectResponses, `{"previous_response_id":"r"}`), fasthttp.StatusBadRequest)
	f(TypeCodex, newCall(config.KindCodexAccount, codec.DialectChat, `{"store":true}`), 0) // translated: the body is rewritten
	count := newCall(config.KindGeminiAccount, codec.DialectGemini, `{}`)
	f(TypeGemini, count, 0)
	count.counting = true
	f(TypeGemini, count, fasthttp.StatusNotImplemented)
}

// TestBackendPrepare: the ChatGPT body members and the Code Assist
// envelope.
func TestBackendPrepare(t *testing.T) {
	c := newCall(config.KindCodexAccount, codec.DialectResponses, `{"model":"m","temperature":1,"input":[]}`)
	if st, msg := (&Backend{typ: TypeCodex}).Prepare(c); st != 0 {
		t.Fatal(msg)
	}
	if want := `{"store":false,"instructions":"","stream":true,"model":"m","input":[]}`; string(c.upBody) != want || !c.aggregate {
		t.Fatalf("codex body %s (aggregate %v), want %s", c.upBody, c.aggregate, want)
	}
	c = newCall(config.KindCodexAccount, codec.DialectResponses, `{"store":false,"instructions":"","stream":true}`)
	c.stream = true
	(&Backend{typ: TypeCodex}).Prepare(c)
	if string(c.upBody) != `{"store":false,"instructions":"","stream":true}` || c.aggregate {
		t.Fatalf("a body Codex sent changed: %s", c.upBody)
	}

	g := newCall(config.KindGeminiAccount, codec.DialectGemini, ` {"contents":[]} `)
	g.upModel, g.stream = []byte("gemini-3-pro"), true
	g.tok = &Token{ProjectID: "proj-1"}
	if st, msg := (&Backend{typ: TypeGemini}).Prepare(g); st != 0 {
		t.Fatal(msg)
	}
	if want := `{"model":"gemini-3-pro","project":"proj-1","request":{"contents":[]}}`; string(g.upBody) != want || g.path != "/v1internal:streamGenerateContent?alt=sse" {
		t.Fatalf("envelope %s at %s", g.upBody, g.path)
	}
	g.tok = &Token{}
	if st, msg := (&Backend{typ: TypeGemini}).Prepare(g); st != fasthttp.StatusBadRequest || !strings.Contains(msg, "a@b") {
		t.Fatalf("no project: %d %q", st, msg)
	}
}
