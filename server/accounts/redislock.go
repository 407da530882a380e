package accounts

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/rueidis"
)

// RedisLock is a Locker shared by replicas through Redis: one key per
// account (SET NX with an expiry, deleted only by its holder), so one
// replica at a time refreshes an account, and the others, once they hold
// the lock, find the refreshed tokens in the file. It uses rueidis, the
// client the shared store uses; the client is built on the first lock.
type RedisLock struct {
	url, prefix string
	// TTL bounds how long a crashed holder keeps the lock. Default 60 s.
	TTL time.Duration

	mu     sync.Mutex
	client rueidis.Client
}

// NewRedisLock returns the lock over the Redis at rawURL
// (redis://[user:pass@]host:port[/db], rediss:// or unix:///path).
func NewRedisLock(rawURL, prefix string) *RedisLock {
	return &RedisLock{url: rawURL, prefix: prefix, TTL: time.Minute}
}

// release deletes the lock key only when it still holds this holder's
// token (an expired lock may be someone else's by now).
var release = rueidis.NewLuaScript("if redis.call('get',KEYS[1])==ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end")

func (l *RedisLock) conn() (rueidis.Client, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.client != nil {
		return l.client, nil
	}
	opt, err := rueidis.ParseURL(l.url)
	if err != nil {
		return nil, fmt.Errorf("cannot parse redis.url")
	}
	opt.DisableCache = true
	opt.Dialer.Timeout = 5 * time.Second
	c, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, fmt.Errorf("cannot reach redis for the account lock: %w", err)
	}
	l.client = c
	return c, nil
}

// Lock implements Locker.
func (l *RedisLock) Lock(ctx context.Context, name string) (func(), error) {
	c, err := l.conn()
	if err != nil {
		return nil, err
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	tok := hex.EncodeToString(b[:])
	key := l.prefix + ":account-refresh:" + name
	ttl := strconv.FormatInt(l.TTL.Milliseconds(), 10)
	for {
		err := c.Do(ctx, c.B().Arbitrary("SET").Keys(key).Args(tok, "NX", "PX", ttl).Build()).Error()
		if err == nil {
			break
		}
		if !rueidis.IsRedisNil(err) {
			return nil, fmt.Errorf("cannot take the account lock: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = release.Exec(ctx, c, []string{key}, []string{tok}).Error() // an expired lock needs no release
	}, nil
}

// Close closes the Redis client.
func (l *RedisLock) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.client != nil {
		l.client.Close()
		l.client = nil
	}
}
