// Package accounts keeps subscription logins (Claude, ChatGPT/Codex,
// Google accounts of the Gemini and Antigravity CLIs): one JSON file per
// account under a directory, the OAuth flows that create them, the
// refresh that keeps their access tokens valid, and the quota signals
// that rest them.
//
// Tokens are secrets: no String, error or log line of this package
// holds one (account names, types and OAuth error codes only).
package accounts

import (
	"time"
)

// Account types (the `type` field of an account file).
const (
	TypeClaude      = "claude"
	TypeCodex       = "codex"
	TypeGemini      = "gemini"
	TypeAntigravity = "antigravity"
)

// Account is one stored login. The zero time means unknown.
type Account struct {
	// Name is the file name without .json; it names the account in
	// logs, metrics and provider `accounts:` patterns.
	Name string
	Type string

	AccessToken  string
	RefreshToken string
	IDToken      string
	// Expiry is when AccessToken stops working (file field "expired").
	Expiry      time.Time
	LastRefresh time.Time

	Email string
	// Plan is the subscription plan when the provider states it
	// (Codex's chatgpt_plan_type).
	Plan string
	// AccountID is Codex's chatgpt_account_id (sent as
	// chatgpt-account-id).
	AccountID string
	// ProjectID is the Google Cloud project of a Code Assist account.
	ProjectID string

	// CoolingUntil and CoolingReason are the last account-wide rest the
	// provider asked for (quota windows), kept for `slipstream accounts`.
	CoolingUntil  time.Time
	CoolingReason string
	// NeedsLogin is set when the refresh token was refused
	// (invalid_grant, refresh_token_reused): a fresh login is needed.
	NeedsLogin bool
	// Disabled excludes the account from selection: set by the operator,
	// or by slipstream when the provider answered that the account is
	// banned or suspended (DisabledReason holds the provider's message).
	Disabled       bool
	DisabledReason string
}

// String names the account without revealing any token.
func (a *Account) String() string { return a.Type + " account " + a.Name }

// Usable reports whether the account may be selected at all (it may
// still be cooling).
func (a *Account) Usable() bool {
	return !a.NeedsLogin && !a.Disabled && a.RefreshToken+a.AccessToken != ""
}

// State describes the account for `slipstream accounts`, without tokens.
func (a *Account) State(now time.Time) string {
	switch {
	case a.Disabled && a.DisabledReason != "":
		return "disabled: " + a.DisabledReason
	case a.Disabled:
		return "disabled"
	case a.NeedsLogin:
		return "needs login (slipstream login " + a.Type + " -name " + a.Name + ")"
	case a.CoolingUntil.After(now):
		return "cooling until " + a.CoolingUntil.UTC().Format(time.RFC3339) + " (" + a.CoolingReason + ")"
	case !a.Expiry.IsZero() && !a.Expiry.After(now):
		return "token expired (refreshed on next use)"
	}
	return "ok"
}
