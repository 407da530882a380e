//go:build !race

package ledger

import (
	"path/filepath"
	"testing"
	"time"
)

// TestAddAllocs: the request path's part, Add, allocates nothing, when
// the record is queued and when it is dropped.
func TestAddAllocs(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "usage.db"))
	l := Start(d, Options{QueueSize: 1 << 14, Interval: time.Hour, BatchSize: 1 << 14, Retention: -1})
	defer l.Close(t.Context())
	model := []byte("claude-sonnet-4-5")
	id := []byte("0123abcd-00000000001")
	n := testing.AllocsPerRun(1000, func() {
		var r Record
		r.ID.Set(id)
		r.Model.Set(model)
		r.UpstreamModel.Set(model)
		r.Key, r.Status, r.Input = "k", 200, 10
		l.Add(&r)
	})
	if n != 0 {
		t.Fatalf("Add allocates %v times per record, want 0", n)
	}
	full := Start(open(t, filepath.Join(t.TempDir(), "full.db")), Options{QueueSize: 1, Interval: time.Hour, BatchSize: 1 << 14, Retention: -1, Counters: &countersT{}})
	defer full.Close(t.Context())
	r := Record{Key: "k"}
	full.Add(&r)
	if n := testing.AllocsPerRun(1000, func() { full.Add(&r) }); n != 0 {
		t.Fatalf("a dropped Add allocates %v times, want 0", n)
	}
}
