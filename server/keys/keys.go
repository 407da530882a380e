// Package keys holds slipstream's client keys and their policy: which
// models a key may use, its request and token rates, and its token budget
// per day or month. Finding a key and checking its limits allocate
// nothing and cost O(1) per request (O(keys) for the constant-time
// comparison of the presented key against every configured one).
package keys

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"slipstream/server/config"
	"slipstream/server/provider"
	"slipstream/server/store"
)

// Key is one configured client key and its policy. Its fields are
// read-only after New; limit state lives in the Set's Counters.
type Key struct {
	// Name identifies the key in logs; the secret never leaves this
	// package.
	Name string

	secret []byte   // the key, when configured in clear
	digest [32]byte // its SHA-256, when configured as key_sha256
	hashed bool     // digest is set, secret is not
	models []string

	rpm, tpm, budget int64
	budgetUSD        int64  // nano-dollars per period; 0: none (money.go)
	countExempt      bool   // count_tokens requests skip the rpm window
	period           string // of the budgets: config.PeriodDaily or PeriodMonthly
	// Limit state, in the process-wide store (named "rpm:"+Name, ...):
	// it survives reloads and is shared across replicas with Redis.
	rate, tokens *store.Window
	spent        *store.Budget
	money        *store.Budget // "usd:"+Name, in nano-dollars
}

// Allows reports whether the key may use the client-facing model name. A
// nil key (no keys configured) allows everything.
func (k *Key) Allows(model string) bool {
	return k == nil || provider.MatchAny(k.models, model)
}

// Limited reports whether the key has a rate limit or a budget.
func (k *Key) Limited() bool {
	return k != nil && (k.rpm > 0 || k.tpm > 0 || k.budget > 0 || k.budgetUSD > 0)
}

// Charged reports whether the key's requests reserve tokens at admission
// and settle them to their usage after the response (it has a tpm, a
// budget or a budget_usd). Nothing of this runs for other keys.
func (k *Key) Charged() bool { return k != nil && (k.tpm > 0 || k.budget > 0 || k.budgetUSD > 0) }

// Set is the configured client keys. It is immutable after New and safe
// for concurrent use; limit state lives in the store it was built over.
type Set struct {
	keys    []Key
	anyHash bool // some key is configured as a digest
}

// New builds the key set of a validated configuration over st, the
// process-wide store of rate windows and budgets (nil: a private
// in-process one). State is keyed by key name, so a reload keeps it for
// every key that still exists.
func New(cfg []config.Key, st *store.Store) (*Set, error) {
	if st == nil {
		st = store.New()
	}
	s := &Set{}
	for _, c := range cfg {
		k := Key{Name: c.Name, models: c.Models, rpm: c.RPM, tpm: c.TPM, budget: c.Budget, countExempt: c.CountTokensExempt}
		if len(k.models) == 0 {
			k.models = []string{"*"}
		}
		if c.KeySHA256 != "" {
			d, err := hex.DecodeString(strings.ToLower(c.KeySHA256))
			if err != nil || len(d) != 32 {
				return nil, fmt.Errorf("cannot read key_sha256 of key %q: want 64 hex digits", c.Name)
			}
			copy(k.digest[:], d)
			k.hashed, s.anyHash = true, true
		} else {
			k.secret = []byte(c.Key)
		}
		if k.rpm > 0 {
			k.rate = st.Window("rpm:"+c.Name, time.Minute)
		}
		if k.tpm > 0 {
			k.tokens = st.Window("tpm:"+c.Name, time.Minute)
		}
		p := store.Daily
		k.period = config.PeriodDaily
		if c.Period == config.PeriodMonthly {
			p, k.period = store.Monthly, config.PeriodMonthly
		}
		if k.budget > 0 {
			k.spent = st.Budget("budget:"+c.Name, p)
		}
		if c.BudgetUSD > 0 {
			k.budgetUSD = c.BudgetUSD.Micros() * 1000
			k.money = st.Budget(moneyPrefix+c.Name, p)
		}
		s.keys = append(s.keys, k)
	}
	return s, nil
}

// Len is the number of configured keys; 0 means no authentication.
func (s *Set) Len() int { return len(s.keys) }

// Find returns the key whose secret is presented, or nil. Every
// configured key is compared in constant time, so timing does not reveal
// which key, or how much of one, matched; keys configured as digests are
// compared as digests of what was presented.
func (s *Set) Find(presented []byte) *Key {
	if len(presented) == 0 {
		return nil
	}
	var sum [32]byte
	if s.anyHash {
		sum = sha256.Sum256(presented)
	}
	found := -1
	for i := range s.keys {
		k := &s.keys[i]
		var eq int
		if k.hashed {
			eq = subtle.ConstantTimeCompare(sum[:], k.digest[:])
		} else {
			eq = subtle.ConstantTimeCompare(presented, k.secret)
		}
		if eq == 1 {
			found = i
		}
	}
	if found < 0 {
		return nil
	}
	return &s.keys[found]
}
