package admin

import (
	"context"
	"errors"
	"time"
)

// Backend is what the management API reads and acts on: the server root
// implements it (server/adminbridge.go) over its registry, keys, store and
// live requests. Every method is safe for concurrent use and runs off the
// request path. Names, never secrets: credentials and keys are named by
// their configured names.
type Backend interface {
	// Status is the server's state for GET /admin/api/status.
	Status() Status
	// Providers lists the providers and their credentials.
	Providers() []Provider
	// Keys lists the client keys by name with their limits and use.
	Keys() []Key
	// Live lists the requests in flight, oldest first.
	Live() []LiveRequest
	// Ledger is the usage ledger, or nil while none is enabled (the API
	// then answers its routes 503).
	Ledger() Ledger

	// EndCooldown ends every rest of a credential (ErrNotFound when no
	// such provider or credential).
	EndCooldown(provider, credential string) error
	// SetDisabled turns a credential off (disabled) or back on.
	SetDisabled(provider, credential string, disabled bool) error
	// Reload reloads the configuration the way SIGHUP does.
	Reload() error
	// Cancel cancels the live request id: the client gets its dialect's
	// error, the upstream connection is closed (ErrNotFound when no such
	// request is in flight).
	Cancel(id string) error

	// Loopback reports whether every listener is a loopback address: only
	// then is the API served without admin tokens.
	Loopback() bool
	// IsClientKey reports whether presented is a configured client key,
	// which the API refuses as a credential of its own.
	IsClientKey(presented []byte) bool
}

// Ledger is the part of the usage ledger the API reads (server/ledger).
type Ledger interface {
	// Usage totals the finished requests in [q.From, q.To) grouped by
	// q.By (key, model, provider or day), largest first for names, in
	// date order for days.
	Usage(ctx context.Context, q UsageQuery) ([]UsageRow, error)
	// Requests returns the latest limit finished requests, newest first.
	Requests(ctx context.Context, limit int) ([]RequestRow, error)
}

// Errors a Backend returns that the API answers with their own status.
var (
	// ErrNotFound: no such provider, credential or live request (404).
	ErrNotFound = errors.New("not found")
	// ErrUnavailable: the action cannot run on this server (409), e.g. a
	// reload on a server started without a configuration file.
	ErrUnavailable = errors.New("not available on this server")
)

// Status is GET /admin/api/status.
type Status struct {
	Version       string    `json:"version"`
	StartedAt     time.Time `json:"started_at"`
	UptimeSeconds float64   `json:"uptime_seconds"`
	// ConfigDigest is the hex SHA-256 of the running configuration with
	// its secrets redacted (what `slipstream check -print` prints).
	ConfigDigest string  `json:"config_digest"`
	LastReload   *Reload `json:"last_reload"` // null until the first reload
	Ledger       bool    `json:"ledger"`      // the usage ledger is enabled
	Traffic      Traffic `json:"traffic"`
}

// Reload is the outcome of the last configuration reload.
type Reload struct {
	At     time.Time `json:"at"`
	Source string    `json:"source"` // the file, with "(SIGHUP)" or "(admin NAME)"
	OK     bool      `json:"ok"`
	Error  string    `json:"error,omitempty"`
}

// Traffic counts this process's requests since it started.
type Traffic struct {
	Requests     int64 `json:"requests"`      // finished
	Errors       int64 `json:"errors"`        // finished with a status >= 500 or a failed stream
	InFlight     int64 `json:"in_flight"`     // live now
	InputTokens  int64 `json:"input_tokens"`  // of finished requests
	OutputTokens int64 `json:"output_tokens"` // of finished requests
	// SpentUSDToday is what today's (UTC) requests cost, from the price
	// table; null until money tracking is wired.
	SpentUSDToday *float64 `json:"spent_usd_today"`
}

// Provider is one provider of GET /admin/api/providers.
type Provider struct {
	Name        string       `json:"name"`
	Kind        string       `json:"kind"`
	Models      []string     `json:"models"`
	InFlight    int64        `json:"in_flight"`
	Credentials []Credential `json:"credentials"`
}

// Credential states.
const (
	StateReady    = "ready"
	StateCooling  = "cooling"
	StateDisabled = "disabled"
)

// Credential is one credential of a provider, by name.
type Credential struct {
	Name  string `json:"name"`
	State string `json:"state"` // ready, cooling or disabled
	// CoolingUntil is when its latest rest ends (for its most rested
	// model); null when ready.
	CoolingUntil *time.Time `json:"cooling_until"`
	// Why names the failure class that rested it (rate_limit, server,
	// timeout, ...), as in slipstream_cooldowns_total; "" when unknown.
	Why         string        `json:"why"`
	InFlight    int64         `json:"in_flight"`
	LastError   string        `json:"last_error"` // cause of its last failed attempt, or ""
	LastErrorAt *time.Time    `json:"last_error_at"`
	Quota       []QuotaWindow `json:"quota,omitempty"` // subscription accounts only
}

