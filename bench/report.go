package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Row is one measured line of the report: a workload's case against one
// target. Zero figures are "not measured" and print as blank.
type Row struct {
	Workload    string  `json:"workload"`
	Case        string  `json:"case"`
	Target      string  `json:"target"` // direct | revproxy | slipstream
	Concurrency int     `json:"concurrency,omitempty"`
	Runs        int     `json:"runs,omitempty"`
	Requests    int     `json:"requests"`
	Errors      int     `json:"errors"`
	RPS         float64 `json:"rps,omitempty"`
	LatP50Ms    float64 `json:"lat_p50_ms,omitempty"`
	LatP90Ms    float64 `json:"lat_p90_ms,omitempty"`
	LatP99Ms    float64 `json:"lat_p99_ms,omitempty"`
	TTFEP50Ms   float64 `json:"ttfe_p50_ms,omitempty"`
	TTFEP99Ms   float64 `json:"ttfe_p99_ms,omitempty"`
	// AddedTTFTMs is TTFEP50Ms minus direct's for the same case (set by
	// Finish).
	AddedTTFTMs float64 `json:"added_ttft_p50_ms,omitempty"`
	// CPUPerReqUs is the proxy process's CPU per request; for the direct
	// target it is the harness's own (stub + load generator): the ceiling.
	CPUPerReqUs     float64 `json:"cpu_us_per_req,omitempty"`
	LoadCPUPerReqUs float64 `json:"harness_cpu_us_per_req,omitempty"`
	XDirect         float64 `json:"cpu_x_direct,omitempty"`   // CPUPerReqUs / direct's
	XRevproxy       float64 `json:"cpu_x_revproxy,omitempty"` // CPUPerReqUs / revproxy's
	IdleRSSMB       float64 `json:"idle_rss_mb,omitempty"`
	// IdleAnonMB is the part of IdleRSSMB no file backs (RssAnon).
	IdleAnonMB float64 `json:"idle_anon_mb,omitempty"`
	PeakRSSMB  float64 `json:"peak_rss_mb,omitempty"` // max of sampled VmRSS and VmHWM during the case
	RestRSSMB  float64 `json:"rest_rss_mb,omitempty"`
	BudgetMB   float64 `json:"budget_mb,omitempty"`
	// PerStreamKB is the memory one live stream holds: peak RSS above
	// idle over the streams alive together (the live workload).
	PerStreamKB float64 `json:"per_stream_kb,omitempty"`
	// PerStreamAnonKB is the same reading of RssAnon alone: it leaves out
	// the binary's pages the load touched for the first time, which no
	// stream holds.
	PerStreamAnonKB float64 `json:"per_stream_anon_kb,omitempty"`
	// SyscallsPerReq is the proxy's system calls per request, from an
	// extra run under perf stat; SyscallMix the main ones per request.
	SyscallsPerReq float64 `json:"syscalls_per_req,omitempty"`
	SyscallMix     string  `json:"syscall_mix,omitempty"`
	BudgetKB       float64 `json:"budget_kb,omitempty"`
	ReadyMs        float64 `json:"ready_ms,omitempty"`
	// MBPerSec is a throughput in MB per CPU-second (the tokens workload),
	// beside its budget.
	MBPerSec       float64 `json:"mb_per_cpu_s,omitempty"`
	BudgetMBPerSec float64 `json:"budget_mb_per_cpu_s,omitempty"`
	Note           string  `json:"note,omitempty"`
	// Profile lists the proxy's top symbols by self CPU from an extra run
	// under perf, e.g. "gjson.validstring 73.8%" (slipstream rows only).
	Profile []string `json:"profile,omitempty"`
	Failed  bool     `json:"failed,omitempty"` // a gate failed or a request failed
}

// Conditions describe the machine and build a report was measured on.
type Conditions struct {
	Date      string `json:"date"`
	CPU       string `json:"cpu"`
	Cores     int    `json:"cores"`
	GoVersion string `json:"go_version"`
	Commit    string `json:"commit"`
	Pinning   string `json:"pinning"`
	LoadAvg   string `json:"loadavg_at_start"` // other work on the machine skews req/s and latency
	Args      string `json:"args"`
}

