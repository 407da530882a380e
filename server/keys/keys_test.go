package keys

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"slipstream/server/config"
)

func set(t *testing.T, ks ...config.Key) *Set {
	t.Helper()
	s, err := New(ks)
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
	now := time.Unix(1767225600, 0).UnixNano()
	for i := 0; i < 5; i++ {
		if r, _ := s.Admit(k, now); r != Allowed {
			t.Fatalf("request %d refused: %s", i+1, r)
		}
	}
	r, wait := s.Admit(k, now)
	if r != RefusedRPM || wait != 12*time.Second {
		t.Fatalf("6th: %s wait %s", r, wait)
	}
	if r, _ := s.Admit(k, now+int64(12*time.Second)); r != Allowed {
		t.Fatalf("after refill: %s", r)
	}
}

func TestAdmitTPMAndBudget(t *testing.T) {
	s := set(t, config.Key{Name: "k", Key: "x", TPM: 600, Budget: 1000})
	k := s.Find([]byte("x"))
	now := time.Unix(1767225600, 0).UnixNano() + int64(time.Hour)
	s.Charge(k, 800, now) // 600 - 800: 200 in debt
	r, wait := s.Admit(k, now)
	if r != RefusedTPM || wait != 20*time.Second {
		t.Fatalf("tpm: %s wait %s", r, wait)
	}
	now += int64(20 * time.Second)
	if r, _ := s.Admit(k, now); r != Allowed {
		t.Fatalf("after refill: %s", r)
	}
	s.Charge(k, 200, now) // budget: 1000 used
	now += int64(time.Minute)
	r, wait = s.Admit(k, now)
	if r != RefusedBudget || wait != 23*time.Hour-80*time.Second {
		t.Fatalf("budget: %s wait %s", r, wait)
	}
	if r, _ := s.Admit(k, now+int64(wait)); r != Allowed {
		t.Fatalf("next day: %s", r)
	}
}

func TestPeriod(t *testing.T) {
	at := func(s string) int64 {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.UnixNano()
	}
	p1, next := period(at("2026-01-31T23:00:00Z"), true)
	p2, _ := period(at("2026-02-01T00:00:00Z"), true)
	if p1 == p2 || next != at("2026-02-01T00:00:00Z") {
		t.Fatalf("monthly: %d %d next %d", p1, p2, next)
	}
	d1, dnext := period(at("2026-03-05T10:00:00Z"), false)
	d2, _ := period(at("2026-03-06T00:00:00Z"), false)
	if d1 == d2 || dnext != at("2026-03-06T00:00:00Z") {
		t.Fatal("daily")
	}
}
