package store

import (
	"log"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"slipstream/internal/redistest"
	"slipstream/internal/testkit"
	"slipstream/server/provider"
)

func open(t *testing.T, url string) *Store {
	t.Helper()
	s, err := Open(Options{URL: url, Prefix: "t"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	testkit.WaitFor(t, 5*time.Second, "the store connects", s.Up)
	return s
}

// TestRedisSharedStateAndOutage: two stores on one redis-server share an
// rpm window of 5 (the sixth take is refused, whichever replica asks) and
// a budget; a cooldown set on one reaches the other, and so does a
// forgotten credential; usage totals add up
// in Redis. With redis-server gone both answer from local state at once,
// and no take fails for the outage.
func TestRedisSharedStateAndOutage(t *testing.T) {
	rs := redistest.Start(t)
	a, b := open(t, rs.URL()), open(t, rs.URL())
	wa, wb := a.Window("rpm:alice", time.Minute), b.Window("rpm:alice", time.Minute)
	now := time.Now()
	for i := 0; i < 5; i++ {
		w := wa
		if i%2 == 1 {
			w = wb
		}
		if ok, _ := w.Take(now, 1, 5); !ok {
			t.Fatalf("take %d refused", i+1)
		}
	}
	if ok, retry := wb.Take(now, 1, 5); ok || retry <= 0 || retry > 2*time.Minute {
		t.Fatalf("the 6th take across replicas: ok=%v retry=%v", ok, retry)
	}
	// Tokens counted after a response (tpm) reach the other replica.
	ta, tb := a.Window("tpm:alice", time.Minute), b.Window("tpm:alice", time.Minute)
	ta.Add(now, 900)
	testkit.WaitFor(t, 5*time.Second, "tpm spent on a is seen by b", func() bool { ok, _ := tb.Take(time.Now(), 200, 1000); return !ok })

	ba, bb := a.Budget("budget:alice", Daily), b.Budget("budget:alice", Daily)
	ba.Add(now, 300)
	bb.Add(now, 200)
	testkit.WaitFor(t, 5*time.Second, "budget total 500 on both", func() bool { return ba.Used(time.Now()) == 500 && bb.Used(time.Now()) == 500 })

	la, lb := provider.NewLocal(), provider.NewLocal()
	cda, cdb := a.Cooldowns(la), b.Cooldowns(lb)
	testkit.WaitFor(t, 5*time.Second, "both replicas subscribed to the cooldowns", func() bool { return rs.Subscribers(t, "t:cooldowns") == 2 })
	until := cda.Cool(11, 12, time.Now().UnixNano(), provider.Backoff{Base: 30 * time.Second})
	testkit.WaitFor(t, 5*time.Second, "the cooldown reached the other replica", func() bool { return cdb.Until(11, 12, time.Now().UnixNano()) >= until-int64(time.Second) })
	// A credential forgotten on one replica (its provider moved) is
	// forgotten on the other, for every model.
	cda.Cool(11, 13, time.Now().UnixNano(), provider.Backoff{Base: 30 * time.Second})
	testkit.WaitFor(t, 5*time.Second, "the second cooldown reached the other replica", func() bool { return cdb.Until(11, 13, time.Now().UnixNano()) > 0 })
	cda.Forget(11)
	testkit.WaitFor(t, 5*time.Second, "the forgotten credential is forgotten on the other replica", func() bool { return cdb.Until(11, 12, 0) == 0 && cdb.Until(11, 13, 0) == 0 })
	if cda.Until(11, 12, 0) != 0 {
		t.Fatal("the forgetting replica still rests the credential")
	}

	a.Usage("alice").Add([5]int64{10, 3})
	b.Usage("alice").Add([5]int64{5, 1})
	testkit.WaitFor(t, 5*time.Second, "usage totals add up in Redis", func() bool { return rs.Do(t, "HGET", "t:usage:alice", "input") == "15" })

	rs.Stop()
	start := time.Now()
	w := a.Window("rpm:bob", time.Minute)
	for i := 0; i < 20; i++ {
		if ok, _ := w.Take(time.Now(), 1, 1000); !ok {
			t.Fatal("a take failed because redis is down")
		}
		bb.Used(time.Now())
		ta.Add(time.Now(), 1)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("60 operations with redis down took %v: the outage is not short-circuited", d)
	}
	if a.Up() || b.Up() {
		t.Fatal("the stores still think redis is up")
	}
}

// TestRedisWindowUnderConcurrency: many concurrent takes from two
// replicas never pass more than the limit together (the check and the
// count are one script in Redis).
func TestRedisWindowUnderConcurrency(t *testing.T) {
	rs := redistest.Start(t)
	a, b := open(t, rs.URL()), open(t, rs.URL())
	ws := [2]*Window{a.Window("rpm:crowd", time.Minute), b.Window("rpm:crowd", time.Minute)}
	var passed atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 80; i++ {
		wg.Add(1)
		go func(w *Window) {
			defer wg.Done()
			if ok, _ := w.Take(time.Now(), 1, 20); ok {
				passed.Add(1)
			}
		}(ws[i%2])
	}
	wg.Wait()
	if n := passed.Load(); n != 20 {
		t.Fatalf("%d of 80 concurrent takes passed a limit of 20", n)
	}
}

// TestRedisReserveUnderConcurrency: 80 concurrent reservations of 5
// tokens from two replicas against a limit of 20 pass 4 together, for a
// budget and for a window (each reservation is one script: checked and
// counted at once); settled to 2 tokens each, Redis holds 8, and the
// room is back.
func TestRedisReserveUnderConcurrency(t *testing.T) {
	rs := redistest.Start(t)
	a, b := open(t, rs.URL()), open(t, rs.URL())
	now := time.Now()
	type reserver struct {
		reserve func(now time.Time) bool
		settle  func(at, now time.Time)
	}
	crowd := func(what string, rs [2]reserver) {
		t.Helper()
		var passed [2]atomic.Int64 // per replica: each settles its own
		var wg sync.WaitGroup
		for i := 0; i < 80; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				if rs[i].reserve(now) {
					passed[i].Add(1)
				}
			}(i % 2)
		}
		wg.Wait()
		if n := passed[0].Load() + passed[1].Load(); n != 4 {
			t.Fatalf("%s: %d of 80 concurrent reservations of 5 passed a limit of 20, want 4", what, n)
		}
		for i := range rs {
			for n := passed[i].Load(); n > 0; n-- {
				rs[i].settle(now, now)
			}
		}
	}
	ba, bb := a.Budget("budget:crowd", Daily), b.Budget("budget:crowd", Daily)
	budget := func(bu *Budget) reserver {
		return reserver{
			reserve: func(now time.Time) bool { ok, _ := bu.Reserve(now, 5, 20); return ok },
			settle:  func(at, now time.Time) { bu.Settle(at, now, 5, 2) },
		}
	}
	crowd("budget", [2]reserver{budget(ba), budget(bb)})
	testkit.WaitFor(t, 5*time.Second, "the budget holds the 8 tokens used", func() bool { return ba.Used(time.Now()) == 8 && bb.Used(time.Now()) == 8 })

	wa, wb := a.Window("tpm:crowd", time.Minute), b.Window("tpm:crowd", time.Minute)
	window := func(w *Window) reserver {
		return reserver{
			reserve: func(now time.Time) bool { ok, _ := w.Reserve(now, 5, 20); return ok },
			settle:  func(at, now time.Time) { w.Settle(at, now, 5, 2) },
		}
	}
	crowd("window", [2]reserver{window(wa), window(wb)})
	testkit.WaitFor(t, 5*time.Second, "the window has room again once settled", func() bool { ok, _ := wa.Reserve(now, 12, 20); return ok })
}

