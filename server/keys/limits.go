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

// Admit checks k's limits for one request at now and counts the request
// in its rpm window. A refusal comes with how long to wait. The token
// limits are charged after the response (Charge), from its real usage: a
// key over its tpm window or its budget is refused until the window moves
// on or the period ends. Admit allocates nothing.
func (s *Set) Admit(k *Key, now time.Time) (Refusal, time.Duration) {
	if !k.Limited() {
		return Allowed, 0
	}
	if k.spent != nil && k.spent.Used(now) >= k.budget {
		return RefusedBudget, k.spent.Resets(now).Sub(now)
	}
	if k.tokens != nil {
		if ok, wait := k.tokens.Take(now, 0, k.tpm); !ok {
			return RefusedTPM, wait
		}
	}
	if k.rate != nil {
		if ok, wait := k.rate.Take(now, 1, k.rpm); !ok {
			return RefusedRPM, wait
		}
	}
	return Allowed, 0
}

// Charge records tokens used by one of k's requests at now against its
// tpm window and its budget.
func (s *Set) Charge(k *Key, tokens int64, now time.Time) {
	if !k.Charged() || tokens <= 0 {
		return
	}
	if k.tokens != nil {
		k.tokens.Add(now, tokens)
	}
	if k.spent != nil {
		k.spent.Add(now, tokens)
	}
}
