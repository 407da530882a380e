package accounts

import (
	"bytes"
	"context"
	"log"
	"time"

	"github.com/tidwall/gjson"
	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/server/provider"
)

// Backend serves the providers of one account type (provider.Backend):
// it signs each request with the access token of the attempt's account
// (refreshed first when it has expired) and the headers its type
// requires, adapts the request to what the subscription backend takes,
// and reads each answer for what it says about the account (a used-up
// quota window, a ban, a refused token, passive window state).
type Backend struct {
	m   *Manager
	typ string
	o   BackendOptions
}

// BackendOptions configure a Backend; the zero value of each field is
// usable.
type BackendOptions struct {
	// ServerError is the rest of an account whose 200 stream starts with
	// an error event (failover.server_error).
	ServerError time.Duration
	// Log receives what an answer showed (names only). Default: the
	// manager's.
	Log *log.Logger
	// OnRequest counts an answer of an account; OnCooldown an account
	// resting as a whole ("banned", "quota"). Either may be nil.
	OnRequest  func(name string, status int)
	OnCooldown func(name, why string)
}

var _ provider.Backend = (*Backend)(nil)

// NewBackend returns the backend of providers of account type typ
// (TypeClaude, TypeCodex or TypeGemini) over m.
func NewBackend(m *Manager, typ string, o BackendOptions) *Backend {
	if o.Log == nil {
		o.Log = m.o.Log
	}
	return &Backend{m: m, typ: typ, o: o}
}

// Refuse implements provider.Backend: each subscription backend takes
// only what its own client sends.
func (b *Backend) Refuse(c provider.Call) (int, string) {
	name := c.Provider().Name
	switch b.typ {
	case TypeClaude:
		if c.Dialect() != codec.DialectAnthropic || !bytes.HasPrefix(c.UserAgent(), []byte("claude-cli/")) {
			return fasthttp.StatusForbidden, "provider " + name + " serves a Claude subscription account, which takes Claude Code's own requests only " +
				"(Anthropic Messages from claude-cli); this request comes from another client. Use a provider of kind anthropic with an API key for it."
		}
	case TypeCodex:
		if c.Dialect() == codec.DialectResponses && gjson.GetBytes(c.ClientBody(), "store").Raw == "true" {
			return fasthttp.StatusBadRequest, "provider " + name + " serves a ChatGPT (Codex) account: its backend stores nothing; send \"store\": false (as Codex does)."
		}
		if c.Dialect() == codec.DialectResponses && gjson.GetBytes(c.ClientBody(), "previous_response_id").Exists() {
			return fasthttp.StatusBadRequest, "provider " + name + " serves a ChatGPT (Codex) account: its backend keeps no responses, so previous_response_id cannot be used; send the whole conversation (or use the WebSocket transport, which slipstream chains itself)."
		}
	case TypeGemini:
		if c.Counting() {
			return fasthttp.StatusNotImplemented, "provider " + name + " (gemini-account) counts tokens locally only; remove count_tokens: upstream"
		}
	}
	return 0, ""
}

// Sign implements provider.Backend: the account's current access token
// and the headers its type requires. An account whose token cannot be
// had goes unsigned: the upstream's 401 fails over.
func (b *Backend) Sign(c provider.Call, cred *provider.Credential) {
	if cred == nil {
		return
	}
	tok, err := b.m.Token(context.Background(), cred.Name)
	if err != nil {
		b.o.Log.Printf("accounts: %s: %v", cred.Name, err)
		return
	}
	c.SetToken(tok)
	h := c.Header()
	h.Set("Authorization", tok.Bearer)
	switch b.typ {
	case TypeClaude:
		if len(h.Peek("Anthropic-Version")) == 0 {
			h.Set("Anthropic-Version", "2023-06-01")
		}
		addBeta(h, "oauth-2025-04-20")
	case TypeCodex:
		if tok.AccountID != "" {
			h.Set("Chatgpt-Account-Id", tok.AccountID)
		}
	case TypeGemini:
		// The request goes out under the account's Code Assist project.
		// A client's X-Goog-User-Project would choose the project the
		// account's token is charged to, on any project its owner can use.
		h.Del("X-Goog-User-Project")
		h.Del("X-Goog-Request-Params")
	}
}

