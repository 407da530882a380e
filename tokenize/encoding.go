// Package tokenize counts and encodes text with OpenAI's byte-pair encodings
// o200k_base and cl100k_base, exactly as tiktoken does (without special
// tokens), at memory speed and without allocating.
//
// Each encoding's table is built once per process, on first use, and shared
// by every caller: its token bytes alias an embedded blob, so the heap cost
// is the hash indexes and the two-byte table (about 3.1 MB for o200k_base,
// 1.7 MB for cl100k_base). Each pooled per-call scratch state adds 260 KiB
// of caches.
package tokenize

import (
	_ "embed"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"slipstream/pool"
)

// ErrUnknownEncoding is returned by Get for a name it does not know.
var ErrUnknownEncoding = errors.New("unknown encoding")

var (
	//go:embed tables/o200k_base.bin
	o200kBlob string
	//go:embed tables/cl100k_base.bin
	cl100kBlob string

	o200k  = &Encoding{name: "o200k_base", id: 1, blob: &o200kBlob}
	cl100k = &Encoding{name: "cl100k_base", id: 2, blob: &cl100kBlob}
)

// Encoding is one byte-pair encoding. The two Encodings are package-level
// singletons; all methods are safe for concurrent use.
type Encoding struct {
	name string
	id   uint64 // its table's id, see newTable
	blob *string
	once sync.Once
	tab  atomic.Pointer[table]
}

// O200k returns the o200k_base encoding (GPT-4o and later OpenAI models).
func O200k() *Encoding { return o200k }

// Cl100k returns the cl100k_base encoding (GPT-4, GPT-3.5).
func Cl100k() *Encoding { return cl100k }

// Get returns the encoding named name: "o200k_base" or "cl100k_base".
func Get(name string) (*Encoding, error) {
	switch name {
	case o200k.name:
		return o200k, nil
	case cl100k.name:
		return cl100k, nil
	}
	if len(name) > 64 {
		name = name[:64] + "..."
	}
	return nil, fmt.Errorf("cannot get encoding %q: %w", name, ErrUnknownEncoding)
}

// Name returns the encoding's tiktoken name, such as "o200k_base".
func (e *Encoding) Name() string { return e.name }

// Count returns the number of tokens in text. Special-token text such as
// "<|endoftext|>" is counted as ordinary text. Invalid UTF-8 bytes count as
// U+FFFD each, as in tiktoken-go. text is only read.
//
// The first call on an encoding builds its table; Count(nil) does that ahead
// of time.
func (e *Encoding) Count(text []byte) int {
	t := e.table()
	st := acquireState()
	_, n := st.encode(e, t, text, nil, false)
	releaseState(st)
	return n
}

// CountString is Count for a string, without copying it.
func (e *Encoding) CountString(s string) int {
	return e.Count(pool.S2B(s))
}

// AppendTokens appends the token ids of text to dst and returns the extended
// slice; it allocates only when dst lacks capacity. The ids are the ones
// tiktoken's encode_ordinary returns.
func (e *Encoding) AppendTokens(dst []uint32, text []byte) []uint32 {
	t := e.table()
	st := acquireState()
	dst, _ = st.encode(e, t, text, dst, true)
	releaseState(st)
	return dst
}

// Decode appends the bytes of the tokens ids to dst. It is meant for tests
// and tools, not for the hot path. It panics on an id outside the encoding.
func (e *Encoding) Decode(dst []byte, ids []uint32) []byte {
	t := e.table()
	for _, id := range ids {
		dst = append(dst, t.token(id)...)
	}
	return dst
}

func (e *Encoding) table() *table {
	if t := e.tab.Load(); t != nil {
		return t
	}
	return e.tableSlow()
}

func (e *Encoding) tableSlow() *table {
	e.once.Do(func() { e.tab.Store(newTable(*e.blob, e.id)) })
	return e.tab.Load()
}

// encode splits text into pieces and encodes each: a piece that is a token
// is one token, any other is byte-pair merged. It returns dst (extended when
// ids is set) and the token count.
func (st *state) encode(e *Encoding, t *table, text []byte, dst []uint32, ids bool) ([]uint32, int) {
	// Keys load whole words within a piece's capacity; capping it here
	// keeps those loads inside text, never in the caller's bytes beyond.
	text = text[:len(text):len(text)]
	valid := utf8.Valid(text)
	count := 0
	o200kSplit := e == o200k // a direct call: split is hot and small
	for i := 0; i < len(text); {
		var end int
		if o200kSplit {
			end = splitO200k(text, i)
		} else {
			end = splitCl100k(text, i)
		}
		piece := text[i:end]
		i = end
		if !valid {
			piece = st.validUTF8(piece)
		}
		if len(piece) == 1 {
			count++
			if ids {
				dst = append(dst, t.byteRank[piece[0]])
			}
			continue
		}
		if r, ok := t.lookup(piece); ok {
			count++
			if ids {
				dst = append(dst, r)
			}
			continue
		}
		if !ids && len(piece) <= longPieceMax && !st.noPieceCache {
			if len(piece) <= pieceCacheMax {
				count += st.countCached(t, piece)
			} else {
				count += st.countCachedLong(t, piece)
			}
			continue
		}
		var k int
		dst, k = st.merge(t, piece, dst, ids)
		count += k
	}
	return dst, count
}

// countCached returns the token count of piece, a piece of at most
// pieceCacheMax bytes that is not a token, from the piece cache or by
// merging it.
func (st *state) countCached(t *table, piece []byte) int {
	e, w, meta, ok := st.pieces.lookup(t, piece)
	if ok {
		return int(uint32(e.meta))
	}
	_, k := st.merge(t, piece, nil, false)
	e.w, e.meta = w, meta|uint64(k)
	return k
}

// countCachedLong is countCached for a piece of pieceCacheMax+1 to
// longPieceMax bytes.
func (st *state) countCachedLong(t *table, piece []byte) int {
	e, meta, ok := st.longPieces.lookup(t, piece)
	if ok {
		return int(uint32(e.meta))
	}
	_, k := st.merge(t, piece, nil, false)
	copy(e.b[:], piece)
	e.meta = meta | uint64(k)
	return k
}
