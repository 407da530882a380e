package failover

import (
	"slipstream/codec"
	"slipstream/pool"
	"slipstream/server/keys"
	"slipstream/server/provider"
	"slipstream/server/upstream"
)

// Candidate is where one attempt goes: a target and the credential it is
// signed with (nil for a keyless provider).
type Candidate struct {
	Target provider.Target
	Cred   *provider.Credential
}

// Sessions names a request's conversation for affinity under a
// provider's settings (0: none). The plan asks once, for the first
// provider with affinity it reaches.
type Sessions interface {
	Session(p *provider.Provider) uint64
}

// Request is what a plan serves: the client's model, dialect and key and
// the target the model resolved to. Model is a view valid for the
// request.
type Request struct {
	Registry *provider.Registry
	Key      *keys.Key
	Model    []byte // the client-facing model name, escaped
	Dialect  codec.Dialect
	First    provider.Target
	Sessions Sessions
}

// Plan is one request's failover state: the candidate being prepared,
// the candidate the last call went to, and what was tried. It holds no
// request bytes of its own and allocates nothing once its alternatives'
// capacity is reached (it is reused across requests; Reset keeps it).
//
// The flow: Start picks the first candidate (Commit it once its request
// is built); after each call Classify the outcome and pass the verdict to
// Fail; while it says to retry, Next moves to the following candidate
// (Skip one that cannot take the request) and Commit the one that is
// built. When Next finds none, Candidate is the attempted one again, so
// the failed answer is read against the target it came from.
type Plan struct {
	req         Request
	cur, at     Candidate
	model       uint64 // Hash of cur's upstream model (cooldown key)
	session     uint64 // conversation hash for affinity, or 0
	sessionDone bool
	tried       uint64            // credentials of cur's provider tried (bit per index)
	alts        []provider.Target // alternatives, filled on the first need
	altNext     int               // next alternative to try
	altsDone    bool              // alts is filled
	deadline    int64             // no attempt starts after this (Unix ns)
}

// Reset forgets the request, keeping the alternatives' capacity.
func (p *Plan) Reset() {
	clear(p.alts) // no Provider of an old registry outlives a reload here
	*p = Plan{alts: p.alts[:0]}
}

// Begin sets the request a plan without Start serves (a single attempt
// on req.First, as a forwarded count makes): Candidate names it without
// a credential, Fail never retries (its deadline has passed), and no
// rest it records is one a request for the model looks up.
func (p *Plan) Begin(req Request) {
	p.Reset()
	p.req = req
	p.cur = Candidate{Target: req.First}
	p.at = p.cur
}

// Start begins a plan for req at now (Unix ns) with deadline d ns later,
// and picks the first candidate: the first target's usable credential,
// else the first alternative with one. When every candidate rests it
// returns false and soonest, when the first of them recovers (0: none
// will, e.g. accounts that need a login); Candidate then names the last
// target considered.
func (p *Plan) Start(req Request, now, d int64) (ok bool, soonest int64) {
	p.Begin(req)
	p.deadline = now + d
	for {
		if p.pick(now) {
			p.at = p.cur
			return true, 0
		}
		if s := p.soonest(now); s > 0 && (soonest == 0 || s < soonest) {
			soonest = s
		}
		if !p.nextTarget() {
			return false, soonest
		}
	}
}

// Candidate is the candidate being prepared (after Start or Next), or
// the attempted one.
func (p *Plan) Candidate() Candidate { return p.cur }

// UpModel is the upstream model name of the candidate: the client's
// model, or the target's when it renames it. It is a view valid for the
// request.
func (p *Plan) UpModel() []byte {
	if p.cur.Target.Aliased {
		return pool.S2B(p.cur.Target.Model)
	}
	return p.req.Model
}

// Commit makes the candidate the attempted one: its request is built.
func (p *Plan) Commit() { p.at = p.cur }

// Skip passes over the rest of the candidate's provider: it cannot take
// the request (no translation to its dialect, an account that refuses
// it).
func (p *Plan) Skip() { p.tried = ^uint64(0) }

// Fail applies the verdict of a failed attempt (v.Failed()) on the
// attempted candidate at now: it rests what v says and reports whether
// cooled (a rest was recorded, for metrics) and whether another attempt
// may start: fewer than max calls made and the deadline not passed.
func (p *Plan) Fail(v Verdict, now int64, attempts, max int) (cooled, retry bool) {
	cooled = p.rest(v, now)
	return cooled, attempts < max && now < p.deadline
}

