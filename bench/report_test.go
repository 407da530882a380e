package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReportRatiosAndTables(t *testing.T) {
	r := &Report{Conditions: Conditions{CPU: "test cpu", Cores: 2}}
	r.Add(Row{Workload: "stream", Case: "s", Target: "direct", Concurrency: 1, Requests: 10, CPUPerReqUs: 50, TTFEP50Ms: 0.10})
	r.Add(Row{Workload: "stream", Case: "s", Target: "revproxy", Concurrency: 1, Requests: 10, CPUPerReqUs: 100, TTFEP50Ms: 0.30})
	r.Add(Row{Workload: "stream", Case: "s", Target: "slipstream", Concurrency: 1, Requests: 10, CPUPerReqUs: 60, TTFEP50Ms: 0.12})
	r.Add(Row{Workload: "startup", Case: "exec", Target: "slipstream", ReadyMs: 4.5, IdleRSSMB: 6})
	r.Finish()
	sl := r.Rows[2]
	if sl.XDirect != 1.2 || sl.XRevproxy != 0.6 || sl.AddedTTFTMs < 0.0199 || sl.AddedTTFTMs > 0.0201 {
		t.Fatalf("ratios: %+v", sl)
	}
	if r.Failed() {
		t.Fatal("no row failed")
	}
	dir := t.TempDir()
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## stream", "## startup", "| x direct |", "| added TTFT ms |",
		"| s | slipstream | 1 | 10 | 0 |", "| 1.20 | 0.60 |", "| ready ms |",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	// The startup table leaves out columns no startup row fills.
	startup := string(md)[strings.Index(string(md), "## startup"):]
	if strings.Contains(startup, "req/s") {
		t.Errorf("startup table has an empty req/s column:\n%s", startup)
	}
	var back Report
	js, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil || json.Unmarshal(js, &back) != nil || len(back.Rows) != 4 || back.Rows[2].XDirect != 1.2 {
		t.Fatalf("report.json does not round-trip: %v %s", err, clip(js))
	}
	r.Add(Row{Workload: "soak", Target: "slipstream", Errors: 1})
	if !r.Failed() {
		t.Fatal("a row with errors must fail the report")
	}
}

func TestTargetNotesNameEachMiss(t *testing.T) {
	r := &Report{}
	r.Add(Row{Workload: "small", Case: "m", Target: "slipstream", XDirect: 1.5, CPUPerReqUs: 75})
	r.Add(Row{Workload: "small", Case: "m", Target: "revproxy", XDirect: 3})
	r.Add(Row{Workload: "stream", Case: "s", Target: "slipstream", Concurrency: 1, XDirect: 1.1, AddedTTFTMs: 0.2})
	r.Add(Row{Workload: "startup", Case: "e", Target: "slipstream", IdleRSSMB: 7, ReadyMs: 12})
	r.TargetNotes()
	if len(r.Notes) != 3 || !strings.Contains(r.Notes[0], "1.50x direct") ||
		!strings.Contains(r.Notes[1], "added TTFT p50 0.200") || !strings.Contains(r.Notes[2], "12.0 ms") {
		t.Fatalf("notes: %q", r.Notes)
	}
}
