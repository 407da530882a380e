package server

import (
	"github.com/valyala/fasthttp"

	"slipstream/guard"
	"slipstream/pool"
)

// guardPart is the guardrails' state of one request (the front stage's
// step over request content): the rule set x.body was checked with, the
// redacted body when a rule redacted, and the names of the rules that
// matched, for the access log.
type guardPart struct {
	checked bool         // x.body was checked for the current provider
	set     *guard.Set   // the set it was checked with; nil: no rule applies
	buf     *pool.Buffer // the redacted body x.body is, or nil
	orig    []byte       // the client's body while x.body is buf's
	rules   []byte       // matched rule names, comma separated (scratch, kept)

	// old are redacted bodies a failover replaced: views into them (the
	// plan's model, an attempt's upstream model) live until the request
	// ends, so they go back to the pool with it.
	old []*pool.Buffer
}

// Reset gives the redacted bodies back and forgets the checks; rules and
// old keep their capacity.
func (g *guardPart) Reset() {
	pool.Put(g.buf)
	for i, b := range g.old {
		pool.Put(b)
		g.old[i] = nil
	}
	*g = guardPart{rules: trimScratch(g.rules), old: g.old[:0]}
}

// guardFront checks the request's content against the guardrails of its
// key and first provider, before anything is sent: a block answers 400
// naming the rule; a redaction replaces x.body. On failure it has written
// the error.
func (x *exchange) guardFront() bool {
	if status, msg := x.guardBody(); status != 0 {
		x.s.writeError(x.ctx, x.rt.dialect, status, msg)
		return false
	}
	return true
}

// guardBody makes x.body what the current target's provider may receive
// under the guardrails that apply to it. A failover to a provider under
// another policy checks the client's body again, from its original; the
// same policy costs a pointer compare. On a block it returns 400 and the
// message.
func (x *exchange) guardBody() (status int, msg string) {
	set := x.s.guards.For(x.keyName(), x.target.Provider.Name)
	g := &x.guard
	if g.checked && set == g.set {
		return 0, ""
	}
	g.checked, g.set = true, set
	body := x.clientBody()
	if set == nil {
		x.useBody(body, nil)
		return 0, ""
	}
	m := guard.AcquireMatches()
	defer guard.ReleaseMatches(m)
	set.ScanBody(body, m)
	if m.Len() == 0 {
		x.useBody(body, nil)
		return 0, ""
	}
	x.noteGuard(m)
	if rule, ok := m.Blocked(); ok {
		x.useBody(body, nil)
		return fasthttp.StatusBadRequest, "the request holds content that guardrail rule " + rule + " blocks; nothing was sent to the provider"
	}
	if m.Redacts() == 0 {
		x.useBody(body, nil)
		return 0, ""
	}
	buf := pool.Get(len(body) + 64*m.Redacts())
	var v *guard.Vault
	if set.Restores() {
		v = x.s.vault()
	}
	buf.B = m.AppendRedacted(buf.B[:0], body, v, x.keyName())
	x.useBody(body, buf)
	return 0, ""
}

// clientBody is the body the client sent (x.body unless a redaction
// replaced it).
func (x *exchange) clientBody() []byte {
	if x.guard.orig != nil {
		return x.guard.orig
	}
	return x.body
}

// useBody makes x.body the client's body orig, or buf's redaction of it,
// and reads the routed members again from the body now in x.body: every
// view into the body must point into the one sent.
func (x *exchange) useBody(orig []byte, buf *pool.Buffer) {
	g := &x.guard
	if buf == nil && g.buf == nil {
		return // x.body is already orig
	}
	if g.buf != nil {
		g.old = append(g.old, g.buf) // views into it may live on (see old)
	}
	g.buf, g.orig, x.body = buf, nil, orig
	if buf != nil {
		g.orig, x.body = orig, buf.B
		x.hold(cap(buf.B))
	}
	x.dropTranslation() // the neutral form held views into the other body
	x.reread()
}

// reread reads the routed members of the body now in x.body. It cannot
// fail: the body it replaces passed readTop, and a redaction only
// replaces string content with placeholders, which need no escaping.
func (x *exchange) reread() {
	if !x.readTop() {
		panic("BUG: a guarded body no longer reads as it did")
	}
}

// noteGuard counts m's matches in /metrics and keeps their rule names for
// the access log. Names, never values.
func (x *exchange) noteGuard(m *guard.Matches) {
	for k := range m.Len() {
		h := m.Hit(k)
		x.s.metrics.Guardrail(h.Rule, h.Action.String())
	}
	if len(x.guard.rules) > 0 {
		x.guard.rules = append(x.guard.rules, ',')
	}
	x.guard.rules = m.AppendRules(x.guard.rules)
}

// keyName is the client key's configured name, "" without client keys.
func (x *exchange) keyName() string {
	if x.key == nil {
		return ""
	}
	return x.key.Name
}
