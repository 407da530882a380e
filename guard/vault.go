package guard

import "sync"

// Vault remembers, per scope (a client key's name), the original value of
// each placeholder issued by a restoring rule, so that responses to that
// scope can have it put back. It is bounded in entries and bytes across all
// scopes and evicts the least recently used entry (a Put or a successful
// lookup counts as a use). An evicted placeholder is no longer restored: the
// client sees the placeholder. Safe for concurrent use. Values live only in
// memory and never reach a log, an error or a metric.
type Vault struct {
	mu         sync.Mutex
	maxEntries int
	maxBytes   int
	bytes      int
	entries    int
	scopes     map[string]map[string]*ventry
	head, tail *ventry // most recently used first
}

type ventry struct {
	scope      string
	ph         string
	val        []byte
	prev, next *ventry
}

// VaultConfig bounds a Vault.
type VaultConfig struct {
	MaxEntries int // default 65536
	MaxBytes   int // placeholder + value + 96 bytes per entry; default 16 MiB
}

// entryOverhead approximates an entry's bookkeeping (struct, map slots).
const entryOverhead = 96

// NewVault returns an empty Vault.
func NewVault(cfg VaultConfig) *Vault {
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = 1 << 16
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 16 << 20
	}
	return &Vault{maxEntries: cfg.MaxEntries, maxBytes: cfg.MaxBytes, scopes: map[string]map[string]*ventry{}}
}

// Put remembers value for placeholder in scope (both are copied). A value
// larger than the byte bound is not kept.
func (v *Vault) Put(scope string, placeholder, value []byte) {
	size := len(scope) + len(placeholder) + len(value) + entryOverhead
	if size > v.maxBytes {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	m := v.scopes[scope]
	if m == nil {
		m = map[string]*ventry{}
		v.scopes[scope] = m
	}
	if e := m[string(placeholder)]; e != nil {
		v.bytes += len(value) - len(e.val)
		e.val = append(e.val[:0], value...)
		v.toFront(e)
	} else {
		e = &ventry{scope: scope, ph: string(placeholder), val: append([]byte(nil), value...)}
		m[e.ph] = e
		v.pushFront(e)
		v.bytes += size
		v.entries++
	}
	for v.entries > v.maxEntries || v.bytes > v.maxBytes {
		v.evict(v.tail)
	}
}

// AppendValue appends the value remembered for placeholder in scope,
// JSON-escaped levels times (see Restorer), and reports whether there was one.
func (v *Vault) AppendValue(dst []byte, scope string, placeholder []byte, levels int) ([]byte, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e := v.scopes[scope][string(placeholder)]
	if e == nil {
		return dst, false
	}
	v.toFront(e)
	return appendEscaped(dst, e.val, levels), true
}

// Len returns the number of entries and the bytes they are charged.
func (v *Vault) Len() (entries, bytes int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.entries, v.bytes
}

func (v *Vault) evict(e *ventry) {
	v.unlink(e)
	m := v.scopes[e.scope]
	delete(m, e.ph)
	if len(m) == 0 {
		delete(v.scopes, e.scope)
	}
	v.bytes -= len(e.scope) + len(e.ph) + len(e.val) + entryOverhead
	v.entries--
}

func (v *Vault) pushFront(e *ventry) {
	e.prev, e.next = nil, v.head
	if v.head != nil {
		v.head.prev = e
	}
	v.head = e
	if v.tail == nil {
		v.tail = e
	}
}

func (v *Vault) unlink(e *ventry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		v.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		v.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

func (v *Vault) toFront(e *ventry) {
	if v.head == e {
		return
	}
	v.unlink(e)
	v.pushFront(e)
}
