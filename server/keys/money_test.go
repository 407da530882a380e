package keys

import (
	"testing"
	"time"

	"slipstream/server/config"
)

// TestMoneyBudget: budget_usd reserves nano-dollars beside the tokens;
// beside a reservation holding its remainder the next request waits a
// second (RefusedInFlightUSD); once settled past the budget the key is
// refused until the period ends (RefusedBudgetUSD), with the money
// budget named in the message.
func TestMoneyBudget(t *testing.T) {
	s := set(t, config.Key{Name: "k", Key: "x", BudgetUSD: 1_000_000, Period: config.PeriodMonthly}) // $1
	k := s.Find([]byte("x"))
	if !k.HasBudgetUSD() || !k.Charged() || !k.Limited() {
		t.Fatal("a budget_usd key is not charged")
	}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	admit := func(nanos int64) (Reservation, Refusal, time.Duration) {
		if r, wait := s.Admit(k, now); r != Allowed {
			return Reservation{}, r, wait
		}
		return s.Reserve(k, now, 100, nanos)
	}
	first, r, _ := admit(2e9) // reserves more than the whole budget
	if r != Allowed || first.Nanos() != 2e9 || first.Tokens() != 100 {
		t.Fatalf("first: %s %+v", r, first)
	}
	if _, r, wait := admit(1); r != RefusedInFlightUSD || wait != time.Second {
		t.Fatalf("beside the first: %s wait %s", r, wait)
	}
	s.Settle(k, first, 100, 400_000_000, now) // $0.40
	sp := s.Spend(k, now)
	if sp.UsedNanos != 4e8 || sp.ReservedNanos != 0 || sp.BudgetNanos != 1e9 || sp.Period != "monthly" ||
		!sp.Resets.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("spend after settling: %+v", sp)
	}
	second, r, _ := admit(5e8)
	if r != Allowed {
		t.Fatalf("second: %s", r)
	}
	if sp := s.Spend(k, now); sp.UsedNanos != 9e8 || sp.ReservedNanos != 5e8 {
		t.Fatalf("spend in flight: %+v", sp)
	}
	s.Settle(k, second, 100, 700_000_000, now) // $1.10 in all
	r, wait := s.Admit(k, now)
	if r != RefusedBudgetUSD || now.Add(wait) != time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC) {
		t.Fatalf("spent: %s wait %s", r, wait)
	}
	if msg := r.String(); msg != "this API key has spent its money budget (budget_usd) for this period" {
		t.Fatalf("message %q", msg)
	}
	if r, _ := s.Admit(k, time.Date(2027, 1, 1, 0, 0, 1, 0, time.UTC)); r != Allowed {
		t.Fatalf("next month: %s", r)
	}
}

// TestMoneyRefusalGivesTokensBack: a request refused by budget_usd at
// Reserve holds none of the token budget and is taken out of the rpm
// window; a request refused by the token budget holds no money.
func TestMoneyRefusalGivesTokensBack(t *testing.T) {
	s := set(t, config.Key{Name: "k", Key: "x", RPM: 10, Budget: 1000, BudgetUSD: 1})
	k := s.Find([]byte("x"))
	now := time.Unix(1767225600, 0).Add(time.Hour)
	s.Charge(k, 0, 1000, now) // the money budget ($0.000001) is spent
	s.Admit(k, now)
	if _, r, _ := s.Reserve(k, now, 50, 10); r != RefusedBudgetUSD {
		t.Fatalf("reserve: %s", r)
	}
	if sp := s.Spend(k, now); sp.UsedTokens != 0 || sp.UsedNanos != 1000 {
		t.Fatalf("after a money refusal: %+v", sp)
	}
	if n := k.rate.Count(now); n != 0 {
		t.Fatalf("rpm window holds %d", n)
	}
	s2 := set(t, config.Key{Name: "j", Key: "y", Budget: 10, BudgetUSD: 1e6})
	j := s2.Find([]byte("y"))
	s2.Charge(j, 10, 0, now)
	if _, r, _ := s2.Reserve(j, now, 5, 77); r != RefusedBudget {
		t.Fatalf("reserve j: %s", r)
	}
	if sp := s2.Spend(j, now); sp.UsedNanos != 0 || sp.UsedTokens != 10 {
		t.Fatalf("after a token refusal: %+v", sp)
	}
}

// TestSpendWithoutBudgets: a key without budgets reads zeros and the
// end of its (daily) period; ByName and Keys find keys.
func TestSpendWithoutBudgets(t *testing.T) {
	s := set(t, config.Key{Name: "a", Key: "x"}, config.Key{Name: "b", Key: "y", Budget: 5})
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	sp := s.Spend(s.ByName("a"), now)
	if sp.BudgetNanos != 0 || sp.UsedTokens != 0 || !sp.Resets.Equal(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("spend %+v", sp)
	}
	if ks := s.Keys(); len(ks) != 2 || ks[1] != s.ByName("b") || s.ByName("c") != nil {
		t.Fatal("Keys / ByName")
	}
	if s.Spend(nil, now) != (Spend{}) {
		t.Fatal("nil key")
	}
	if USD(1_500_000_000) != 1.5 {
		t.Fatal("USD")
	}
}
