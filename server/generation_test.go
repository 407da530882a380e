package server

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// TestLateReleaseAfterReuse: an owner that releases its exchange a second
// time, after the pool handed the exchange to the next request, must be
// caught (a panic in tests) and must leave the next request's state alone.
func TestLateReleaseAfterReuse(t *testing.T) {
	up := newUpstream(t, &recorder{reply: chatReply})
	cfg := parseConfig(t, sameConfig, up.URL)
	_, s := serveConfigServer(t, cfg, nil)
	rt, _, _ := match([]byte("POST"), []byte("/v1/messages"))
	var ctx, next fasthttp.RequestCtx
	var stale, live *exchange
	var gen uint32
	for i := 0; i < 1000 && live == nil; i++ {
		size, _ := s.admit(&ctx, rt.dialect)
		x := acquireExchange(s, &ctx, rt, nil, size)
		gen = x.owner()
		x.releaseOnce(gen)
		size, _ = s.admit(&next, rt.dialect)
		y := acquireExchange(s, &next, rt, nil, size)
		if y == x {
			stale, live = x, y
			break
		}
		y.releaseOnce(y.owner())
	}
	if live == nil {
		t.Skip("the pool never handed an exchange back")
	}
	live.body = []byte(`{"live":true}`)
	panicked := func() (p any) {
		defer func() { p = recover() }()
		stale.releaseOnce(gen) // the first request's owner, late
		return nil
	}()
	if live.s != s || live.ctx != &next || string(live.body) != `{"live":true}` {
		t.Errorf("the late release freed the next request's exchange (s %p ctx %p body %q)", live.s, live.ctx, live.body)
	}
	if panicked == nil {
		t.Errorf("the late release after reuse went unnoticed")
	} else {
		doubleReleases.Add(-1) // this test's own
	}
	if live.s == s {
		live.releaseOnce(live.owner())
	}
	waitIdle(t, s)
}