// Report collects rows and notes. Add rows in the order they should print.
type Report struct {
	Conditions Conditions `json:"conditions"`
	Rows       []Row      `json:"rows"`
	Notes      []string   `json:"notes,omitempty"`
}

// Add appends a row.
func (r *Report) Add(row Row) { r.Rows = append(r.Rows, row) }

// Notef appends a note printed under the tables.
func (r *Report) Notef(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// Failed reports whether any row failed.
func (r *Report) Failed() bool {
	for i := range r.Rows {
		if r.Rows[i].Failed || r.Rows[i].Errors > 0 {
			return true
		}
	}
	return false
}

// Finish fills the ratios and added time to first token of every row
// from the direct and revproxy rows of the same workload, case and
// concurrency.
func (r *Report) Finish() {
	for i := range r.Rows {
		row := &r.Rows[i]
		if d := r.find(row, "direct"); d != nil && row.Target != "direct" {
			row.XDirect = ratio(row.CPUPerReqUs, d.CPUPerReqUs)
			if row.TTFEP50Ms > 0 && d.TTFEP50Ms > 0 {
				row.AddedTTFTMs = row.TTFEP50Ms - d.TTFEP50Ms
			}
		}
		if p := r.find(row, "revproxy"); p != nil && row.Target != "revproxy" {
			row.XRevproxy = ratio(row.CPUPerReqUs, p.CPUPerReqUs)
		}
	}
}

func (r *Report) find(like *Row, target string) *Row {
	for i := range r.Rows {
		o := &r.Rows[i]
		if o.Target == target && o.Workload == like.Workload && o.Case == like.Case && o.Concurrency == like.Concurrency {
			return o
		}
	}
	return nil
}

func ratio(a, b float64) float64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	return a / b
}

// column is one printable figure of a Row.
type column struct {
	head string
	get  func(*Row) string
}

func num(f func(*Row) float64, prec int) func(*Row) string {
	return func(r *Row) string {
		v := f(r)
		if v == 0 {
			return ""
		}
		return fmt.Sprintf("%.*f", prec, v)
	}
}

var columns = []column{
	{"case", func(r *Row) string { return r.Case }},
	{"target", func(r *Row) string { return r.Target }},
	{"c", num(func(r *Row) float64 { return float64(r.Concurrency) }, 0)},
	{"req", func(r *Row) string { return fmt.Sprint(r.Requests) }},
	{"err", func(r *Row) string { return fmt.Sprint(r.Errors) }},
	{"req/s", num(func(r *Row) float64 { return r.RPS }, 0)},
	{"p50 ms", num(func(r *Row) float64 { return r.LatP50Ms }, 3)},
	{"p90 ms", num(func(r *Row) float64 { return r.LatP90Ms }, 3)},
	{"p99 ms", num(func(r *Row) float64 { return r.LatP99Ms }, 3)},
	{"TTFE p50 ms", num(func(r *Row) float64 { return r.TTFEP50Ms }, 3)},
	{"added TTFT ms", num(func(r *Row) float64 { return r.AddedTTFTMs }, 3)},
	{"CPU us/req", num(func(r *Row) float64 { return r.CPUPerReqUs }, 0)},
	{"x direct", num(func(r *Row) float64 { return r.XDirect }, 2)},
	{"x revproxy", num(func(r *Row) float64 { return r.XRevproxy }, 2)},
	{"harness us/req", num(func(r *Row) float64 { return r.LoadCPUPerReqUs }, 0)},
	{"idle RSS MB", num(func(r *Row) float64 { return r.IdleRSSMB }, 1)},
	{"peak RSS MB", num(func(r *Row) float64 { return r.PeakRSSMB }, 1)},
	{"rest RSS MB", num(func(r *Row) float64 { return r.RestRSSMB }, 1)},
	{"budget MB", num(func(r *Row) float64 { return r.BudgetMB }, 1)},
	{"syscalls/req", num(func(r *Row) float64 { return r.SyscallsPerReq }, 1)},
	{"KB per stream", num(func(r *Row) float64 { return r.PerStreamKB }, 1)},
	{"budget KB", num(func(r *Row) float64 { return r.BudgetKB }, 1)},
	{"ready ms", num(func(r *Row) float64 { return r.ReadyMs }, 1)},
	{"MB/cpu-s", num(func(r *Row) float64 { return r.MBPerSec }, 0)},
	{"budget MB/cpu-s", num(func(r *Row) float64 { return r.BudgetMBPerSec }, 0)},
	{"gate", func(r *Row) string {
		if r.Failed || r.Errors > 0 {
			return "FAIL"
		}
		return ""
	}},
	{"note", func(r *Row) string { return r.Note }},
	{"syscalls per request", func(r *Row) string { return r.SyscallMix }},
}

