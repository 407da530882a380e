// Command testsum runs slipstream's whole test suite (gofmt, go vet, the
// linter, the unit run, the race run) and ends with one line that counts
// what ran:
//
//	tests: N passed, N failed, N skipped
//
// with every failure's output and every skip's reason above it. A package
// that does not build is a failure, never a skip. It exits 1 when anything
// failed. make test runs it:
//
//	go run ./internal/testsum [-lint BIN] [-race 'PKG...'] [-run REGEXP] [PKG...]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

func main() {
	race := flag.String("race", "", "space-separated packages to run again under -race (none: no race run)")
	runRe := flag.String("run", "", "pass -run to go test (for a partial run)")
	lint := flag.String("lint", "", "golangci-lint binary to run over the packages as one check (none: no lint)")
	flag.Parse()
	pkgs := flag.Args()
	if len(pkgs) == 0 {
		pkgs = []string{"./..."}
	}
	_, err := exec.LookPath("node")
	nodeMissing := err != nil
	if nodeMissing {
		fmt.Println(nodeBanner)
	}
	s := &Summary{out: os.Stdout}
	ok, out := gofmtCheck()
	s.Check("gofmt", ok, out)
	ok, out = runCheck("go", append([]string{"vet"}, pkgs...)...)
	s.Check("go vet", ok, out)
	if *lint != "" {
		ok, out = runCheck(*lint, append([]string{"run"}, pkgs...)...)
		s.Check("golangci-lint", ok, out)
	}
	s.goTest("unit", *runRe, pkgs)
	if *race != "" {
		s.goTest("race", *runRe, append([]string{"-race"}, strings.Fields(*race)...))
	}
	s.WriteReport(os.Stdout, nodeMissing)
	if s.Failed() > 0 {
		os.Exit(1)
	}
}

func (s *Summary) goTest(step, runRe string, args []string) {
	a := []string{"test", "-count=1", "-json"}
	if runRe != "" {
		a = append(a, "-run", runRe)
	}
	cmd := exec.Command("go", append(a, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		s.Check(step+" (go test)", false, err.Error())
		return
	}
	if err := cmd.Start(); err != nil {
		s.Check(step+" (go test)", false, err.Error())
		return
	}
	before := s.Failed()
	s.ReadGoTest(step, out, nil)
	if err := cmd.Wait(); err != nil && s.Failed() == before {
		s.Check(step+" (go test)", false, fmt.Sprintf("go test ended with %v and reported no failing package (see its stderr above)", err))
	}
}

// gofmtCheck lists the tracked Go files gofmt would change.
func gofmtCheck() (bool, string) {
	files, err := exec.Command("git", "ls-files", "*.go").Output()
	if err != nil {
		return false, "cannot list files with git: " + err.Error()
	}
	names := strings.Fields(string(files))
	if len(names) == 0 {
		return true, ""
	}
	cmd := exec.Command("gofmt", append([]string{"-l"}, names...)...)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := cmd.Run(); err != nil {
		return false, b.String() + err.Error()
	}
	if b.Len() > 0 {
		return false, "gofmt needed:\n" + b.String()
	}
	return true, ""
}

func runCheck(name string, args ...string) (bool, string) {
	cmd := exec.Command(name, args...)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.MultiWriter(&b, os.Stdout), io.MultiWriter(&b, os.Stdout)
	err := cmd.Run()
	if err != nil {
		return false, b.String() + err.Error()
	}
	return true, ""
}
