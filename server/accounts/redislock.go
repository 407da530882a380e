package accounts

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// RedisLock is a Locker shared by replicas through Redis: one key per
// account (SET NX with an expiry, released only by its holder), so one
// replica at a time refreshes an account and the others, once they get
// the lock, find the refreshed tokens in the file. Refreshes are rare,
// so each lock uses its own short connection: a few commands of the
// RESP protocol, written here rather than bringing a Redis client
// library in for them.
type RedisLock struct {
	url    string
	prefix string
	// TTL bounds how long a crashed holder keeps the lock. Default 60 s.
	TTL time.Duration
}

// NewRedisLock returns the lock over the Redis at rawURL
// (redis://[user:pass@]host:port[/db], rediss:// or unix:///path).
func NewRedisLock(rawURL, prefix string) *RedisLock {
	return &RedisLock{url: rawURL, prefix: prefix, TTL: time.Minute}
}

// Lock implements Locker.
func (l *RedisLock) Lock(ctx context.Context, name string) (func(), error) {
	c, err := l.dial(ctx)
	if err != nil {
		return nil, err
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	tok := hex.EncodeToString(b[:])
	key := l.prefix + ":account-refresh:" + name
	for {
		_ = c.conn.SetDeadline(time.Now().Add(5 * time.Second))
		r, err := c.do("SET", key, tok, "NX", "PX", strconv.FormatInt(l.TTL.Milliseconds(), 10))
		if err != nil {
			c.conn.Close()
			return nil, err
		}
		if r == "OK" {
			break
		}
		select {
		case <-ctx.Done():
			c.conn.Close()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return func() {
		_ = c.conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = c.do("EVAL", "if redis.call('get',KEYS[1])==ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end", "1", key, tok) // an expired lock needs no release
		c.conn.Close()
	}, nil
}

type respConn struct {
	conn net.Conn
	r    *bufio.Reader
}

func (l *RedisLock) dial(ctx context.Context) (*respConn, error) {
	u, err := url.Parse(l.url)
	if err != nil {
		return nil, errors.New("cannot parse redis.url")
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	var conn net.Conn
	switch u.Scheme {
	case "unix":
		conn, err = d.DialContext(ctx, "unix", u.Path)
	case "rediss":
		td := &tls.Dialer{NetDialer: d, Config: &tls.Config{ServerName: u.Hostname()}}
		conn, err = td.DialContext(ctx, "tcp", hostPort(u))
	default:
		conn, err = d.DialContext(ctx, "tcp", hostPort(u))
	}
	if err != nil {
		return nil, fmt.Errorf("cannot reach redis for the account lock: %w", err)
	}
	c := &respConn{conn: conn, r: bufio.NewReader(conn)}
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if pw, ok := u.User.Password(); ok {
		args := []string{"AUTH", pw}
		if user := u.User.Username(); user != "" {
			args = []string{"AUTH", user, pw}
		}
		if _, err := c.do(args...); err != nil {
			conn.Close()
			return nil, errors.New("redis refused the credentials of redis.url")
		}
	}
	if db := strings.TrimPrefix(u.Path, "/"); db != "" && u.Scheme != "unix" {
		if _, err := c.do("SELECT", db); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return c, nil
}

func hostPort(u *url.URL) string {
	if u.Port() == "" {
		return net.JoinHostPort(u.Hostname(), "6379")
	}
	return u.Host
}

// do sends one command and reads a simple, integer, bulk or nil reply.
func (c *respConn) do(args ...string) (string, error) {
	var b []byte
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, "\r\n"...)
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, "\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	if _, err := c.conn.Write(b); err != nil {
		return "", fmt.Errorf("redis: %w", err)
	}
	line, err := c.r.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("redis: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("redis: empty reply")
	}
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return "", errors.New("redis: " + clip(line[1:]))
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", nil // nil bulk
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return "", fmt.Errorf("redis: %w", err)
		}
		return string(buf[:n]), nil
	}
	return "", errors.New("redis: unexpected reply")
}
