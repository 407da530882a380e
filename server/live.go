package server

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"slipstream/pool"
	"slipstream/server/admin"
	"slipstream/server/provider"
)

// The live registry: every generation request in flight, for the
// management API's live view and its cancel action.
//
// An exchange's entry is a part of the exchange (pooled, so registering
// allocates nothing), put in one of liveShards maps under a short lock
// when the request is prepared (model and target known) and taken out in
// release. What the API reads while the request runs (bytes out, tokens,
// the provider and credential of the current attempt) are atomics the
// owner stores at flush granularity (liveProgress), never per byte.

// liveShards spreads registrations over locks; requests pick a shard by
// their id's counter.
const liveShards = 16

// shardOf is the shard of the request whose id ends in c: the value of
// that hex digit, the low four bits of the request counter, so consecutive
// requests use every shard in turn. (The digit's byte modulo 16 would
// leave shards 10 to 15 empty and load 1 to 6 twice.)
func shardOf(c byte) uint8 {
	if c >= 'a' {
		return (c - 'a' + 10) % liveShards
	}
	return (c - '0') % liveShards
}

// liveModelMax is how much of a model name the live view keeps.
const liveModelMax = 96

// errCancelled is why a request an operator cancelled ended (the access
// log's cause "cancelled").
var errCancelled = errors.New("cancelled by an operator")

// msgCancelled is the client's error text for a cancelled request.
const msgCancelled = "the request was cancelled by the gateway's operator"

// liveEntry is an exchange's record in the live registry.
type liveEntry struct {
	// Set by add before the entry is published under its shard's lock,
	// read under that lock; constant while registered.
	id        requestID
	key       string
	model     [liveModelMax]byte
	modelLen  uint8
	websocket bool
	stream    bool
	start     time.Time
	shard     uint8
	in        bool // registered (owner only)

	// Stored by the owner (liveProgress), loaded by the API.
	bytesOut atomic.Int64
	tokens   atomic.Int64
	prov     atomic.Pointer[provider.Provider]
	cred     atomic.Pointer[provider.Credential]
}

type liveShard struct {
	mu sync.Mutex
	m  map[*liveEntry]*exchange
	_  [40]byte // keep shards on their own cache lines
}

// liveSet is the registry, with the process's traffic counters.
type liveSet struct {
	shards [liveShards]liveShard
	n      atomic.Int64 // registered now

	finished, failed atomic.Int64
	input, output    atomic.Int64

	keyMu sync.RWMutex
	keys  map[string]*keyTotals // by key name, since start

	credMu sync.Mutex
	creds  map[uint64]credNote // by Credential.ID: the last failed attempt
}

// keyTotals are a client key's finished requests since start.
type keyTotals struct {
	requests, input, output atomic.Int64
}

// credNote is a credential's last failed attempt.
type credNote struct {
	cause string // the failure class (failover's verdict reason)
	at    time.Time
}

// liveAdd registers x, prepared (model and target known), in the live
// registry and tells the live feed when someone follows it.
func (x *exchange) liveAdd() {
	l, e := &x.s.live, &x.live
	e.id, e.start, e.stream = x.id, x.start, x.stream
	e.websocket = x.fsink.out != nil
	e.key = ""
	if x.key != nil {
		e.key = x.key.Name
	}
	e.modelLen = uint8(copy(e.model[:], x.model))
	e.bytesOut.Store(0)
	e.tokens.Store(0)
	e.prov.Store(x.target.Provider)
	e.cred.Store(nil)
	e.shard = shardOf(x.id[len(x.id)-1])
	sh := &l.shards[e.shard]
	sh.mu.Lock()
	if sh.m == nil {
		sh.m = map[*liveEntry]*exchange{}
	}
	sh.m[e] = x
	sh.mu.Unlock()
	e.in = true
	l.n.Add(1)
	if h := x.s.hub; h.Active() {
		h.Publish(admin.EventLiveStart, e.view(time.Now()))
	}
}

