package ledger

import "sync/atomic"

// countersT counts as server/metrics does, for assertions.
type countersT struct{ written, dropped, failed atomic.Int64 }

func (c *countersT) Written(n int) { c.written.Add(int64(n)) }
func (c *countersT) Dropped(n int) { c.dropped.Add(int64(n)) }
func (c *countersT) FailedBatch()  { c.failed.Add(1) }
