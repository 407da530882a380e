package server

import (
	"runtime"
	"runtime/debug"
	"time"
)

// reclaimIdle is how long the server must have had nothing in flight
// before it gives freed memory back to the OS.
const reclaimIdle = 2 * time.Second

// reclaim returns memory to the operating system once a burst of load is
// over (docs/ARCHITECTURE.md, memory model: the resting floor after load
// returns near idle). The Go runtime gives freed pages back only slowly, and sync.Pools
// (fasthttp's body buffers among them) keep a burst's buffers until two
// collections pass, so after reclaimIdle with no request in flight and
// some traffic since the last reclaim, it trims the usage ledger's queue,
// runs two collections and releases the freed memory. It runs until stop
// is closed and costs one atomic load a second while busy.
func (s *Server) reclaim(stop <-chan struct{}) {
	tick := time.NewTicker(reclaimIdle / 2)
	defer tick.Stop()
	var idleSince time.Time
	served := s.served.Load()
	for {
		select {
		case <-stop:
			return
		case now := <-tick.C:
			if s.inflight.Load() > 0 {
				idleSince = time.Time{}
				continue
			}
			if idleSince.IsZero() {
				idleSince = now
			}
			if n := s.served.Load(); n != served && now.Sub(idleSince) >= reclaimIdle {
				served = n
				// The ledger's writer has dropped its batch by now when
				// usage.batch_interval (1 s by default) is under
				// reclaimIdle; a queue still holding records stays.
				if s.ledger != nil {
					s.ledger.Trim()
				}
				runtime.GC() // moves pooled buffers to the victim caches
				debug.FreeOSMemory()
			}
		}
	}
}