// Succeeded forgets the streak of the attempted credential after an
// answer that stands with a status below 300.
func (p *Plan) Succeeded() {
	if c := p.at.Cred; c != nil {
		p.at.Target.Provider.Cooldowns().Recover(c.ID, p.model)
	}
}

// rest rests what a failed attempt showed to be failing (see Scope).
func (p *Plan) rest(v Verdict, now int64) bool {
	prov := p.at.Target.Provider
	switch v.Scope {
	case RestNone:
		p.tried = ^uint64(0)
		return false
	case RestProvider:
		p.tried = ^uint64(0)
		cs := prov.Credentials()
		for i := range cs {
			prov.Cooldowns().Cool(cs[i].ID, p.model, now, v.Rest)
		}
		return true
	}
	c := p.at.Cred
	if c == nil {
		return false
	}
	if v.Again {
		p.tried &^= 1 << (c.Index % 64) // the credential is a candidate again
	}
	prov.Cooldowns().Cool(c.ID, p.model, now, v.Rest)
	return true
}

// Next moves to the next usable candidate: the provider's next
// credential, else the next alternative with one. False when none is
// left; Candidate is then the attempted one again.
func (p *Plan) Next(now int64) bool {
	for {
		if p.pick(now) {
			return true
		}
		if !p.nextTarget() {
			p.cur, p.tried = p.at, ^uint64(0)
			p.model = provider.Hash(p.UpModel())
			return false
		}
	}
}

// pick picks a usable credential of the candidate's provider. A keyless
// provider is usable once.
func (p *Plan) pick(now int64) bool {
	prov := p.cur.Target.Provider
	p.model = provider.Hash(p.UpModel())
	if prov.Keyless() {
		p.cur.Cred = nil
		ok := p.tried == 0
		p.tried = 1
		return ok
	}
	if prov.Affinity() && !p.sessionDone {
		p.session, p.sessionDone = p.req.Sessions.Session(prov), true
	}
	c, _ := prov.Pick(p.model, p.session, p.tried, now)
	if c == nil {
		return false
	}
	p.cur.Cred = c
	p.tried |= 1 << (c.Index % 64)
	return true
}

// soonest is when a credential of the candidate's provider recovers.
func (p *Plan) soonest(now int64) int64 {
	prov := p.cur.Target.Provider
	if prov.Keyless() {
		return 0
	}
	_, s := prov.Pick(p.model, p.session, 0, now)
	return s
}

// nextTarget moves the candidate to the next alternative; false when
// none is left.
func (p *Plan) nextTarget() bool {
	if !p.altsDone {
		p.altsDone = true
		r := &p.req
		p.alts = r.Registry.AppendAlternatives(p.alts[:0], pool.B2S(r.Model), r.First, r.Dialect)
		p.alts = keepAllowed(p.alts, r.Key, r.First.Model)
		p.alts = keepSendable(p.alts, r.Model)
	}
	if p.altNext >= len(p.alts) {
		return false
	}
	p.cur = Candidate{Target: p.alts[p.altNext]}
	p.altNext++
	p.tried = 0
	return true
}

// keepSendable drops from alts the Gemini targets whose upstream model
// (the alias's, else model, the client's) cannot be a segment of their
// URL path (upstream.ValidPathSegment), keeping the order: the first
// target was checked before the plan began (exchange.checkUpModel). It
// allocates nothing.
func keepSendable(alts []provider.Target, model []byte) []provider.Target {
	kept := alts[:0]
	for _, t := range alts {
		up := model
		if t.Aliased {
			up = pool.S2B(t.Model)
		}
		if t.Provider.Dialect != codec.DialectGemini || upstream.ValidPathSegment(up) {
			kept = append(kept, t)
		}
	}
	return kept
}

// keepAllowed drops from alts the targets key may not use, keeping their
// order: a target serving first (the upstream model the request resolved
// to, which the key was allowed) is allowed, and any other (a fallback to
// another model) only when the key's models allow its model name, as if
// the client had asked for it. It allocates nothing.
func keepAllowed(alts []provider.Target, key *keys.Key, first string) []provider.Target {
	if key == nil {
		return alts
	}
	kept := alts[:0]
	for _, t := range alts {
		if t.Model == first || key.Allows(t.Model) {
			kept = append(kept, t)
		}
	}
	clear(alts[len(kept):]) // no Provider of an old registry outlives a reload here
	return kept
}
