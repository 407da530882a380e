package metrics

import (
	"strconv"
	"sync"

	vm "github.com/VictoriaMetrics/metrics"
)

// Per-account series (subscription accounts). Account names come from
// the account files slipstream was configured to pool, so they are
// bounded; a name never carries a token.

var accountsOf sync.Map // *Metrics -> *counterTable[[3]string]

func (m *Metrics) accountCounter(family, account, label, value string) *vm.Counter {
	t := tableOf[[3]string](&accountsOf, m)
	return t.counter(m.set, [3]string{family, account, value}, func() string {
		return series(family, "account", account, label, value)
	})
}

// AccountRequest counts one upstream answer from an account, by status.
func (m *Metrics) AccountRequest(account string, status int) {
	m.accountCounter("slipstream_account_requests_total", account, "status", statusLabel(status)).Inc()
}

// AccountRefresh counts one token refresh of an account by outcome (ok,
// failed, revoked, adopted).
func (m *Metrics) AccountRefresh(account, outcome string) {
	m.accountCounter("slipstream_account_refreshes_total", account, "outcome", outcome).Inc()
}

// AccountCooldown counts one account-wide rest by reason (quota,
// banned).
func (m *Metrics) AccountCooldown(account, reason string) {
	m.accountCounter("slipstream_account_cooldowns_total", account, "reason", reason).Inc()
}

// Series builds one series name (family{k="v",...}) as the text format
// wants, for writers registered with Writer.
func Series(family string, kv ...string) string { return series(family, kv...) }

// AccountTokens counts the input and output tokens of one request an
// account served.
func (m *Metrics) AccountTokens(account string, input, output int64) {
	m.accountCounter("slipstream_account_tokens_total", account, "kind", "input").Add(int(input))
	m.accountCounter("slipstream_account_tokens_total", account, "kind", "output").Add(int(output))
}

// statusLabel is status as a label value; the common ones without an
// allocation.
func statusLabel(status int) string {
	switch status {
	case 200:
		return "200"
	case 400:
		return "400"
	case 401:
		return "401"
	case 403:
		return "403"
	case 429:
		return "429"
	case 500:
		return "500"
	case 502:
		return "502"
	case 503:
		return "503"
	}
	return strconv.Itoa(status)
}
