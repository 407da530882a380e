package ws

import (
	"sync"

	"slipstream/pool"
)

// transcript is what a connection remembers of its last completed
// response: the body of the request that produced it (whose input items
// lie at body.B[inStart:inEnd]), the response's output items
// (comma-separated), and its id. A frame chaining on id continues from
// input ++ output. One buffer is kept per connection; nothing is copied to
// store it, because it is the body the upstream was sent.
type transcript struct {
	body           *pool.Buffer
	inStart, inEnd int
	out            *pool.Buffer
	id             [64]byte
	idLen          int
	tagged         bool // its items may hold an origin tag (codec.MayHoldOriginTag)
}

// items returns the transcript's input items and output items.
func (t *transcript) items() (in, out []byte) {
	if t.body == nil {
		return nil, nil
	}
	in = t.body.B[t.inStart:t.inEnd]
	if t.out != nil {
		out = t.out.B
	}
	return in, out
}

func (t *transcript) size() int64 {
	var n int
	if t.body != nil {
		n += cap(t.body.B)
	}
	if t.out != nil {
		n += cap(t.out.B)
	}
	return int64(n)
}

// matches reports whether id names the transcript's response.
func (t *transcript) matches(id []byte) bool {
	return t.body != nil && string(id) == string(t.id[:t.idLen])
}

func (t *transcript) release() {
	pool.Put(t.body)
	pool.Put(t.out)
	*t = transcript{}
}

// store holds the transcripts of all connections under one byte budget
// (limits.ws_state_bytes). When a new transcript does not fit, the least
// recently stored ones of other connections are dropped; their next
// chained frame is answered previous_response_not_found and Codex resends
// the whole input.
type store struct {
	mu   sync.Mutex
	max  int64
	used int64
	head *conn // most recently stored
	tail *conn // least recently stored

	evicted int64 // transcripts dropped to make room, since start
}

// take detaches c's transcript from the store and hands it to the caller,
// who owns it from then on (and releases it). It is empty when c had none
// or it was evicted.
func (s *store) take(c *conn) transcript {
	s.mu.Lock()
	t := c.state
	if t.body != nil {
		s.unlink(c)
		s.used -= t.size()
	}
	c.state = transcript{}
	s.mu.Unlock()
	return t
}

// put stores t as c's transcript, evicting others' to make room; a
// transcript larger than the whole budget is released instead. The store
// owns t afterwards.
func (s *store) put(c *conn, t transcript) bool {
	n := t.size()
	if !s.fits(n) {
		t.release()
		s.drop(c)
		return false
	}
	s.mu.Lock()
	if c.state.body != nil {
		s.unlink(c)
		s.used -= c.state.size()
		c.state.release()
	}
	for s.used+n > s.max && s.tail != nil {
		v := s.tail
		s.unlink(v)
		s.used -= v.state.size()
		v.state.release()
		s.evicted++
	}
	c.state = t
	s.used += n
	s.pushFront(c)
	s.mu.Unlock()
	return true
}

// fits reports whether a transcript of n bytes (transcript.size) is
// within the budget: put releases one that is not. A turn asks it as its
// output items grow, so that it stops gathering what put would refuse.
func (s *store) fits(n int64) bool {
	s.mu.Lock()
	ok := n <= s.max
	s.mu.Unlock()
	return ok
}

// setMax sets the budget; transcripts over a smaller one are dropped as
// new ones are stored.
func (s *store) setMax(n int64) {
	s.mu.Lock()
	s.max = n
	s.mu.Unlock()
}

// drop releases c's transcript, if any.
func (s *store) drop(c *conn) {
	t := s.take(c)
	t.release()
}

// Used returns the bytes the stored transcripts hold.
func (s *store) Used() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

// Evicted returns how many transcripts were dropped to make room.
func (s *store) Evicted() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.evicted
}

func (s *store) pushFront(c *conn) {
	c.prev, c.next = nil, s.head
	if s.head != nil {
		s.head.prev = c
	}
	s.head = c
	if s.tail == nil {
		s.tail = c
	}
}

func (s *store) unlink(c *conn) {
	if c.prev != nil {
		c.prev.next = c.next
	} else if s.head == c {
		s.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else if s.tail == c {
		s.tail = c.prev
	}
	c.prev, c.next = nil, nil
}
