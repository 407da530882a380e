package admin

import (
	"encoding/json"
	"sync"
	"sync/atomic"
)

// Event types of GET /admin/api/events.
const (
	EventCredential = "credential" // a credential's state changed: {provider, credential, state, why}
	EventLiveStart  = "live.start" // a request went live: a LiveRequest
	EventLiveEnd    = "live.end"   // a live request ended: {id, status, cause}
	EventReload     = "reload"     // a reload ran: a Reload
	EventAction     = "action"     // an admin action ran: {admin, action, target}
)

// subscriberBuffer is how many events a subscriber may lag behind; one
// that lags more is dropped (its stream ends) rather than slow anyone.
const subscriberBuffer = 256

// Hub fans events out to the subscribers of the live feed. Publishing
// never blocks: a subscriber whose buffer is full is dropped. While no one
// subscribes, Active is one atomic load and publishers skip building their
// event. It is safe for concurrent use; the zero value is not: use NewHub.
type Hub struct {
	n    atomic.Int32 // subscribers
	mu   sync.Mutex
	subs map[*subscriber]struct{}
	done chan struct{}
	shut bool
}

type subscriber struct {
	ch chan []byte // SSE frames, each "event: T\ndata: JSON\n\n"
	// who is the SHA-256 of the admin token the feed was opened with,
	// when token says it was opened with one (else: tokenless loopback).
	who   [32]byte
	token bool
}

// NewHub returns a hub without subscribers.
func NewHub() *Hub { return &Hub{subs: map[*subscriber]struct{}{}, done: make(chan struct{})} }

// Active reports whether anyone subscribes. Publishers on the request
// path check it first: while it is false they pay nothing more.
func (h *Hub) Active() bool { return h != nil && h.n.Load() > 0 }

// Publish sends an event of type typ with v as its JSON data to every
// subscriber. v is marshalled once; a subscriber that cannot take it now
// is dropped.
func (h *Hub) Publish(typ string, v any) {
	if !h.Active() {
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		return // BUG: every event type marshals; nothing to tell a subscriber
	}
	frame := make([]byte, 0, len(typ)+len(data)+16)
	frame = append(frame, "event: "...)
	frame = append(frame, typ...)
	frame = append(frame, "\ndata: "...)
	frame = append(frame, data...)
	frame = append(frame, "\n\n"...)
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		select {
		case s.ch <- frame:
		default:
			h.dropLocked(s) // too slow: it reconnects and reads the state afresh
		}
	}
}

// subscribe adds a subscriber opened with the admin token whose SHA-256
// is who (token), or with none; nil after Close.
func (h *Hub) subscribe(who [32]byte, token bool) *subscriber {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.shut {
		return nil
	}
	s := &subscriber{ch: make(chan []byte, subscriberBuffer), who: who, token: token}
	h.subs[s] = struct{}{}
	h.n.Store(int32(len(h.subs)))
	return s
}

// unsubscribe removes s (a no-op when it was dropped).
func (h *Hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[s]; ok {
		h.dropLocked(s)
	}
}

// dropLocked removes s and closes its channel, which ends its stream.
func (h *Hub) dropLocked(s *subscriber) {
	delete(h.subs, s)
	close(s.ch)
	h.n.Store(int32(len(h.subs)))
}

// Revoke ends the stream of every subscriber whose credential admits no
// longer accepts (a reload removed or changed its admin token, or added
// tokens where a feed was opened without one) and returns how many it
// ended. A feed is authorised once, when it opens; this is how a reload
// reaches the feeds already open.
func (h *Hub) Revoke(admits func(who [32]byte, token bool) bool) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for s := range h.subs {
		if !admits(s.who, s.token) {
			h.dropLocked(s)
			n++
		}
	}
	return n
}

// Close ends every subscriber's stream and refuses new ones: the server
// is shutting down and must not wait for open feeds.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.shut {
		return
	}
	h.shut = true
	for s := range h.subs {
		h.dropLocked(s)
	}
	close(h.done)
}

// Subscribers is the number of open feeds.
func (h *Hub) Subscribers() int { return int(h.n.Load()) }
