package keys

import (
	"time"
)

// moneyPrefix names a key's money budget in the store: "usd:"+name,
// counted in nano-dollars (USD 1e-9), so that Redis shares it across
// replicas exactly like the token budget ("budget:"+name).
const moneyPrefix = "usd:"

// HasBudgetUSD reports whether k has a money budget (budget_usd): its
// requests reserve their priced tokens at admission, and a model without
// a price is refused to it.
func (k *Key) HasBudgetUSD() bool { return k != nil && k.money != nil }

func moneyRefusal(k *Key, now time.Time, inFlight bool) (Refusal, time.Duration) {
	if inFlight {
		return RefusedInFlightUSD, inFlightRetry
	}
	return RefusedBudgetUSD, k.money.Resets(now).Sub(now)
}
