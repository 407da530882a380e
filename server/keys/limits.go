package keys

import (
	"time"
)

// Refusal says which limit refused a request.
type Refusal uint8

const (
	Allowed Refusal = iota
	RefusedRPM
	RefusedTPM
	RefusedBudget
	// RefusedInFlight: the budget's remainder is reserved by the key's
	// requests in flight; it frees up as they finish.
	RefusedInFlight
	// RefusedBudgetUSD, RefusedInFlightUSD: the same for budget_usd.
	RefusedBudgetUSD
	RefusedInFlightUSD
)

// inFlightRetry is the Retry-After of RefusedInFlight: reservations are
// settled when their requests end, which slipstream cannot foresee.
const inFlightRetry = time.Second

// String is the refusal's message for the client.
func (r Refusal) String() string {
	switch r {
	case RefusedRPM:
		return "this API key is over its requests-per-minute limit (rpm)"
	case RefusedTPM:
		return "this API key is over its tokens-per-minute limit (tpm)"
	case RefusedBudget:
		return "this API key has used its token budget for this period"
	case RefusedInFlight:
		return "this API key's remaining token budget is reserved by its requests in flight (input plus max_tokens each); retry when they finish"
	case RefusedBudgetUSD:
		return "this API key has spent its money budget (budget_usd) for this period"
	case RefusedInFlightUSD:
		return "this API key's remaining money budget (budget_usd) is reserved by its requests in flight (input plus max_tokens each, at the model's prices); retry when they finish"
	}
	return "allowed"
}

// Admit checks k's limits for one request at now and counts the request
// in its rpm window. A refusal comes with how long to wait. It reserves
// no tokens: a key already at its tpm or its budget is refused here, before
// the caller spends anything on counting the request's tokens for Reserve.
// Admit allocates nothing.
func (s *Set) Admit(k *Key, now time.Time) (Refusal, time.Duration) {
	if !k.Limited() {
		return Allowed, 0
	}
	if k.spent != nil {
		if ok, inFlight := k.spent.Check(now, k.budget); !ok {
			return budgetRefusal(k, now, inFlight)
		}
	}
	if k.money != nil {
		if ok, inFlight := k.money.Check(now, k.budgetUSD); !ok {
			return moneyRefusal(k, now, inFlight)
		}
	}
	if k.tokens != nil {
		if ok, wait := k.tokens.Below(now, k.tpm); !ok {
			return RefusedTPM, wait
		}
	}
	return s.AdmitRate(k, now)
}

// AdmitCount admits a token count request (count_tokens, input_tokens,
// countTokens) at now: it spends no provider tokens, so only k's rpm
// applies, unless k is configured with count_tokens_exempt.
func (s *Set) AdmitCount(k *Key, now time.Time) (Refusal, time.Duration) {
	if k == nil || k.countExempt {
		return Allowed, 0
	}
	return s.AdmitRate(k, now)
}

// AdmitRate counts one request at now in k's rpm window alone, with
// Admit's answer.
func (s *Set) AdmitRate(k *Key, now time.Time) (Refusal, time.Duration) {
	if k != nil && k.rate != nil {
		if ok, wait := k.rate.Take(now, 1, k.rpm); !ok {
			return RefusedRPM, wait
		}
	}
	return Allowed, 0
}

func budgetRefusal(k *Key, now time.Time, inFlight bool) (Refusal, time.Duration) {
	if inFlight {
		return RefusedInFlight, inFlightRetry
	}
	return RefusedBudget, k.spent.Resets(now).Sub(now)
}

// Reservation is what Reserve set aside for one request: Settle gives it
// back, once, against the request's real use. The zero Reservation holds
// nothing.
type Reservation struct {
	tokens int64
	nanos  int64 // money, nano-dollars
	at     time.Time
}

// Tokens is the tokens r holds.
func (r Reservation) Tokens() int64 { return r.tokens }

// Nanos is the money r holds, in nano-dollars (0 without budget_usd).
func (r Reservation) Nanos() int64 { return r.nanos }

// Reserve sets aside n tokens of k's budget and tpm window, and nanos
// nano-dollars of its budget_usd, for one request admitted at now
// (Admit), so that requests in flight together cannot pass a limit that
// each of them alone would see as not reached: a request passes while
// what its key has used and reserved is below the limit, and then
// reserves n (and nanos). With Redis each reservation is one atomic
// script. A refusal reserves nothing and takes back the request Admit
// counted in k's rpm window. Keys without tpm or budgets reserve nothing.
func (s *Set) Reserve(k *Key, now time.Time, n, nanos int64) (Reservation, Refusal, time.Duration) {
	if !k.Charged() {
		return Reservation{}, Allowed, 0
	}
	n = max(n, 1)
	if k.spent != nil {
		if ok, inFlight := k.spent.Reserve(now, n, k.budget); !ok {
			r, wait := budgetRefusal(k, now, inFlight)
			s.unadmit(k, now)
			return Reservation{}, r, wait
		}
	}
	if k.money != nil {
		nanos = max(nanos, 1)
		if ok, inFlight := k.money.Reserve(now, nanos, k.budgetUSD); !ok {
			r, wait := moneyRefusal(k, now, inFlight)
			s.giveBack(k, now, n, 0)
			return Reservation{}, r, wait
		}
	} else {
		nanos = 0
	}
	if k.tokens != nil {
		if ok, wait := k.tokens.Reserve(now, n, k.tpm); !ok {
			s.giveBack(k, now, n, nanos)
			return Reservation{}, RefusedTPM, wait
		}
	}
	return Reservation{tokens: n, nanos: nanos, at: now}, Allowed, 0
}

// giveBack undoes the budget reservations of a request refused at now
// (n tokens, nanos nano-dollars) and its rpm count.
func (s *Set) giveBack(k *Key, now time.Time, n, nanos int64) {
	if k.spent != nil {
		k.spent.Settle(now, now, n, 0)
	}
	if k.money != nil && nanos > 0 {
		k.money.Settle(now, now, nanos, 0)
	}
	s.unadmit(k, now)
}

// unadmit takes back the request Admit counted in k's rpm window.
func (s *Set) unadmit(k *Key, now time.Time) {
	if k.rate != nil {
		k.rate.Add(now, -1)
	}
}

// Settle replaces the reservation r of one of k's requests by the tokens
// and nano-dollars it used, known at now (its end), in k's tpm window and
// budgets. Every reservation is settled exactly once, whatever became of
// its request (used is 0 for one that reached no provider).
func (s *Set) Settle(k *Key, r Reservation, used, nanos int64, now time.Time) {
	if !k.Charged() || r.tokens == 0 && r.nanos == 0 && used <= 0 && nanos <= 0 {
		return
	}
	used, nanos = max(used, 0), max(nanos, 0)
	if k.tokens != nil {
		k.tokens.Settle(r.at, now, r.tokens, used)
	}
	if k.spent != nil {
		k.spent.Settle(r.at, now, r.tokens, used)
	}
	if k.money != nil {
		k.money.Settle(r.at, now, r.nanos, nanos)
	}
}

// Charge records tokens and nano-dollars used by one of k's requests at
// now against its tpm window and its budgets, with nothing reserved for
// it.
func (s *Set) Charge(k *Key, tokens, nanos int64, now time.Time) {
	s.Settle(k, Reservation{}, tokens, nanos, now)
}