// WriteMarkdown writes one table per workload (columns that are blank in
// every row of a workload are left out), then the notes.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	c := r.Conditions
	fmt.Fprintf(&b, "# slipstream bench report\n\n%s; %s, %d cores; %s; commit %s; %s; load average at start %s\n\n`%s`\n",
		c.Date, c.CPU, c.Cores, c.GoVersion, c.Commit, c.Pinning, c.LoadAvg, c.Args)
	for _, wl := range r.workloads() {
		rows := r.rowsOf(wl)
		cols := usedColumns(rows)
		fmt.Fprintf(&b, "\n## %s\n\n|", wl)
		for _, col := range cols {
			b.WriteString(" " + col.head + " |")
		}
		b.WriteString("\n|")
		for range cols {
			b.WriteString("---|")
		}
		for _, row := range rows {
			b.WriteString("\n|")
			for _, col := range cols {
				b.WriteString(" " + strings.ReplaceAll(col.get(row), "|", "/") + " |")
			}
		}
		b.WriteString("\n")
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range r.Notes {
			b.WriteString("- " + n + "\n")
		}
	}
	r.writeProfiles(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

func (r *Report) workloads() []string {
	var out []string
	for i := range r.Rows {
		if !contains(out, r.Rows[i].Workload) {
			out = append(out, r.Rows[i].Workload)
		}
	}
	return out
}

func (r *Report) rowsOf(workload string) []*Row {
	var out []*Row
	for i := range r.Rows {
		if r.Rows[i].Workload == workload {
			out = append(out, &r.Rows[i])
		}
	}
	return out
}

func usedColumns(rows []*Row) []column {
	var out []column
	for _, col := range columns {
		for _, row := range rows {
			if col.get(row) != "" {
				out = append(out, col)
				break
			}
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Write writes report.md and report.json into dir, creating it.
func (r *Report) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create report dir: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, "report.md"))
	if err != nil {
		return fmt.Errorf("cannot create report.md: %w", err)
	}
	if err := r.WriteMarkdown(f); err != nil {
		f.Close()
		return fmt.Errorf("cannot write report.md: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("cannot write report.md: %w", err)
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("cannot encode report.json: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("cannot write report.json: %w", err)
	}
	return nil
}

// ms converts a duration to float milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// mb converts bytes to float MiB.
func mb(n int64) float64 { return float64(n) / (1 << 20) }

// writeProfiles lists each row's profile, if any row has one.
func (r *Report) writeProfiles(b *strings.Builder) {
	head := false
	for i := range r.Rows {
		row := &r.Rows[i]
		if len(row.Profile) == 0 {
			continue
		}
		if !head {
			b.WriteString("\n## Where slipstream spends its CPU (perf, top symbols by self time)\n\n")
			head = true
		}
		fmt.Fprintf(b, "- %s / %s%s: %s\n", row.Workload, row.Case, concSuffix(row.Concurrency), strings.Join(row.Profile, ", "))
	}
}
