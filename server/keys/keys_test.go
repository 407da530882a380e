package keys

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"slipstream/server/config"
	"slipstream/server/store"
)

func set(t *testing.T, ks ...config.Key) *Set {
	t.Helper()
	s, err := New(ks, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func digest(k string) string {
	d := sha256.Sum256([]byte(k))
	return hex.EncodeToString(d[:])
}

func TestFind(t *testing.T) {
	s := set(t,
		config.Key{Name: "clear", Key: "sk-clear"},
		config.Key{Name: "hashed", KeySHA256: digest("sk-hashed")},
	)
	f := func(presented, want string) {
		t.Helper()
		k := s.Find([]byte(presented))
		got := ""
		if k != nil {
			got = k.Name
		}
		if got != want {
			t.Fatalf("Find(%q) = %q, want %q", presented, got, want)
		}
	}
	f("sk-clear", "clear")
	f("sk-hashed", "hashed")
	f(digest("sk-hashed"), "") // the digest itself is not a key
	f("sk-clea", "")
	f("", "")
}

func TestAdmitRPM(t *testing.T) {
	s := set(t, config.Key{Name: "k", Key: "x", RPM: 5})
	k := s.Find([]byte("x"))
	now := time.Unix(1767225600, 0).Add(30 * time.Second)
	for i := 0; i < 5; i++ {
		if r, _ := s.Admit(k, now); r != Allowed {
			t.Fatalf("request %d refused: %s", i+1, r)
		}
	}
	r, wait := s.Admit(k, now)
	if r != RefusedRPM || wait <= 0 || wait > 2*time.Minute {
		t.Fatalf("6th: %s wait %s", r, wait)
	}
	if r, _ := s.Admit(k, now.Add(wait)); r != Allowed {
		t.Fatalf("after the wait: %s", r)
	}
}

func TestAdmitTPMAndBudget(t *testing.T) {
	s := set(t, config.Key{Name: "k", Key: "x", TPM: 600, Budget: 1000})
	k := s.Find([]byte("x"))
	now := time.Unix(1767225600, 0).Add(time.Hour)
	s.Charge(k, 800, 0, now) // over the minute's 600
	r, wait := s.Admit(k, now)
	if r != RefusedTPM || wait <= 0 || wait > 2*time.Minute {
		t.Fatalf("tpm: %s wait %s", r, wait)
	}
	now = now.Add(wait)
	if r, _ := s.Admit(k, now); r != Allowed {
		t.Fatalf("after the wait: %s", r)
	}
	s.Charge(k, 200, 0, now) // budget: 1000 used
	r, wait = s.Admit(k, now)
	if r != RefusedBudget || now.Add(wait) != time.Unix(1767225600, 0).Add(24*time.Hour) {
		t.Fatalf("budget: %s wait %s", r, wait)
	}
	if r, _ := s.Admit(k, now.Add(wait)); r != Allowed {
		t.Fatalf("next day: %s", r)
	}
}

// TestStateSurvivesRebuild: a set built again over the same store (a
// reload) keeps the limit state of keys that still exist.
func TestStateSurvivesRebuild(t *testing.T) {
	st := store.New()
	cfg := []config.Key{{Name: "k", Key: "x", RPM: 2}}
	now := time.Unix(1767225600, 0)
	a, _ := New(cfg, st)
	a.Admit(a.Find([]byte("x")), now)
	a.Admit(a.Find([]byte("x")), now)
	b, _ := New(cfg, st)
	if r, _ := b.Admit(b.Find([]byte("x")), now); r != RefusedRPM {
		t.Fatalf("after a rebuild: %s", r)
	}
}

// TestReserveAndSettle: a request reserves its tokens at admission; while
// the reservation holds the budget's remainder the next one is refused
// with a short wait (RefusedInFlight), not until the period's end; once
// settled to the real use the key has room again. A refused reservation
// takes back its rpm count and holds nothing.
func TestReserveAndSettle(t *testing.T) {
	s := set(t, config.Key{Name: "k", Key: "x", RPM: 5, Budget: 20})
	k := s.Find([]byte("x"))
	now := time.Unix(1767225600, 0).Add(time.Hour)
	admit := func() (Reservation, Refusal, time.Duration) {
		if r, wait := s.Admit(k, now); r != Allowed {
			return Reservation{}, r, wait
		}
		return s.Reserve(k, now, 23, 0)
	}
	first, r, _ := admit()
	if r != Allowed {
		t.Fatalf("first: %s", r)
	}
	if _, r, wait := admit(); r != RefusedInFlight || wait != time.Second {
		t.Fatalf("beside the first: %s wait %s", r, wait)
	}
	s.Settle(k, first, 8, 0, now)
	if used := k.spent.Used(now); used != 8 {
		t.Fatalf("after settling: %d used", used)
	}
	// Two requests pass Admit together; the first to reserve takes the
	// room, the other is refused and its rpm count is given back.
	for i := 0; i < 2; i++ {
		if r, _ := s.Admit(k, now); r != Allowed {
			t.Fatalf("admit %d: %s", i, r)
		}
	}
	second, r, _ := s.Reserve(k, now, 23, 0)
	if r != Allowed {
		t.Fatalf("after the first settled: %s", r)
	}
	if _, r, _ := s.Reserve(k, now, 5, 0); r != RefusedInFlight {
		t.Fatalf("reserve beside the second: %s", r)
	}
	if n := k.rate.Count(now); n != 2 {
		t.Fatalf("rpm window holds %d after a refused reservation, want 2", n)
	}
	s.Settle(k, second, 30, 0, now) // used more than it reserved
	if r, wait := s.Admit(k, now); r != RefusedBudget || wait != 23*time.Hour {
		t.Fatalf("spent: %s wait %s", r, wait)
	}
}

// TestReserveTPMSettlesAcrossSlots: a reservation made in one minute and
// settled in the next leaves the minute it was counted in, and the use is
// counted in the minute it ended.
func TestReserveTPMSettlesAcrossSlots(t *testing.T) {
	s := set(t, config.Key{Name: "k", Key: "x", TPM: 100})
	k := s.Find([]byte("x"))
	at := time.Unix(1767225600, 0)
	res, r, _ := s.Reserve(k, at, 90, 0)
	if r != Allowed || k.tokens.Count(at) != 90 {
		t.Fatalf("reserve: %s, window %d", r, k.tokens.Count(at))
	}
	end := at.Add(90 * time.Second) // half of the first minute still weighs
	s.Settle(k, res, 10, 0, end)
	if n := k.tokens.Count(end); n != 10 {
		t.Fatalf("window after settling in the next minute: %d, want 10", n)
	}
}

// TestReserveBudgetSettlesAcrossPeriods: a request reserved before
// midnight and ended after it is charged to the new day; its reservation
// went with the old one.
func TestReserveBudgetSettlesAcrossPeriods(t *testing.T) {
	s := set(t, config.Key{Name: "k", Key: "x", Budget: 1000})
	k := s.Find([]byte("x"))
	at := time.Unix(1767225600, 0).Add(-time.Second) // 23:59:59 UTC
	res, r, _ := s.Reserve(k, at, 600, 0)
	if r != Allowed || k.spent.Used(at) != 600 {
		t.Fatalf("reserve: %s, used %d", r, k.spent.Used(at))
	}
	end := at.Add(2 * time.Second)
	s.Settle(k, res, 50, 0, end)
	if used := k.spent.Used(end); used != 50 {
		t.Fatalf("the new day holds %d, want the 50 used", used)
	}
}
