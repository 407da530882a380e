package admin

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// TestHubDropsSlowSubscriber: publishing never blocks; a subscriber that
// lags past its buffer is dropped, the others keep theirs; with no
// subscriber Active is false.
func TestHubDropsSlowSubscriber(t *testing.T) {
	h := NewHub()
	if h.Active() {
		t.Fatal("active without subscribers")
	}
	slow, fast := h.subscribe([32]byte{}, false), h.subscribe([32]byte{}, false)
	if !h.Active() || h.Subscribers() != 2 {
		t.Fatal("not active with subscribers")
	}
	start := time.Now()
	for i := 0; i < subscriberBuffer+10; i++ {
		h.Publish(EventReload, Reload{OK: true})
		<-fast.ch // fast keeps up: it reads each frame as it comes
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("publishing took %v", d)
	}
	n := 0
	for range slow.ch { // closed once dropped
		n++
	}
	if n != subscriberBuffer || h.Subscribers() != 1 {
		t.Fatalf("slow subscriber got %d frames, %d subscribers left", n, h.Subscribers())
	}
	h.Close()
	if _, open := <-fast.ch; open {
		t.Fatal("Close left a subscriber's stream open")
	}
	if h.Active() || h.subscribe([32]byte{}, false) != nil {
		t.Fatal("a closed hub takes subscribers")
	}
	h.unsubscribe(slow) // dropped already: a no-op
}

func ctxWith(headers ...string) *fasthttp.RequestCtx {
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI("/admin/api/status")
	for i := 0; i+1 < len(headers); i += 2 {
		ctx.Request.Header.Set(headers[i], headers[i+1])
	}
	return &ctx
}

func TestSameOrigin(t *testing.T) {
	f := func(want bool, headers ...string) {
		t.Helper()
		if got := sameOrigin(ctxWith(headers...)); got != want {
			t.Fatalf("%q: %v, want %v", headers, got, want)
		}
	}
	f(true, "Host", "127.0.0.1:8317")
	f(true, "Host", "127.0.0.1:8317", "Origin", "http://127.0.0.1:8317")
	f(true, "Host", "LocalHost:8317", "Origin", "http://localhost:8317")
	f(true, "Host", "127.0.0.1:8317", "Sec-Fetch-Site", "same-origin")
	f(true, "Host", "127.0.0.1:8317", "Sec-Fetch-Site", "none")
	f(false, "Host", "127.0.0.1:8317", "Origin", "http://127.0.0.1:8318")
	f(false, "Host", "127.0.0.1:8317", "Origin", "https://127.0.0.1:8317")
	f(false, "Host", "127.0.0.1:8317", "Origin", "http://127.0.0.1:8317.evil.example")
	f(false, "Host", "127.0.0.1:8317", "Origin", "null")
	f(false, "Host", "127.0.0.1:8317", "Sec-Fetch-Site", "cross-site")
	f(false, "Host", "127.0.0.1:8317", "Sec-Fetch-Site", "same-site")
}

// TestHubRevoke: a reload that no longer admits a feed's credential ends
// that feed; the others keep theirs.
func TestHubRevoke(t *testing.T) {
	h := NewHub()
	ops := h.subscribe(sha256.Sum256([]byte("adm-ops-0123456789")), true)
	ci := h.subscribe(sha256.Sum256([]byte("adm-ci-0123456789")), true)
	anon := h.subscribe([32]byte{}, false)
	next := New(Config{Tokens: []Token{{Name: "ci", Secret: "adm-ci-0123456789"}}, Backend: loopbackOnly{loop: true}, Hub: h})
	if n := h.Revoke(next.Admits); n != 2 {
		t.Fatalf("revoked %d feeds, want 2 (the removed token's and the tokenless one)", n)
	}
	for _, s := range []*subscriber{ops, anon} {
		if _, open := <-s.ch; open {
			t.Fatal("a revoked feed stays open")
		}
	}
	h.Publish(EventReload, Reload{OK: true})
	if _, open := <-ci.ch; !open || h.Subscribers() != 1 {
		t.Fatal("a feed whose token stays was ended")
	}
	tokenless := New(Config{Backend: loopbackOnly{loop: true}, Hub: h})
	if n := h.Revoke(tokenless.Admits); n != 1 {
		t.Fatalf("a reload that removes every token revoked %d feeds, want 1", n)
	}
}

