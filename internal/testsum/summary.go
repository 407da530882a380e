package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json), build events
// included.
type event struct {
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string // build-output, build-fail
	FailedBuild string // on a package's fail: it did not build
}

// result is what became of one test (or one check, or one package that
// failed outside any test).
type result struct {
	Name   string // "[step] package TestName" or a check's name
	Status string // pass, fail, skip
	Output string // what it printed (failures and skips)
}

// Summary counts what ran across every step of a test run.
type Summary struct {
	Results []result
	out     io.Writer // progress: one line per package
}

// Check records a check that is not a Go test (gofmt, vet): one result.
func (s *Summary) Check(name string, ok bool, output string) {
	st := "pass"
	if !ok {
		st = "fail"
	}
	s.Results = append(s.Results, result{Name: name, Status: st, Output: output})
	s.progress(st, name, "")
}

// pkgState gathers one package's events of one step.
type pkgState struct {
	tests  map[string]*result
	order  []string
	output strings.Builder // package-level output (build errors, panics)
	done   bool
}

// ReadGoTest consumes a `go test -json` stream for the step named step
// ("unit", "race"). Lines that are not JSON are kept as output of the
// step. exitErr is how the go command ended: a failure it reported
// nowhere else (no package failed) becomes a failed result of its own, so
// a go test that cannot even start never passes silently.
func (s *Summary) ReadGoTest(step string, r io.Reader, exitErr error) {
	pkgs := map[string]*pkgState{}
	var order []string
	builds := map[string]*strings.Builder{} // import path -> build output
	var stray strings.Builder
	get := func(p string) *pkgState {
		ps := pkgs[p]
		if ps == nil {
			ps = &pkgState{tests: map[string]*result{}}
			pkgs[p] = ps
			order = append(order, p)
		}
		return ps
	}
	failedBefore := s.Failed()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			stray.Write(line)
			stray.WriteByte('\n')
			continue
		}
		switch {
		case e.Action == "build-output":
			b := builds[e.ImportPath]
			if b == nil {
				b = &strings.Builder{}
				builds[e.ImportPath] = b
			}
			b.WriteString(e.Output)
		case e.Action == "build-fail":
		case e.Package == "":
		case e.Test == "":
			ps := get(e.Package)
			switch e.Action {
			case "output":
				ps.output.WriteString(e.Output)
			case "pass", "fail", "skip":
				ps.done = true
				s.finishPackage(step, e, ps, builds)
			}
		default:
			ps := get(e.Package)
			t := ps.tests[e.Test]
			if t == nil {
				t = &result{Name: fmt.Sprintf("%s %s %s", step, e.Package, e.Test)}
				ps.tests[e.Test] = t
				ps.order = append(ps.order, e.Test)
			}
			switch e.Action {
			case "output":
				t.Output += e.Output
			case "pass", "fail", "skip":
				t.Status = e.Action
			}
		}
	}
	for _, p := range order { // a stream cut short: packages never finished
		if ps := pkgs[p]; !ps.done {
			s.finishPackage(step, event{Action: "fail", Package: p}, ps, builds)
		}
	}
	if exitErr != nil && s.Failed() == failedBefore {
		s.Results = append(s.Results, result{Name: step + " (go test)", Status: "fail",
			Output: fmt.Sprintf("go test ended with %v and reported no failing package:\n%s", exitErr, clip(stray.String(), 4000))})
		s.progress("fail", step+" (go test)", "")
	}
}