// TestRedisPauseKeepsCounts: a Redis operation that times out pauses the
// link for pauseOnError. What is counted meanwhile reaches Redis once the
// pause ends: the settlement of a reservation Redis holds, and a
// reservation made in local state alone with its settlement. So Redis
// ends up holding what was used, 4+3, neither the first reservation
// (settlements dropped) nor 4+3-10 (a settlement of a reservation Redis
// never saw).
func TestRedisPauseKeepsCounts(t *testing.T) {
	rs := redistest.Start(t)
	a := open(t, rs.URL())
	now := time.Now()
	bu, win := a.Budget("budget:pause", Daily), a.Window("tpm:pause", time.Minute)
	type limit struct {
		what    string
		key     string
		reserve func() bool
		settle  func(used int64)
	}
	limits := []limit{
		{"budget", "t:budget:budget:pause:" + strconv.FormatInt(Daily.index(now), 10),
			func() bool { ok, _ := bu.Reserve(now, 10, 100); return ok },
			func(used int64) { bu.Settle(now, now, 10, used) }},
		{"window", "t:win:tpm:pause:" + strconv.FormatInt(now.UnixNano()/int64(time.Minute), 10),
			func() bool { ok, _ := win.Reserve(now, 10, 100); return ok },
			func(used int64) { win.Settle(now, now, 10, used) }},
	}
	for _, l := range limits {
		if !l.reserve() || rs.Do(t, "GET", l.key) != "10" {
			t.Fatalf("%s: the reservation did not reach redis", l.what)
		}
	}
	rs.Do(t, "CLIENT", "PAUSE", "700", "ALL")
	bu.Used(now) // its GET times out: the link pauses
	if a.Up() {
		t.Fatal("a timed-out operation did not pause the link")
	}
	for _, l := range limits {
		l.settle(4)
		if !l.reserve() {
			t.Fatalf("%s: a reservation in local state was refused", l.what)
		}
		l.settle(3)
	}
	if n := a.Pending(); n < 5 {
		t.Fatalf("%d writes wait for redis during the pause, want at least 5 of 6 (the sender holds one)", n)
	}
	for _, l := range limits {
		testkit.WaitFor(t, 10*time.Second, l.what+" holds 7 in redis", func() bool { return rs.Do(t, "GET", l.key) == "7" })
	}
	if n := a.Pending(); n != 0 {
		t.Fatalf("%d writes still wait once redis holds them all", n)
	}
}