// liveProgress stores what the live view shows of x while it runs. The
// owner calls it when it flushes to the client.
func (x *exchange) liveProgress() {
	e := &x.live
	if !e.in {
		return
	}
	e.bytesOut.Store(x.bytesOut)
	e.tokens.Store(max(x.estOut, x.usage.Output))
}

// liveTarget stores the provider and credential of the attempt x makes;
// aim calls it, the one place they change. Reading them is aim's alone:
// the call that aims an attempt may run beside the goroutine writing
// keep-alive pings, whose flushes store the progress above.
func (x *exchange) liveTarget() {
	e := &x.live
	if !e.in {
		return
	}
	if e.prov.Load() != x.target.Provider {
		e.prov.Store(x.target.Provider)
	}
	if e.cred.Load() != x.try.cred {
		e.cred.Store(x.try.cred)
	}
}

// liveRemove takes x out of the live registry and counts its end. It runs
// in release, after finish: the outcome is final.
func (x *exchange) liveRemove() {
	e := &x.live
	if !e.in {
		return
	}
	l := &x.s.live
	sh := &l.shards[e.shard]
	sh.mu.Lock()
	delete(sh.m, e)
	sh.mu.Unlock()
	e.in = false
	l.n.Add(-1)
	x.watch.clearCancel()
	l.count(x)
	if h := x.s.hub; h.Active() {
		cause := ""
		if err := x.failure(); err != nil {
			cause = causeOf(err)
		}
		h.Publish(admin.EventLiveEnd, liveEnd{ID: string(e.id[:]), Status: x.status, Cause: cause})
	}
}

// liveEnd is the data of a live.end event.
type liveEnd struct {
	ID     string `json:"id"`
	Status int    `json:"status"`
	Cause  string `json:"cause"`
}

// count adds x's end to the traffic counters.
func (l *liveSet) count(x *exchange) {
	l.finished.Add(1)
	if x.status >= 500 || x.result != resultOK && x.result != resultClientGone {
		l.failed.Add(1)
	}
	u := &x.usage
	l.input.Add(u.Input)
	l.output.Add(u.Output)
	if x.key == nil {
		return
	}
	t := l.keyTotals(x.key.Name)
	t.requests.Add(1)
	t.input.Add(u.Input)
	t.output.Add(u.Output)
}

// keyTotals returns the totals of key name, created on its first request.
func (l *liveSet) keyTotals(name string) *keyTotals {
	l.keyMu.RLock()
	t := l.keys[name]
	l.keyMu.RUnlock()
	if t != nil {
		return t
	}
	l.keyMu.Lock()
	defer l.keyMu.Unlock()
	if l.keys == nil {
		l.keys = map[string]*keyTotals{}
	}
	if t = l.keys[name]; t == nil {
		t = &keyTotals{}
		l.keys[name] = t
	}
	return t
}

// keyTotalsOf returns key name's totals, or nil before its first request.
func (l *liveSet) keyTotalsOf(name string) *keyTotals {
	l.keyMu.RLock()
	defer l.keyMu.RUnlock()
	return l.keys[name]
}

// noteCooled records that an attempt on cred failed with reason (failover's
// class) and rested it, and tells the live feed. It runs on the failure
// path only.
func (s *Server) noteCooled(p *provider.Provider, cred *provider.Credential, reason string) {
	if cred == nil {
		return
	}
	l := &s.live
	l.credMu.Lock()
	if l.creds == nil {
		l.creds = map[uint64]credNote{}
	}
	l.creds[cred.ID] = credNote{cause: reason, at: s.now()}
	l.credMu.Unlock()
	if s.hub.Active() {
		s.hub.Publish(admin.EventCredential, credentialEvent{Provider: p.Name, Credential: cred.Name, State: admin.StateCooling, Why: reason})
	}
}

