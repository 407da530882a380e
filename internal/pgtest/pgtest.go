// Package pgtest runs a real PostgreSQL cluster for tests, on a free
// loopback port, in a temporary data directory, without durability
// (fsync off): each test gets its own cluster, as internal/redistest
// gives each its own Redis.
//
// The cluster is initialised once (initdb is the slow part; its output is
// kept in the temporary directory for later runs) and copied for each
// test. PostgreSQL refuses to run as root: when
// the tests run as root, initdb and postgres run as the postgres user
// (Debian's postgresql package creates it), and the data directory is
// given to that user.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Cluster is a running PostgreSQL started by Start.
type Cluster struct {
	Port int
	dir  string // the data directory
	bin  string
	cred *syscall.Credential

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// binDir finds PostgreSQL's server binaries: Debian keeps them in
// /usr/lib/postgresql/VERSION/bin (the newest version wins), elsewhere
// they are on PATH.
func binDir() (string, error) {
	ms, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	sort.Slice(ms, func(i, j int) bool { return version(ms[i]) > version(ms[j]) })
	if len(ms) > 0 {
		return filepath.Dir(ms[0]), nil
	}
	p, err := exec.LookPath("postgres")
	if err != nil {
		return "", errors.New("PostgreSQL's server binaries were not found (/usr/lib/postgresql/*/bin or PATH)")
	}
	return filepath.Dir(p), nil
}

func version(bin string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(bin))))
	return n
}

// template is the data directory initdb made, copied by each Start.
var template struct {
	once sync.Once
	dir  string
	bin  string
	cred *syscall.Credential
	err  error
}

// Start runs a PostgreSQL cluster for the test and stops it (and removes
// its data) at the test's end. Without the binaries the test is skipped,
// saying why; under SLIPSTREAM_REQUIRE_E2E=1 (set by CI, which installs
// postgresql) it fails instead.
func Start(t testing.TB) *Cluster {
	t.Helper()
	template.once.Do(initTemplate)
	if template.err != nil {
		if os.Getenv("SLIPSTREAM_REQUIRE_E2E") == "1" {
			t.Fatalf("SLIPSTREAM_REQUIRE_E2E=1 and PostgreSQL cannot run: %v (apt-get install postgresql)", template.err)
		}
		t.Skipf("PostgreSQL cannot run: %v; install it (apt-get install postgresql) to run the PostgreSQL tests", template.err)
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	data := filepath.Join(dir, "data")
	if out, err := exec.Command("cp", "-a", template.dir, data).CombinedOutput(); err != nil {
		t.Fatalf("cannot copy the PostgreSQL template: %v: %s", err, out)
	}
	if err := chown(dir, template.cred); err != nil {
		t.Fatal(err)
	}
	c := &Cluster{dir: data, bin: template.bin, cred: template.cred}
	for attempt := 0; ; attempt++ {
		c.Port = freePort(t)
		if err = c.start(); err == nil {
			break
		}
		if attempt == 2 {
			t.Fatalf("cannot start PostgreSQL: %v\n%s", err, c.Log())
		}
	}
	t.Cleanup(c.Stop)
	return c
}

// initTemplate finds or makes the template data directory: initdb's
// output, kept in the temporary directory under a name per PostgreSQL
// version and user, and shared by every test binary (made once, in a
// directory of its own renamed into place, so that concurrent test
// binaries neither race nor leave copies behind).
func initTemplate() {
	bin, err := binDir()
	if err != nil {
		template.err = err
		return
	}
	cred, err := credential()
	if err != nil {
		template.err = err
		return
	}
	template.bin, template.cred = bin, cred
	final := filepath.Join(os.TempDir(), fmt.Sprintf("slipstream-pgtest-%s-%d", filepath.Base(filepath.Dir(bin)), os.Geteuid()))
	data := filepath.Join(final, "data")
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); err == nil {
		template.dir = data
		return
	}
	dir, err := os.MkdirTemp("", "slipstream-pgtest-new-")
	if err != nil {
		template.err = err
		return
	}
	defer os.RemoveAll(dir) // a no-op once renamed
	if err := chown(dir, cred); err != nil {
		template.err = err
		return
	}
	cmd := exec.Command(filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		template.err = fmt.Errorf("initdb: %v: %s", err, out)
		return
	}
	if err := os.Rename(dir, final); err != nil {
		if _, serr := os.Stat(filepath.Join(data, "PG_VERSION")); serr != nil {
			template.err = fmt.Errorf("cannot keep the PostgreSQL template: %v", err)
			return
		}
		// Another test binary renamed its own into place first.
	}
	template.dir = data
}

// credential is the user PostgreSQL runs as: the postgres user when the
// tests run as root, else nil (the current user).
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root and there is no postgres user to run PostgreSQL as: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func chown(dir string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(cred.Uid), int(cred.Gid))
	})
}

func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// start runs postgres on c's port and waits until it accepts
// connections.
func (c *Cluster) start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	logf, err := os.OpenFile(filepath.Join(filepath.Dir(c.dir), "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
	if err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(c.bin, "postgres"), "-D", c.dir, "-p", strconv.Itoa(c.Port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "fsync=off",
		"-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "shared_buffers=16MB",
		"-c", "max_connections=50")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(done) }()
	c.cmd, c.done, c.log = cmd, done, logf
	deadline := time.Now().Add(30 * time.Second)
	for !c.accepts() {
		select {
		case <-done:
			return errors.New("postgres exited at start")
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-done
			return errors.New("postgres did not accept connections within 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// accepts reports whether the server accepts connections (pg_isready:
// a server still starting up answers on its port but refuses them).
func (c *Cluster) accepts() bool {
	cmd := exec.Command(filepath.Join(c.bin, "pg_isready"), "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(c.Port), "-t", "1")
	return cmd.Run() == nil
}

// Addr is the cluster's host:port.
func (c *Cluster) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.Port)) }

// URL is a postgres:// URL of the cluster's postgres database (user
// postgres, no password: the cluster trusts loopback).
func (c *Cluster) URL() string {
	return "postgres://postgres@" + c.Addr() + "/postgres?sslmode=disable"
}

// Stop shuts the server down (fast shutdown: open connections are cut)
// and waits for it to exit. The data stays until the test ends, for
// Restart. It may be called more than once.
func (c *Cluster) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		return
	}
	c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.done:
	case <-time.After(20 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
	}
	c.cmd = nil
}

// Restart starts the stopped server again, on the same port with the
// same data.
func (c *Cluster) Restart(t testing.TB) {
	t.Helper()
	if err := c.start(); err != nil {
		t.Fatalf("cannot restart PostgreSQL: %v\n%s", err, c.Log())
	}
}

// Log returns the server's log, for a failing test.
func (c *Cluster) Log() string {
	b, _ := os.ReadFile(filepath.Join(filepath.Dir(c.dir), "postgres.log"))
	return string(b)
}

// Exec runs SQL statements on the cluster as the postgres user (through
// psql), for a test that prepares or inspects the database.
func (c *Cluster) Exec(ctx context.Context, sql string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, "psql"), "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql, c.URL())
	out, err := cmd.CombinedOutput()
	return string(out), err
}
