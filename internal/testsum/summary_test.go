package main

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestSummary: each case is a `go test -json` stream and the summary line
// and report lines it must give.
func TestSummary(t *testing.T) {
	f := func(stream string, exitErr error, wantLine string, wantReport ...string) {
		t.Helper()
		s := &Summary{}
		s.ReadGoTest("unit", strings.NewReader(stream), exitErr)
		var b bytes.Buffer
		s.WriteReport(&b, false)
		report := b.String()
		lines := strings.Split(strings.TrimRight(report, "\n"), "\n")
		if last := lines[len(lines)-1]; last != wantLine {
			t.Fatalf("last line %q, want %q\n%s", last, wantLine, report)
		}
		for _, w := range wantReport {
			if !strings.Contains(report, w) {
				t.Fatalf("report lacks %q:\n%s", w, report)
			}
		}
	}
	ev := func(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

	// Nothing ran.
	f("", nil, "tests: 0 passed, 0 failed, 0 skipped")
	// One pass, one skip with its reason (file:line prefix dropped).
	f(ev(`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"pass","Package":"p","Test":"TestA"}`,
		`{"Action":"run","Package":"p","Test":"TestB"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"=== RUN   TestB\n"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"    node_test.go:21: node not found on PATH\n"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"--- SKIP: TestB (0.00s)\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestB"}`,
		`{"Action":"pass","Package":"p","Elapsed":0.1}`), nil,
		"tests: 1 passed, 0 failed, 1 skipped",
		"skipped, by reason:", "  1: node not found on PATH", "unit p TestB")
	// Subtests count as leaves; the parent is not counted again.
	f(ev(`{"Action":"run","Package":"p","Test":"T"}`,
		`{"Action":"run","Package":"p","Test":"T/a"}`,
		`{"Action":"pass","Package":"p","Test":"T/a"}`,
		`{"Action":"run","Package":"p","Test":"T/b"}`,
		`{"Action":"output","Package":"p","Test":"T/b","Output":"    x_test.go:3: boom\n"}`,
		`{"Action":"fail","Package":"p","Test":"T/b"}`,
		`{"Action":"fail","Package":"p","Test":"T"}`,
		`{"Action":"fail","Package":"p"}`), nil,
		"tests: 1 passed, 1 failed, 0 skipped", "--- FAIL: unit p T/b", "boom")
	// A package that does not build is a failure with the compiler's words.
	f(ev(`{"ImportPath":"q [q.test]","Action":"build-output","Output":"q/x.go:3:1: undefined: y\n"}`,
		`{"ImportPath":"q [q.test]","Action":"build-fail"}`,
		`{"Action":"start","Package":"q"}`,
		`{"Action":"fail","Package":"q","FailedBuild":"q [q.test]"}`), nil,
		"tests: 0 passed, 1 failed, 0 skipped", "--- FAIL: unit q (build failed)", "undefined: y")
	// A test started but never ended (the package died under it).
	f(ev(`{"Action":"run","Package":"p","Test":"TestHang"}`,
		`{"Action":"output","Package":"p","Output":"panic: test timed out after 10m0s\n"}`,
		`{"Action":"fail","Package":"p"}`), nil,
		"tests: 0 passed, 1 failed, 0 skipped", "--- FAIL: unit p TestHang")
	// A stream cut short: the unfinished package fails.
	f(ev(`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"pass","Package":"p","Test":"TestA"}`), nil,
		"tests: 1 passed, 1 failed, 0 skipped", "unit p (package failed outside any test)")
	// go test failing before any package (bad pattern): a failure.
	f("no Go files in /x\n", errors.New("exit status 1"), "tests: 0 passed, 1 failed, 0 skipped", "no Go files in /x")
	// go test failing with a failing package reported: counted once.
	f(ev(`{"Action":"fail","Package":"p","FailedBuild":"p [p.test]"}`), errors.New("exit status 1"),
		"tests: 0 passed, 1 failed, 0 skipped")
	// Same skip reason twice: one group of two.
	f(ev(`{"Action":"output","Package":"e","Test":"A","Output":"    n.go:1: no node\n"}`,
		`{"Action":"skip","Package":"e","Test":"A"}`,
		`{"Action":"output","Package":"e","Test":"B","Output":"    n.go:1: no node\n"}`,
		`{"Action":"skip","Package":"e","Test":"B"}`,
		`{"Action":"skip","Package":"e"}`), nil,
		"tests: 0 passed, 0 failed, 2 skipped", "  2: no node")
}

// TestSummaryRealStreams reads streams recorded from go test -json: a
// build failure beside passes, a skip and a failing subtest; a panicking
// test and a TestMain that exits non-zero.
func TestSummaryRealStreams(t *testing.T) {
	f := func(file, wantLine string, wantReport ...string) {
		t.Helper()
		b, err := os.ReadFile("testdata/" + file)
		if err != nil {
			t.Fatal(err)
		}
		s := &Summary{}
		s.ReadGoTest("unit", bytes.NewReader(b), nil)
		s.Check("gofmt", true, "")
		var out bytes.Buffer
		s.WriteReport(&out, true)
		lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
		if last := lines[len(lines)-1]; last != wantLine {
			t.Fatalf("%s: last line %q, want %q\n%s", file, last, wantLine, out.String())
		}
		for _, w := range append(wantReport, nodeBanner) {
			if !strings.Contains(out.String(), w) {
				t.Fatalf("%s: report lacks %q:\n%s", file, w, out.String())
			}
		}
	}
	f("buildfail_skip_subtests.json", "tests: 3 passed, 2 failed, 1 skipped",
		"unit tsj/b (build failed)", "undefined: undefined", "1: node not found on PATH", "unit tsj/a TestSub/y")
	f("panic_testmain.json", "tests: 1 passed, 2 failed, 0 skipped",
		"unit tsj/c TestPanics", "assignment to entry in nil map", "unit tsj/d (package failed outside any test)")
}
