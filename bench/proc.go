package bench

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Proc is a proxy under test running as a child process (or, for the
// direct target, no process at all: PID 0 and URL the stub's).
type Proc struct {
	Name       string
	URL        string        // base URL clients send to
	ReadyAfter time.Duration // from exec to ready (readyz 200 or the listening line)
	cmd        *exec.Cmd
	exited     chan struct{}
	stderr     *tailBuffer
}

// PID returns the process id, or 0 for the direct target.
func (p *Proc) PID() int {
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Alive reports whether the process is still running (true for direct).
func (p *Proc) Alive() bool {
	if p.cmd == nil {
		return true
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Stderr returns the last few KB the process wrote to stderr.
func (p *Proc) Stderr() string {
	if p.stderr == nil {
		return ""
	}
	return p.stderr.String()
}

// Stop sends SIGTERM, waits up to 10 s for exit, then kills. It returns
// the exit error of a process that did not exit cleanly.
func (p *Proc) Stop() error {
	if p.cmd == nil {
		return nil
	}
	if p.Alive() {
		p.cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck // it may have exited meanwhile
	}
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill() //nolint:errcheck // best effort after the grace period
		<-p.exited
		return fmt.Errorf("cannot stop %s: no exit 10 s after SIGTERM", p.Name)
	}
	if err := p.cmd.ProcessState; err != nil && !err.Success() {
		return fmt.Errorf("cannot stop %s cleanly: %s; stderr: %s", p.Name, err, p.Stderr())
	}
	return nil
}

// Pinning says whether and where children are pinned with taskset.
type Pinning struct {
	Taskset string // path of taskset; "" = do not pin
	CPU     string // CPU list for proxies, e.g. "1"
}

// command returns an exec.Cmd for argv, wrapped in taskset when pinning.
func (pin Pinning) command(argv ...string) *exec.Cmd {
	if pin.Taskset != "" {
		argv = append([]string{pin.Taskset, "-c", pin.CPU}, argv...)
	}
	return exec.Command(argv[0], argv[1:]...)
}

// startProc starts cmd and watches its exit.
func startProc(name string, cmd *exec.Cmd, env []string) (*Proc, error) {
	p := &Proc{Name: name, cmd: cmd, exited: make(chan struct{}), stderr: &tailBuffer{max: 8 << 10}}
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", name, err)
	}
	go func() {
		cmd.Wait() //nolint:errcheck // the state is read from ProcessState
		close(p.exited)
	}()
	return p, nil
}

// StartReverseProxy starts the baseline proxy (this binary re-executed as
// `exe revproxy -upstream URL`) and waits for its listening line.
func StartReverseProxy(exe, upstream string, pin Pinning) (*Proc, error) {
	return startListening("revproxy", pin.command(exe, "revproxy", "-upstream", upstream))
}

// StartFastProxy starts the minimal fasthttp proxy (bin, built from
// ./bench/fastproxy) in front of upstream and waits for its listening
// line.
func StartFastProxy(bin, upstream string, pin Pinning) (*Proc, error) {
	return startListening("fastproxy", pin.command(bin, "-upstream", upstream))
}

// startListening starts cmd, a proxy that prints "listening ADDR" on
// stdout once it accepts connections, and waits for that line.
func startListening(name string, cmd *exec.Cmd) (*Proc, error) {
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("cannot pipe %s stdout: %w", name, err)
	}
	start := time.Now()
	p, err := startProc(name, cmd, nil)
	if err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		p.Stop() //nolint:errcheck // already failing
		return nil, fmt.Errorf("cannot read %s address (got %q): %v; stderr: %s", name, line, err, p.Stderr())
	}
	p.ReadyAfter = time.Since(start)
	p.URL = "http://" + addr
	return p, nil
}

// StartSlipstream starts bin -config cfgPath with extra env and waits up
// to 15 s for GET /readyz on addr to answer 200.
func StartSlipstream(bin, cfgPath, addr string, env []string, pin Pinning) (*Proc, error) {
	start := time.Now()
	p, err := startProc("slipstream", pin.command(bin, "-config", cfgPath), env)
	if err != nil {
		return nil, err
	}
	p.URL = "http://" + addr
	if err := waitReady(p, 15*time.Second); err != nil {
		p.Stop() //nolint:errcheck // already failing
		return nil, err
	}
	p.ReadyAfter = time.Since(start)
	return p, nil
}

// waitReady polls GET /readyz every millisecond until 200.
func waitReady(p *Proc, limit time.Duration) error {
	c := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	for ctx.Err() == nil {
		if !p.Alive() {
			return fmt.Errorf("cannot start %s: exited early: %s", p.Name, p.Stderr())
		}
		resp, err := c.Get(p.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(time.Millisecond)
	}
	return fmt.Errorf("cannot start %s: /readyz not 200 within %s; stderr: %s", p.Name, limit, p.Stderr())
}

// FreeAddr returns a 127.0.0.1 address with a port that was free a moment
// ago (the usual small race with other processes is accepted).
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("cannot find a free port: %w", err)
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }
