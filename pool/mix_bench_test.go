package pool

import (
	"runtime"
	"runtime/metrics"
	"slices"
	"testing"

	"github.com/valyala/bytebufferpool"
)

// The size classes beside bytebufferpool's calibrated pools under the
// request mix of the fieldmix workload (docs/BENCHMARKS.md): four agent
// sessions whose request bodies grow from 200 KB to 2 MB over 40 turns,
// one body per session in flight, and for every request three small
// buffers taken and returned at once (event output, scratch, an error or
// count body: 1 to 16 KB). Each operation takes a buffer for its size,
// makes it that long and returns one. Beside ns/op, B/op and allocs/op it
// reports:
//   - slack-B/op: capacity handed out beyond the size asked for (a small
//     request given a large buffer pins that buffer while it runs);
//   - retained-B: heap still held after the run, the in-flight buffers
//     dropped, and one garbage collection: what the pools keep (sync.Pool
//     frees it on the next collection);
//   - peak-B: the largest heap (objects, live or not yet swept) sampled
//     every 64 operations during the run, above the heap before it.
// The figures and the choice they led to are in docs/ARCHITECTURE.md.

// mixOp is one buffer the mix takes: its size, and the in-flight slot it
// occupies (-1: returned at once).
type mixOp struct{ size, slot int }

// requestMix is the fieldmix request sequence, 160 requests: session s's
// turn t body of 200 KB + 1.8 MB * t/39, and three small buffers.
func requestMix() []mixOp {
	var ops []mixOp
	small := [...]int{4 << 10, 1 << 10, 16 << 10, 2 << 10, 8 << 10, 4 << 10}
	for t := 0; t < 40; t++ {
		for s := 0; s < 4; s++ {
			body := 200<<10 + (2<<20-200<<10)*t/39 + s*1000
			ops = append(ops, mixOp{body, s})
			for i := 0; i < 3; i++ {
				ops = append(ops, mixOp{small[(t*4+s+i)%len(small)], -1})
			}
		}
	}
	return ops
}

// mixPool is one pool under test.
type mixPool interface {
	get(size int, body bool) *Buffer
	put(b *Buffer, body bool)
}

type classesPool struct{}

func (classesPool) get(size int, _ bool) *Buffer { return Get(size) }
func (classesPool) put(b *Buffer, _ bool)        { Put(b) }

// bbpOne is one calibrated bytebufferpool.Pool for every buffer.
type bbpOne struct{ p bytebufferpool.Pool }

func (o *bbpOne) get(int, bool) *Buffer { return o.p.Get() }
func (o *bbpOne) put(b *Buffer, _ bool) { o.p.Put(b) }

// bbpRoles is a calibrated pool per role: bodies, and the small buffers.
type bbpRoles struct{ bodies, small bytebufferpool.Pool }

func (r *bbpRoles) get(_ int, body bool) *Buffer {
	if body {
		return r.bodies.Get()
	}
	return r.small.Get()
}

func (r *bbpRoles) put(b *Buffer, body bool) {
	if body {
		r.bodies.Put(b)
	} else {
		r.small.Put(b)
	}
}

// runMix replays ops n times over p and returns the slack handed out.
func runMix(p mixPool, ops []mixOp, n int, inFlight *[4]*Buffer, sample func()) (slack int) {
	for i := 0; i < n; i++ {
		op := ops[i%len(ops)]
		b := p.get(op.size, op.slot >= 0)
		if cap(b.B) < op.size {
			b.B = slices.Grow(b.B[:0], op.size) // the body would grow to this
		}
		slack += cap(b.B) - op.size
		b.B = b.B[:op.size]
		b.B[0], b.B[op.size-1] = 1, 1
		if op.slot < 0 {
			p.put(b, false)
		} else {
			if old := inFlight[op.slot]; old != nil {
				p.put(old, true)
			}
			inFlight[op.slot] = b
		}
		if i%64 == 0 && sample != nil {
			sample()
		}
	}
	return slack
}

func BenchmarkPoolMix(b *testing.B) {
	ops := requestMix()
	for _, c := range []struct {
		name string
		new  func() mixPool
	}{
		{"size_classes", func() mixPool { return classesPool{} }},
		{"bytebufferpool_one", func() mixPool { return new(bbpOne) }},
		{"bytebufferpool_per_role", func() mixPool { return new(bbpRoles) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			runtime.GC()
			runtime.GC() // empty every sync.Pool, both generations
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			empty := ms.HeapAlloc
			p := c.new()
			var inFlight [4]*Buffer
			runMix(p, ops, 100_000, &inFlight, nil) // past bytebufferpool's calibration (42,000 calls)
			base := heapObjects()
			peak := base
			sample := func() { peak = max(peak, heapObjects()) }
			b.ReportAllocs()
			b.ResetTimer()
			slack := runMix(p, ops, b.N, &inFlight, sample)
			b.StopTimer()
			inFlight = [4]*Buffer{} // what the pools hold, not what the requests hold
			runtime.GC()
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(slack)/float64(b.N), "slack-B/op")
			b.ReportMetric(float64(int64(ms.HeapAlloc)-int64(empty)), "retained-B")
			b.ReportMetric(float64(peak-base), "peak-B")
			runtime.KeepAlive(p)
		})
	}
}

var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}

// heapObjects is the heap held by objects, live or not yet swept.
func heapObjects() uint64 {
	metrics.Read(heapSample)
	return heapSample[0].Value.Uint64()
}
