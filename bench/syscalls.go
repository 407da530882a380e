package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// System calls per request: one extra, unmeasured run of a case with
// `perf stat` counting the proxy's system calls (kernel tracepoints, no
// sampling), divided by the requests of that run. It needs Options.Perf
// and permission to read tracepoints (root or perf_event_paranoid <= -1);
// without them the row has no figure.

// syscallEvents are the counted tracepoints: every system call, then the
// ones a request's cost is made of.
var syscallEvents = []string{
	"raw_syscalls:sys_enter",
	"syscalls:sys_enter_read", "syscalls:sys_enter_write",
	"syscalls:sys_enter_epoll_pwait", "syscalls:sys_enter_futex", "syscalls:sys_enter_nanosleep",
}

// syscalls runs lc once more under `perf stat` and returns the system
// calls per request and their mix, e.g. "read 4.3 write 3.9 ...".
func (e *Env) syscalls(ctx context.Context, p *Proc, lc loadCase) (float64, string) {
	if e.Opts.Perf == "" || ctx.Err() != nil {
		return 0, ""
	}
	cmd := exec.Command(e.Opts.Perf, "stat", "-x", ",", "-e", strings.Join(syscallEvents, ","), "-p", strconv.Itoa(p.PID()))
	var out bytes.Buffer
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		return 0, "cannot start perf stat: " + err.Error()
	}
	sleepCtx(ctx, 200*time.Millisecond) // perf attaches to every thread
	res, err := Run(ctx, LoadConfig{URL: p.URL, Concurrency: lc.conc, Duration: lc.dur, Next: func(w, i int) *Req { return lc.req }})
	cmd.Process.Signal(syscall.SIGINT) //nolint:errcheck // Wait reports a perf that already ended
	cmd.Wait()                         //nolint:errcheck // perf ends on the SIGINT: its exit status says nothing
	if err != nil || res.Requests == 0 {
		return 0, fmt.Sprintf("syscall run: %v", err)
	}
	counts := parsePerfStat(out.Bytes())
	total, ok := counts["raw_syscalls:sys_enter"]
	if !ok {
		return 0, "perf stat counted no system calls: " + string(clip(out.Bytes()))
	}
	n := float64(res.Requests)
	var mix []string
	for _, ev := range syscallEvents[1:] {
		if c, ok := counts[ev]; ok {
			mix = append(mix, fmt.Sprintf("%s %.2f", strings.TrimPrefix(ev, "syscalls:sys_enter_"), c/n))
		}
	}
	return total / n, strings.Join(mix, ", ")
}

// parsePerfStat reads `perf stat -x ,` lines ("1234,,raw_syscalls:sys_enter,...")
// into counts by event; events perf could not count are left out.
func parsePerfStat(b []byte) map[string]float64 {
	counts := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Split(sc.Text(), ",")
		if len(f) < 3 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue // "<not counted>", "<not supported>"
		}
		counts[f[2]] = v
	}
	return counts
}
