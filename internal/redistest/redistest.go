// Package redistest runs a real redis-server for tests, on a free
// loopback port, without persistence.
package redistest

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Server is a redis-server started by Start.
type Server struct {
	Addr string
	bin  string
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// Start runs redis-server for the test and stops it at the test's end.
// Without the binary the test is skipped, saying why; under
// SLIPSTREAM_REQUIRE_E2E=1 (set by CI, which installs redis-server) it
// fails instead.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("SLIPSTREAM_REQUIRE_E2E") == "1" {
			t.Fatal("SLIPSTREAM_REQUIRE_E2E=1 and redis-server is not installed (apt-get install redis-server)")
		}
		t.Skip("redis-server not found on PATH; install it (apt-get install redis-server) to run the Redis tests")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Addr: ln.Addr().String(), bin: bin, dir: t.TempDir()}
	ln.Close()
	s.start(t)
	t.Cleanup(s.Stop)
	return s
}

// start runs redis-server on s.Addr and waits until it answers.
func (s *Server) start(t testing.TB) {
	t.Helper()
	_, port, _ := net.SplitHostPort(s.Addr)
	cmd := exec.Command(s.bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", s.dir, "--protected-mode", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	done := s.done
	go func() { cmd.Wait(); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for !s.ping() {
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s did not answer PING", s.Addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Restart starts a stopped server again on the same address, empty.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	s.start(t)
}

// URL is the server's redis:// URL.
func (s *Server) URL() string { return "redis://" + s.Addr }

// Stop kills the server and waits for it to exit; a stopped server
// stays stopped.
func (s *Server) Stop() {
	s.cmd.Process.Kill()
	<-s.done
}

func (s *Server) ping() bool {
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// Do sends one command in the inline protocol and returns the first line
// of the reply (for tests that look at what slipstream stored).
func (s *Server) Do(t testing.TB, args ...string) string {
	t.Helper()
	c, r := s.send(t, args...)
	defer c.Close()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(line, "$") && !strings.HasPrefix(line, "$-1") {
		line, _ = r.ReadString('\n')
	}
	return strings.TrimRight(line, "\r\n")
}

// Subscribers returns how many clients are subscribed to channel (PUBSUB
// NUMSUB), so a test can wait for a subscription instead of sleeping.
func (s *Server) Subscribers(t testing.TB, channel string) int {
	t.Helper()
	c, r := s.send(t, "PUBSUB", "NUMSUB", channel)
	defer c.Close()
	// *2, $len, the channel's name, :count
	var line string
	for range 4 {
		var err error
		if line, err = r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimRight(line, "\r\n"), ":"))
	if err != nil {
		t.Fatalf("PUBSUB NUMSUB %s: %q", channel, line)
	}
	return n
}

// send sends one command on a new connection and returns the connection
// (the caller closes it) and the reader of its reply.
func (s *Server) send(t testing.TB, args ...string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(2 * time.Second))
	var b strings.Builder
	b.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		c.Close()
		t.Fatal(err)
	}
	return c, bufio.NewReader(c)
}