// loopbackOnly is a Backend whose Loopback answers as it says; nothing
// else of it is called.
type loopbackOnly struct {
	Backend
	loop bool
}

func (b loopbackOnly) Loopback() bool { return b.loop }

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"": true, "127.0.0.1": true, "127.0.0.1:8317": true, "127.9.8.7:1": true, "[::1]:8317": true, "[::1]": true,
		"localhost": true, "LocalHost:8317": true, "app.localhost:8317": true,
		"rebind.attacker.example:8317": false, "10.0.0.1:8317": false, "0.0.0.0:8317": false, "[::]:8317": false,
		"localhost.attacker.example": false, "127.0.0.1.nip.io:8317": false, "[::1": false, "127.0.0.1:x": false,
	} {
		if got := loopbackHost([]byte(host)); got != want {
			t.Errorf("loopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestTokenSet(t *testing.T) {
	s := newTokenSet([]Token{{Name: "ops", Secret: "adm-0123456789abcdef"}, {Name: "ci", Secret: "adm-fedcba9876543210"}})
	f := func(presented, want string) {
		t.Helper()
		if got := s.find([]byte(presented)); got != want {
			t.Fatalf("%q: %q, want %q", presented, got, want)
		}
	}
	f("adm-0123456789abcdef", "ops")
	f("adm-fedcba9876543210", "ci")
	f("adm-0123456789abcde", "")
	f("adm-0123456789abcdeff", "")
	f("", "")
}

func TestUsageQuery(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	f := func(query string, want UsageQuery, wantErr bool) {
		t.Helper()
		var a fasthttp.Args
		a.Parse(query)
		got, err := usageQuery(&a, now)
		if (err != nil) != wantErr {
			t.Fatalf("%q: error %v", query, err)
		}
		if !wantErr && (got.By != want.By || !got.From.Equal(want.From) || !got.To.Equal(want.To)) {
			t.Fatalf("%q: %+v, want %+v", query, got, want)
		}
	}
	f("", UsageQuery{By: "day", From: now.AddDate(0, 0, -7), To: now}, false)
	f("by=key&from=2026-11-01&to=2026-11-02", UsageQuery{By: "key", From: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)}, false)
	f("by=provider&from=2026-11-30T10:00:00Z", UsageQuery{By: "provider", From: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), To: now}, false)
	f("by=secret", UsageQuery{}, true)
	f("from=yesterday", UsageQuery{}, true)
	f("from=2026-12-02&to=2026-12-01", UsageQuery{}, true)
	// The ledger reads a zero time as an open end, and JSON cannot carry a
	// year outside 0-9999: such bounds are refused, not answered wrongly.
	f("from=0000-01-01&to=0001-01-01", UsageQuery{}, true)
	f("from=1969-12-31&to=2026-01-01", UsageQuery{}, true)
	f("from=1970-01-01T00:00:00%2B01:00&to=2026-01-01", UsageQuery{}, true)
	f("from=2026-01-01&to=9999-12-31T23:59:59-23:59", UsageQuery{}, true)
	f("from=1970-01-01&to=9999-12-31", UsageQuery{By: "day", From: time.Unix(0, 0).UTC(), To: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)}, false)
}

func TestOwns(t *testing.T) {
	f := func(path string, want bool) {
		t.Helper()
		if got := Owns([]byte(path)); got != want {
			t.Fatalf("%q: %v", path, got)
		}
	}
	f("/admin/api/status", true)
	f("/admin", true)
	f("/console/", true)
	f("/console", true)
	f("/v1/messages", false)
	f("/administrator", false)
	f("/", false)
	long := []byte("/v1beta/models/gemini-2.5-pro-preview-with-a-long-name:streamGenerateContent")
	if n := testing.AllocsPerRun(100, func() { Owns(long) }); n != 0 {
		t.Fatalf("Owns allocates %v", n)
	}
}