// QuotaWindow is one quota window of a subscription account, as its
// provider last reported it.
type QuotaWindow struct {
	Window      string     `json:"window"`      // "short" (5 h) or "long" (weekly)
	Utilisation float64    `json:"utilisation"` // 0..1
	ResetsAt    *time.Time `json:"resets_at,omitempty"`
}

// Key is one client key of GET /admin/api/keys.
type Key struct {
	Name   string   `json:"name"`
	Models []string `json:"models"`
	RPM    int64    `json:"rpm"`     // limit, 0: none
	TPM    int64    `json:"tpm"`     // limit, 0: none
	RPMNow int64    `json:"rpm_now"` // requests in the current minute window
	TPMNow int64    `json:"tpm_now"` // tokens in the current minute window
	// Budget is the token budget per Period (0: none); BudgetUsed counts
	// the period's use, reservations of requests in flight included.
	Budget         int64      `json:"budget"`
	Period         string     `json:"period,omitempty"`
	BudgetUsed     int64      `json:"budget_used"`
	BudgetLeft     *int64     `json:"budget_left"` // null without a budget
	BudgetResetsAt *time.Time `json:"budget_resets_at,omitempty"`
	// BudgetUSD and SpentUSD are the key's budget in money per Period and
	// what it spent in the period; null until money tracking is wired.
	BudgetUSD *float64 `json:"budget_usd"`
	SpentUSD  *float64 `json:"spent_usd"`
	// Tokens the key used since this process started.
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	Requests     int64 `json:"requests"`
}

// LiveRequest is one request in flight of GET /admin/api/live.
type LiveRequest struct {
	ID         string    `json:"id"`
	Key        string    `json:"key"`
	Model      string    `json:"model"`
	Provider   string    `json:"provider"`
	Credential string    `json:"credential"`
	Transport  string    `json:"transport"` // http or websocket
	Stream     bool      `json:"stream"`
	StartedAt  time.Time `json:"started_at"`
	AgeSeconds float64   `json:"age_seconds"`
	BytesOut   int64     `json:"bytes_out"`
	Tokens     int64     `json:"tokens"` // output tokens so far (counted or reported)
}

// UsageQuery is GET /admin/api/usage's query.
type UsageQuery struct {
	By       string    // key, model, provider or day
	From, To time.Time // [From, To), UTC
}

// UsageRow is one group of GET /admin/api/usage.
type UsageRow struct {
	Group            string  `json:"group"`
	Requests         int64   `json:"requests"`
	Errors           int64   `json:"errors"`
	InputTokens      int64   `json:"input_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	CacheReadTokens  int64   `json:"cache_read_tokens"`
	CacheWriteTokens int64   `json:"cache_write_tokens"`
	ReasoningTokens  int64   `json:"reasoning_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	Unpriced         int64   `json:"unpriced"` // requests whose model has no price
}

// RequestRow is one finished request of GET /admin/api/requests, as the
// ledger recorded it. Never a secret, never content.
type RequestRow struct {
	Time             time.Time `json:"time"`
	ID               string    `json:"id"`
	Key              string    `json:"key"`
	Provider         string    `json:"provider"`
	Credential       string    `json:"credential"`
	Model            string    `json:"model"`
	UpstreamModel    string    `json:"upstream_model"`
	Dialect          string    `json:"dialect"`
	UpstreamDialect  string    `json:"upstream_dialect"`
	Transport        string    `json:"transport"`
	Status           int       `json:"status"`
	Cause            string    `json:"cause"`
	InputTokens      int64     `json:"input_tokens"`
	OutputTokens     int64     `json:"output_tokens"`
	CacheReadTokens  int64     `json:"cache_read_tokens"`
	CacheWriteTokens int64     `json:"cache_write_tokens"`
	ReasoningTokens  int64     `json:"reasoning_tokens"`
	Estimated        bool      `json:"estimated"`
	CostUSD          *float64  `json:"cost_usd"` // null: unpriced
	LatencyMS        float64   `json:"latency_ms"`
	TTFTMS           float64   `json:"ttft_ms"`
	BytesIn          int64     `json:"bytes_in"`
	BytesOut         int64     `json:"bytes_out"`
	Guardrails       string    `json:"guardrails"` // rule names that matched, comma separated
}