// TestRedisOutageCountsArriveAfterRestart: counts made while redis-server
// is gone (it refuses connections, so they never reached it) are sent
// when it is back, in order: a budget's reservation and settlement, a
// plain add, and usage totals.
func TestRedisOutageCountsArriveAfterRestart(t *testing.T) {
	rs := redistest.Start(t)
	a := open(t, rs.URL())
	now := time.Now()
	bu := a.Budget("budget:gone", Daily)
	key := "t:budget:budget:gone:" + strconv.FormatInt(Daily.index(now), 10)
	rs.Stop()
	// A read notices the outage (a write into the dying connection could
	// not tell whether it arrived, and would be taken as arrived).
	testkit.WaitFor(t, 5*time.Second, "the store notices redis is gone", func() bool { bu.Used(now); return !a.Up() })
	if ok, _ := bu.Reserve(now, 10, 100); !ok {
		t.Fatal("a reservation was refused because redis is gone")
	}
	bu.Settle(now, now, 10, 6)
	bu.Add(now, 5)
	a.Usage("gone").Add([5]int64{7, 2})
	rs.Restart(t)
	testkit.WaitFor(t, 15*time.Second, "the outage's budget use reaches redis", func() bool { return rs.Do(t, "GET", key) == "11" })
	testkit.WaitFor(t, 5*time.Second, "the outage's usage reaches redis", func() bool { return rs.Do(t, "HGET", "t:usage:gone", "input") == "7" })
}

// TestRedisCloseSendsQueued: Close sends what is still queued before it
// closes the link, so a replica that shuts down leaves no reservation
// unsettled in Redis.
func TestRedisCloseSendsQueued(t *testing.T) {
	rs := redistest.Start(t)
	s, err := Open(Options{URL: rs.URL(), Prefix: "t"})
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 5*time.Second, "the store connects", s.Up)
	now := time.Now()
	bu := s.Budget("budget:close", Daily)
	for range 500 {
		bu.Add(now, 1)
	}
	s.Close()
	if got := rs.Do(t, "GET", "t:budget:budget:close:"+strconv.FormatInt(Daily.index(now), 10)); got != "500" {
		t.Fatalf("redis holds %q after Close, want 500", got)
	}
}

// TestRedisFullQueueWarns: with Redis unreachable, writes wait in the
// queue; past queueLen each one dropped counts as an error, and one
// warning says so.
func TestRedisFullQueueWarns(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // a port that refuses connections
	var logs testkit.Buffer
	var errs atomic.Int64
	s, err := Open(Options{URL: "redis://" + addr, Prefix: "t", Log: log.New(&logs, "", 0), OnError: func() { errs.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bu := s.Budget("budget:full", Daily)
	now := time.Now()
	for range queueLen + 10 {
		bu.Add(now, 1)
	}
	if s.remote.dropped.Load() < 9 || errs.Load() < 9 {
		t.Fatalf("dropped %d, errors %d: the writes past a full queue are not counted", s.remote.dropped.Load(), errs.Load())
	}
	if n := strings.Count(logs.String(), "redis write queue is full"); n != 1 {
		t.Fatalf("%d warnings of a full queue, want 1:\n%s", n, logs.String())
	}
	if bu.Used(now) != queueLen+10 {
		t.Fatalf("local state holds %d, want %d", bu.Used(now), queueLen+10)
	}
}
