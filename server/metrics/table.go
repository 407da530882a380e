package metrics

import (
	"sync"

	vm "github.com/VictoriaMetrics/metrics"
)

// counterTable holds counters by key, each registered on first use and
// kept for the life of its Metrics. A known key costs a read-locked map
// lookup and allocates nothing.
type counterTable[K comparable] struct {
	mu sync.RWMutex
	c  map[K]*vm.Counter
}

// counter returns k's counter, registering the series name() names when
// k is new.
func (t *counterTable[K]) counter(set *vm.Set, k K, name func() string) *vm.Counter {
	t.mu.RLock()
	c := t.c[k]
	t.mu.RUnlock()
	if c != nil {
		return c
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if c = t.c[k]; c == nil {
		c = set.GetOrCreateCounter(name())
		t.c[k] = c
	}
	return c
}

// tableOf returns m's table in tables, a side table keyed by *Metrics, so
// that a family only some configurations use costs Metrics no field.
func tableOf[K comparable](tables *sync.Map, m *Metrics) *counterTable[K] {
	if v, ok := tables.Load(m); ok {
		return v.(*counterTable[K])
	}
	v, _ := tables.LoadOrStore(m, &counterTable[K]{c: map[K]*vm.Counter{}})
	return v.(*counterTable[K])
}
