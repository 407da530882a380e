package guard

import (
	"bytes"
	"sync"
)

// Restorer puts original values back in place of the placeholders a Vault
// holds for one scope, over a stream of raw JSON string content deltas (text
// or tool-call argument deltas). A placeholder cut between two deltas is
// restored: Feed holds back a tail that may still become a placeholder (at
// most the longest placeholder, 69 bytes) and emits everything before it at
// once. A placeholder not in the vault for this scope (one the model made up,
// one issued for another key, one evicted) passes unchanged. Not safe for
// concurrent use; one per stream.
type Restorer struct {
	v        *Vault
	scope    string
	levels   int
	carry    []byte
	buf      []byte
	restored int
}

var restorerPool = sync.Pool{New: func() any { return &Restorer{} }}

// AcquireRestorer returns a Restorer over v for scope. levels is how many
// times the content is JSON-escaped: 1 for text in a JSON string, 2 for JSON
// inside a JSON string (OpenAI and Anthropic tool-call argument deltas).
func AcquireRestorer(v *Vault, scope string, levels int) *Restorer {
	r := restorerPool.Get().(*Restorer)
	r.v, r.scope, r.levels = v, scope, max(levels, 1)
	return r
}

// ReleaseRestorer resets r and returns it to the pool.
func ReleaseRestorer(r *Restorer) {
	r.Reset()
	restorerPool.Put(r)
}

// Reset forgets the stream and the vault, keeping buffers.
func (r *Restorer) Reset() {
	r.v, r.scope = nil, ""
	r.carry, r.buf = r.carry[:0], r.buf[:0]
	r.restored = 0
}

// Restored is the number of placeholders restored so far.
func (r *Restorer) Restored() int { return r.restored }

// Feed appends to dst what can be emitted after delta: delta with
// placeholders restored, minus a held-back tail that is emitted by a later
// Feed or Flush.
func (r *Restorer) Feed(dst, delta []byte) []byte {
	b := delta
	if len(r.carry) > 0 {
		r.buf = append(append(r.buf[:0], r.carry...), delta...)
		b = r.buf
		r.carry = r.carry[:0]
	}
	last := 0
	for i := 0; i < len(b); {
		k := bytes.IndexByte(b[i:], '[')
		if k < 0 {
			break
		}
		i += k
		e, res := placeholderAt(b, i)
		switch res {
		case need:
			dst = append(dst, b[last:i]...)
			r.carry = append(r.carry, b[i:]...)
			return dst
		case hit:
			if r.v != nil {
				n := len(dst)
				dst = append(dst, b[last:i]...)
				var ok bool
				if dst, ok = r.v.AppendValue(dst, r.scope, b[i:e], r.levels); ok {
					r.restored++
					last, i = e, e
					continue
				}
				dst = dst[:n]
			}
			i = e
		default:
			i++
		}
	}
	return append(dst, b[last:]...)
}

// Flush appends the held-back tail; the stream ends.
func (r *Restorer) Flush(dst []byte) []byte {
	dst = append(dst, r.carry...)
	r.carry = r.carry[:0]
	return dst
}

// AppendRestored appends content (raw JSON string content, escaped levels
// times) with the placeholders v holds for scope restored: the one-shot form
// of a Restorer, for a response that is not streamed.
func (v *Vault) AppendRestored(dst, content []byte, scope string, levels int) []byte {
	r := AcquireRestorer(v, scope, levels)
	dst = r.Flush(r.Feed(dst, content))
	ReleaseRestorer(r)
	return dst
}
