package bench

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBaselineTarget: the baseline runs beside slipstream only when a
// baseline binary is given, and its config never carries the usage
// section a build older than the ledger refuses, -no-ledger or not.
func TestBaselineTarget(t *testing.T) {
	e := &Env{Slipstream: "slipstream", Opts: Options{Targets: []string{"slipstream"}, NoLedger: true}}
	if got := e.targets("baseline", "slipstream"); !slices.Equal(got, []string{"slipstream"}) {
		t.Fatalf("without -baseline: targets %v", got)
	}
	r := &Report{}
	e.Report = r
	if err := runBaseline(context.Background(), e); err != nil || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "skipped") {
		t.Fatalf("without -baseline: %v, notes %q", err, r.Notes)
	}
	e.Opts.Baseline = "/bin/false"
	if got := e.targets("baseline", "slipstream"); !slices.Equal(got, []string{"baseline", "slipstream"}) {
		t.Fatalf("with -baseline: targets %v", got)
	}
	stub := NewStub(StubConfig{Events: 1})
	if err := stub.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stub.Close() })
	e.Stub, e.TmpDir = stub, t.TempDir()
	if p, err := e.Start("baseline", ConfigLimits{NoLedger: true}); err == nil { // /bin/false exits at once
		_ = p.Stop()
		t.Fatal("a baseline that exits at once was started")
	}
	b, err := os.ReadFile(filepath.Join(e.TmpDir, "slipstream-bench.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "usage") {
		t.Fatalf("the baseline's config holds a usage section:\n%s", b)
	}
}
