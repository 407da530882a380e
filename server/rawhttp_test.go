package server

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"strconv"
	"testing"

	"slipstream/internal/rawhttp"
	"slipstream/internal/testkit"
)

// rawUpstream is a loopback HTTP/1.1 server that reads each request into a
// fixed buffer and answers with reply (a complete HTTP response), so that
// it allocates nothing per request and heap measurements see only the
// proxy.
func rawUpstream(t testing.TB, reply []byte) string {
	t.Helper()
	return "http://" + testkit.Serve(t, func(c net.Conn) { serveRaw(c, reply) })
}

func serveRaw(c net.Conn, reply []byte) {
	defer c.Close()
	br := bufio.NewReaderSize(c, 64<<10)
	for {
		n, err := readRequestHead(br)
		if err != nil {
			return
		}
		if _, err := br.Discard(n); err != nil {
			return
		}
		if _, err := c.Write(reply); err != nil {
			return
		}
	}
}

// readRequestHead reads a request head and returns its Content-Length.
func readRequestHead(br *bufio.Reader) (int, error) {
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		if len(line) <= 2 {
			return n, nil
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(k, []byte("Content-Length")) {
			n, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
		}
	}
}

// rawClient sends prebuilt requests over one keep-alive connection and
// reads responses into a reused buffer.
type rawClient struct {
	c   net.Conn
	br  *bufio.Reader
	buf []byte
}

func dialRaw(t testing.TB, base string) *rawClient {
	t.Helper()
	c := rawhttp.Dial(t, base)
	return &rawClient{c: c, br: bufio.NewReaderSize(c, 64<<10), buf: make([]byte, 0, 1<<20)}
}

// rawRequest builds a POST with the body.
func rawRequest(path string, body []byte) []byte {
	b := []byte("POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n")
	return append(b, body...)
}

// do sends req and reads one response (Content-Length or chunked), returning
// its status and body (valid until the next call).
func (rc *rawClient) do(t testing.TB, req []byte) (int, []byte) {
	t.Helper()
	if _, err := rc.c.Write(req); err != nil {
		t.Fatal(err)
	}
	return rc.read(t)
}

// read reads one response, as do does.
func (rc *rawClient) read(t testing.TB) (int, []byte) {
	t.Helper()
	status, length, chunked := 0, -1, false
	for {
		line, err := rc.br.ReadSlice('\n')
		if err != nil {
			t.Fatal(err)
		}
		if status == 0 && len(line) > 12 {
			status, _ = strconv.Atoi(string(line[9:12]))
			continue
		}
		if len(line) <= 2 {
			break
		}
		k, v, _ := bytes.Cut(line, []byte(":"))
		v = bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, []byte("Content-Length")):
			length, _ = strconv.Atoi(string(v))
		case bytes.EqualFold(k, []byte("Transfer-Encoding")) && bytes.EqualFold(v, []byte("chunked")):
			chunked = true
		}
	}
	rc.buf = rc.buf[:0]
	if !chunked {
		rc.buf = append(rc.buf, make([]byte, length)...)[:length]
		if _, err := io.ReadFull(rc.br, rc.buf); err != nil {
			t.Fatal(err)
		}
		return status, rc.buf
	}
	for {
		line, err := rc.br.ReadSlice('\n')
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if n == 0 {
			rc.br.ReadSlice('\n')
			return status, rc.buf
		}
		start := len(rc.buf)
		for cap(rc.buf) < start+int(n) {
			rc.buf = append(rc.buf[:cap(rc.buf)], 0)[:start]
		}
		rc.buf = rc.buf[:start+int(n)]
		if _, err := io.ReadFull(rc.br, rc.buf[start:]); err != nil {
			t.Fatal(err)
		}
		rc.br.Discard(2)
	}
}
