package keys

import (
	"time"

	"slipstream/server/config"
	"slipstream/server/store"
)

// Spend is one key's use of its budgets in the current period, for the
// management API and the console. Used counts what requests in flight
// reserved (their input plus max_tokens, priced at the model's rates)
// until they settle to their real use; Reserved is that part, as this
// replica holds it (with Redis, Used is every replica's). A budget the
// key does not have reads 0 throughout.
type Spend struct {
	// Period is "daily" or "monthly" (UTC); Resets is when it ends.
	Period string
	Resets time.Time
	// Tokens (input + output) against budget.
	BudgetTokens, UsedTokens, ReservedTokens int64
	// Money against budget_usd, in nano-dollars (USD 1e-9); USD converts.
	BudgetNanos, UsedNanos, ReservedNanos int64
}

// USD converts nano-dollars to dollars, for display.
func USD(nanos int64) float64 { return float64(nanos) / 1e9 }

// Spend returns k's use of its budgets at now. With Redis it reads the
// shared counters (a GET each). It is for cold paths: it may allocate.
func (s *Set) Spend(k *Key, now time.Time) Spend {
	if k == nil {
		return Spend{}
	}
	sp := Spend{Period: k.period, BudgetTokens: k.budget, BudgetNanos: k.budgetUSD}
	if k.spent != nil {
		sp.UsedTokens, sp.ReservedTokens = k.spent.UsedHeld(now)
		sp.Resets = k.spent.Resets(now)
	}
	if k.money != nil {
		sp.UsedNanos, sp.ReservedNanos = k.money.UsedHeld(now)
		sp.Resets = k.money.Resets(now)
	}
	if sp.Resets.IsZero() {
		p := store.Daily
		if k.period == config.PeriodMonthly {
			p = store.Monthly
		}
		sp.Resets = p.End(now)
	}
	return sp
}

// Keys returns the configured keys, in configuration order. The Keys are
// the Set's own: callers must not modify them.
func (s *Set) Keys() []*Key {
	ks := make([]*Key, len(s.keys))
	for i := range s.keys {
		ks[i] = &s.keys[i]
	}
	return ks
}

// ByName returns the key configured as name, or nil.
func (s *Set) ByName(name string) *Key {
	for i := range s.keys {
		if s.keys[i].Name == name {
			return &s.keys[i]
		}
	}
	return nil
}
