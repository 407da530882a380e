package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Profiler samples one process with Linux perf while a case runs, so a
// row that misses a target can say what dominates. It is optional: with
// no perf binary (or no permission) Start returns an error and the row
// simply has no profile.
type Profiler struct {
	perf string
	out  string
	cmd  *exec.Cmd
}

// StartProfiler starts `perf record -p pid` writing into dir.
func StartProfiler(perf, dir string, pid int) (*Profiler, error) {
	out := filepath.Join(dir, "perf-"+strconv.Itoa(pid)+".data")
	cmd := exec.Command(perf, "record", "-q", "-F", "999", "-p", strconv.Itoa(pid), "-o", out)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start perf: %w", err)
	}
	return &Profiler{perf: perf, out: out, cmd: cmd}, nil
}

// Stop ends recording and returns the top n symbols by self time, e.g.
// "gjson.validstring 74%", as shares of the process's samples.
func (p *Profiler) Stop(n int) ([]string, error) {
	defer os.Remove(p.out)
	p.cmd.Process.Signal(syscall.SIGINT) //nolint:errcheck // Wait reports a perf that already ended
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done: //nolint:errcheck // perf ends on the SIGINT above: its exit status says nothing
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill() //nolint:errcheck // best effort
		return nil, fmt.Errorf("cannot stop perf within 30 s")
	}
	rep, err := exec.Command(p.perf, "report", "-i", p.out, "--no-children", "--sort", "symbol",
		"--stdio", "-g", "none", "--percent-limit", "1").Output()
	if err != nil {
		return nil, fmt.Errorf("cannot read perf report: %w", err)
	}
	return topSymbols(rep, n), nil
}

// topSymbols parses `perf report --stdio` lines like
// "    33.81%  [.] github.com/tidwall/gjson.validstring" into
// "gjson.validstring 33.8%".
func topSymbols(rep []byte, n int) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(rep))
	for sc.Scan() && len(out) < n {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || !strings.HasSuffix(f[0], "%") || strings.HasPrefix(f[0], "#") {
			continue
		}
		pct, err := strconv.ParseFloat(strings.TrimSuffix(f[0], "%"), 64)
		if err != nil {
			continue
		}
		out = append(out, fmt.Sprintf("%s %.1f%%", shortSymbol(f[2]), pct))
	}
	return out
}

// shortSymbol keeps the last path element of a Go symbol:
// github.com/tidwall/gjson.validstring -> gjson.validstring.
func shortSymbol(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}
