package store

import (
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
