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
)

// String is the refusal's message for the client.
func (r Refusal) String() string {
	switch r {
	case RefusedRPM:
		return "this API key is over its requests-per-minute limit (rpm)"
	case RefusedTPM:
		return "this API key is over its tokens-per-minute limit (tpm)"
	case RefusedBudget:
		return "this API key has used its token budget for this period"
	}
	return "allowed"
}

// Admit checks k's limits for one request at now (Unix ns) and takes one
// request from its rpm bucket. A refusal comes with how long to wait.
// The token limits are charged after the response (Charge), from its real
// usage: a key over them is refused until its bucket refills or its
// period ends. Admit allocates nothing.
func (s *Set) Admit(k *Key, now int64) (Refusal, time.Duration) {
	if !k.Limited() {
		return Allowed, 0
	}
	if k.budget > 0 {
		p, next := period(now, k.monthly)
		if s.counters.PeriodUsed(k.budgetID, p) >= k.budget {
			return RefusedBudget, time.Duration(next - now)
		}
	}
	if k.tpm > 0 {
		if ok, wait := s.counters.Take(k.tokID, k.tpm, 0, now); !ok {
			return RefusedTPM, time.Duration(wait)
		}
	}
	if k.rpm > 0 {
		if ok, wait := s.counters.Take(k.rateID, k.rpm, 1, now); !ok {
			return RefusedRPM, time.Duration(wait)
		}
	}
	return Allowed, 0
}

// Charge records tokens used by one of k's requests at now against its
// tpm bucket and its budget.
func (s *Set) Charge(k *Key, tokens, now int64) {
	if !k.Charged() || tokens <= 0 {
		return
	}
	if k.tpm > 0 {
		s.counters.Spend(k.tokID, k.tpm, tokens, now)
	}
	if k.budget > 0 {
		p, _ := period(now, k.monthly)
		s.counters.PeriodAdd(k.budgetID, p, tokens)
	}
}

// period returns the budget period holding now (a UTC day or month, as a
// number) and when the next one starts (Unix ns).
func period(now int64, monthly bool) (p, next int64) {
	const day = int64(24 * time.Hour)
	if !monthly {
		d := now / day
		return d, (d + 1) * day
	}
	t := time.Unix(0, now).UTC()
	y, m, _ := t.Date()
	start := time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC)
	return int64(y)*12 + int64(m), start.UnixNano()
}