// token is the account token c was signed with, or nil.
func token(c provider.Call) *Token {
	t, _ := c.Token().(*Token)
	return t
}

// addBeta adds flag to the anthropic-beta list unless present: an OAuth
// access token is accepted only with the oauth beta.
func addBeta(h *fasthttp.RequestHeader, flag string) {
	cur := h.Peek("Anthropic-Beta")
	for _, f := range bytes.Split(cur, []byte{','}) {
		if string(bytes.TrimSpace(f)) == flag {
			return
		}
	}
	if len(cur) == 0 {
		h.Set("Anthropic-Beta", flag)
		return
	}
	h.Set("Anthropic-Beta", string(cur)+","+flag)
}

// Prepare implements provider.Backend: a ChatGPT request gets the
// members its backend requires (codexBody), a Google one the Code Assist
// envelope (codeAssistBody).
func (b *Backend) Prepare(c provider.Call) (int, string) {
	switch b.typ {
	case TypeGemini:
		return codeAssistBody(c)
	case TypeCodex:
		return codexBody(c)
	}
	return 0, ""
}

// Classify implements provider.Backend: an expired token is refreshed
// and the same account tried again; a used-up window rests the whole
// account until its (capped) reset; an error event inside a 200 stream
// fails over like an error answer.
func (b *Backend) Classify(c provider.Call, status int) provider.Judgement {
	cred := c.Credential()
	if cred == nil {
		return provider.Judgement{}
	}
	m, name := b.m, cred.Name
	if b.o.OnRequest != nil {
		b.o.OnRequest(name, status)
	}
	now := m.o.Now()
	hdr := c.ResponseHeader
	if status < 400 {
		m.Observe(name, ReadSignal(b.typ, status, hdr, nil, now))
		if status == fasthttp.StatusOK {
			if body, st, ok := c.StreamError(); ok {
				b.o.Log.Printf("accounts: %s answered 200 with an error event (as status %d)", name, st)
				return b.failed(name, st, hdr, body, now, provider.Judgement{Set: true, Reason: "5xx", Rest: provider.Backoff{Base: b.o.ServerError}})
			}
			if b.typ == TypeGemini {
				c.Unwrap()
			}
		}
		m.Succeeded(name)
		return provider.Judgement{}
	}
	if tok := token(c); status == fasthttp.StatusUnauthorized && tok != nil {
		if m.Rejected(context.Background(), name, tok) == nil {
			return provider.Judgement{Set: true, Reason: "401", Again: true} // try the account again with its new token
		}
	}
	return b.failed(name, status, hdr, c.ErrorBody(), now, provider.Judgement{})
}

// failed applies a failed answer's signals (quota rest, ban) and returns
// the judgement (j when the answer shows neither).
func (b *Backend) failed(name string, status int, hdr Header, body []byte, now time.Time, j provider.Judgement) provider.Judgement {
	sig := ReadSignal(b.typ, status, hdr, body, now)
	until, banned := b.m.Observe(name, sig)
	switch {
	case banned:
		b.cooldown(name, "banned")
		return provider.Judgement{Set: true, Reason: "banned", Rest: provider.Backoff{Base: 24 * time.Hour}}
	case !until.IsZero():
		b.cooldown(name, "quota")
		b.o.Log.Printf("accounts: %s rests until %s (%s)", name, until.UTC().Format(time.RFC3339), sig.Reason)
		return provider.Judgement{Set: true, Reason: "quota", Rest: provider.Backoff{Base: until.Sub(now)}}
	}
	return j
}

func (b *Backend) cooldown(name, why string) {
	if b.o.OnCooldown != nil {
		b.o.OnCooldown(name, why)
	}
}
