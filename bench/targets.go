package bench

import "fmt"

// The benchmark targets for slipstream (docs/BENCHMARKS.md; a benchmark, not a test): CPU per
// request within 1.2x of direct's for small, large and stream; added time
// to first token p50 <= 0.05 ms at c=1; idle RSS <= 8 MB; ready after
// start <= 10 ms.
const (
	targetCPUX      = 1.2
	targetAddedTTFT = 0.05 // ms
	targetIdleMB    = 8
	targetReadyMs   = 10
)

// TargetNotes adds a note for every slipstream row that misses one of
// the benchmark targets, saying by how much. Call after Finish.
func (r *Report) TargetNotes() {
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Target != "slipstream" {
			continue
		}
		for _, miss := range misses(row) {
			r.Notef("target missed: %s %s%s: %s", row.Workload, row.Case, concSuffix(row.Concurrency), miss)
		}
	}
}

// misses lists the targets row misses.
func misses(row *Row) []string {
	var out []string
	switch row.Workload {
	case "small", "large", "stream":
		if row.XDirect > targetCPUX {
			out = append(out, fmt.Sprintf("CPU %.0f us/req is %.2fx direct (target <= %.1fx)", row.CPUPerReqUs, row.XDirect, targetCPUX))
		}
	}
	if row.Workload == "stream" && row.Concurrency == 1 && row.AddedTTFTMs > targetAddedTTFT {
		out = append(out, fmt.Sprintf("added TTFT p50 %.3f ms (target <= %.2f ms)", row.AddedTTFTMs, targetAddedTTFT))
	}
	if row.Workload == "startup" {
		if row.IdleRSSMB > targetIdleMB {
			out = append(out, fmt.Sprintf("idle RSS %.1f MB, %.1f MB of it anonymous (target <= %d MB)", row.IdleRSSMB, row.IdleAnonMB, targetIdleMB))
		}
		if row.ReadyMs > targetReadyMs {
			out = append(out, fmt.Sprintf("first proxied 200 after %.1f ms (target <= %d ms)", row.ReadyMs, targetReadyMs))
		}
	}
	return out
}

func concSuffix(c int) string {
	if c == 0 {
		return ""
	}
	return fmt.Sprintf(" (c=%d)", c)
}
