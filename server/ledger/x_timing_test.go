package ledger

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkInsert is the writer's cost per record into SQLite: batches of
// 256 records (the default batch size), in one transaction each. The
// request path never pays it, but the process does: it is what the ledger
// adds to a request's CPU.
func BenchmarkInsert(b *testing.B) {
	d, err := Open(context.Background(), filepath.Join(b.TempDir(), "usage.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	const batch = 256
	rs := make([]Record, batch)
	now := time.Now()
	for i := range rs {
		rs[i] = rec(now, fmt.Sprintf("c9488fec-%011d", i), "alice", "anthropic", "claude-sonnet-4-5", "claude-sonnet-4-5-20250929", 200, 2900, 120, 43750, true)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i += batch {
		if err := d.Insert(context.Background(), rs); err != nil {
			b.Fatal(err)
		}
	}
}