// credNoteOf is cred's last failed attempt.
func (l *liveSet) credNoteOf(id uint64) (credNote, bool) {
	l.credMu.Lock()
	defer l.credMu.Unlock()
	n, ok := l.creds[id]
	return n, ok
}

// credentialEvent is the data of a credential event.
type credentialEvent struct {
	Provider   string `json:"provider"`
	Credential string `json:"credential"`
	State      string `json:"state"`
	Why        string `json:"why,omitempty"`
}

// view is e as the API shows it. The caller holds e's shard lock.
func (e *liveEntry) view(now time.Time) admin.LiveRequest {
	r := admin.LiveRequest{
		ID:         string(e.id[:]),
		Key:        e.key,
		Model:      string(e.model[:e.modelLen]),
		Transport:  "http",
		Stream:     e.stream,
		StartedAt:  e.start.UTC(),
		AgeSeconds: now.Sub(e.start).Seconds(),
		BytesOut:   e.bytesOut.Load(),
		Tokens:     e.tokens.Load(),
	}
	if e.websocket {
		r.Transport = "websocket"
	}
	if p := e.prov.Load(); p != nil {
		r.Provider = p.Name
	}
	if c := e.cred.Load(); c != nil {
		r.Credential = c.Name
	}
	return r
}

// list returns the live requests, oldest first.
func (l *liveSet) list(now time.Time) []admin.LiveRequest {
	out := make([]admin.LiveRequest, 0, l.n.Load())
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		for e := range sh.m {
			out = append(out, e.view(now))
		}
		sh.mu.Unlock()
	}
	sortLive(out)
	return out
}

// inFlight counts the live requests per provider and per credential.
func (l *liveSet) inFlight() (byProvider map[*provider.Provider]int64, byCred map[*provider.Credential]int64) {
	byProvider, byCred = map[*provider.Provider]int64{}, map[*provider.Credential]int64{}
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		for e := range sh.m {
			if p := e.prov.Load(); p != nil {
				byProvider[p]++
			}
			if c := e.cred.Load(); c != nil {
				byCred[c]++
			}
		}
		sh.mu.Unlock()
	}
	return byProvider, byCred
}

// cancel cancels the live request id: reports false when none is live.
func (l *liveSet) cancel(id string) bool {
	if len(id) != len(requestID{}) {
		return false
	}
	sh := &l.shards[shardOf(id[len(id)-1])]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for e, x := range sh.m {
		if pool.B2S(e.id[:]) == id {
			x.watch.cancel(x) // under the shard lock: x cannot be released meanwhile
			return true
		}
	}
	return false
}

// cancelled reports whether an operator cancelled x.
func (x *exchange) cancelled() bool { return x.watch.isCancelled() }

// cancelledCall is the answer to a cancelled request whose response has
// not started: 503, and the access log's cause "cancelled".
func (x *exchange) cancelledCall() (int, string) {
	x.callErr = errCancelled
	return 503, msgCancelled
}

// sortLive orders live requests oldest first, then by id.
func sortLive(rs []admin.LiveRequest) {
	slices.SortFunc(rs, func(a, b admin.LiveRequest) int {
		if c := a.StartedAt.Compare(b.StartedAt); c != 0 {
			return c
		}
		if a.ID < b.ID {
			return -1
		}
		return 1
	})
}

// liveFlush stores x's progress for the live view and flushes out: the
// one place a stream's progress is published, once per flush.
func (x *exchange) liveFlush(out sink) bool {
	x.liveProgress()
	return out.Flush()
}

// mockCancelled ends a paced mock stream an operator cancelled with the
// dialect's error event, and reports whether it did; otherwise it stores
// the stream's progress for the live view. It runs between the mock's
// paced events only.
func (x *exchange) mockCancelled(out sink) bool {
	x.liveProgress()
	if !x.cancelled() {
		return false
	}
	e := x.streamFailure(nil)
	x.result = resultUpstreamFailed
	x.out = x.ts.AppendError(x.out[:0], &e)
	flushOut(out, x.out)
	return true
}