// finishPackage records a package's leaf tests (a parent with subtests
// counts through them), and a failure of the package itself when no test
// failed (a build failure, a panic outside a test, a timeout).
func (s *Summary) finishPackage(step string, e event, ps *pkgState, builds map[string]*strings.Builder) {
	var pass, fail, skip int
	for _, name := range ps.order {
		t := ps.tests[name]
		if hasChild(ps.order, name) {
			continue
		}
		if t.Status == "" { // started, never ended: the package died under it
			t.Status = "fail"
		}
		s.Results = append(s.Results, *t)
		switch t.Status {
		case "pass":
			pass++
		case "fail":
			fail++
		case "skip":
			skip++
		}
	}
	if e.Action == "fail" && fail == 0 {
		why := "package failed outside any test"
		out := ps.output.String()
		if e.FailedBuild != "" {
			why = "build failed"
			if b := builds[e.FailedBuild]; b != nil {
				out = b.String() + out
			}
		}
		s.Results = append(s.Results, result{Name: fmt.Sprintf("%s %s (%s)", step, e.Package, why), Status: "fail", Output: out})
		fail++
	}
	if pass+fail+skip == 0 {
		return // no test files
	}
	st := "ok"
	if e.Action == "fail" {
		st = "FAIL"
	}
	detail := fmt.Sprintf("%d passed", pass)
	if fail > 0 {
		detail += fmt.Sprintf(", %d failed", fail)
	}
	if skip > 0 {
		detail += fmt.Sprintf(", %d skipped", skip)
	}
	s.progress(st, step+" "+e.Package, fmt.Sprintf("%s  %.1fs", detail, e.Elapsed))
}

func hasChild(names []string, name string) bool {
	for _, n := range names {
		if strings.HasPrefix(n, name+"/") {
			return true
		}
	}
	return false
}

func (s *Summary) progress(status, name, detail string) {
	if s.out == nil {
		return
	}
	switch status {
	case "pass":
		status = "ok"
	case "fail":
		status = "FAIL"
	}
	fmt.Fprintf(s.out, "%-4s %s  %s\n", status, name, detail)
}

func (s *Summary) count(status string) int {
	n := 0
	for _, r := range s.Results {
		if r.Status == status {
			n++
		}
	}
	return n
}

// Failed is the number of failed results so far.
func (s *Summary) Failed() int { return s.count("fail") }

// Line is the last line of the run: `tests: N passed, N failed, N skipped`.
func (s *Summary) Line() string {
	return fmt.Sprintf("tests: %d passed, %d failed, %d skipped", s.count("pass"), s.count("fail"), s.count("skip"))
}

// fileLine is the "name_test.go:21: " prefix testing puts on a log line.
var fileLine = regexp.MustCompile(`^\s*[\w.-]+\.go:\d+: `)

// skipReason is what a skipped test said, without the framing lines.
func skipReason(out string) string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		lines = append(lines, fileLine.ReplaceAllString(l, ""))
	}
	if len(lines) == 0 {
		return "(no reason given)"
	}
	return clip(strings.TrimSpace(strings.Join(lines, " ")), 300)
}

// WriteReport writes the failures with their output, the skips grouped by
// reason, and the summary line last.
func (s *Summary) WriteReport(w io.Writer, nodeMissing bool) {
	for _, r := range s.Results {
		if r.Status == "fail" {
			fmt.Fprintf(w, "\n--- FAIL: %s\n%s", r.Name, indent(clip(r.Output, 6000)))
		}
	}
	reasons := map[string][]string{}
	var keys []string
	for _, r := range s.Results {
		if r.Status != "skip" {
			continue
		}
		why := skipReason(r.Output)
		if reasons[why] == nil {
			keys = append(keys, why)
		}
		reasons[why] = append(reasons[why], r.Name)
	}
	if len(keys) > 0 {
		fmt.Fprintf(w, "\nskipped, by reason:\n")
		slices.Sort(keys)
		for _, k := range keys {
			names := reasons[k]
			fmt.Fprintf(w, "  %d: %s\n", len(names), k)
			for _, n := range names {
				fmt.Fprintf(w, "       %s\n", n)
			}
		}
	}
	if nodeMissing {
		fmt.Fprintf(w, "\n%s\n", nodeBanner)
	}
	fmt.Fprintln(w, s.Line())
}

const nodeBanner = "!!! node is not on PATH: the real-client end-to-end tests (Claude Code, Codex CLI, the official SDKs) did NOT run. Install Node.js 20+ and npm, then run make test again."

func indent(s string) string {
	if s == "" {
		return ""
	}
	s = strings.TrimRight(s, "\n")
	return "    " + strings.ReplaceAll(s, "\n", "\n    ") + "\n"
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "\n... (clipped)"
}
