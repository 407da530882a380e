package config

import (
	"fmt"
	"strings"
)

// Subscription-account provider kinds: requests are signed with the
// access token of a login stored under accounts_dir (see
// docs/ACCOUNTS.md), not with an API key.
const (
	KindClaudeAccount = "claude-account"
	KindCodexAccount  = "codex-account"
	KindGeminiAccount = "gemini-account"
)

// StrategySoonestReset drains first the account whose longer quota
// window resets soonest (accounts only).
const StrategySoonestReset = "soonest-reset"

// IsAccountKind reports whether kind is a subscription-account kind.
func IsAccountKind(kind string) bool {
	return kind == KindClaudeAccount || kind == KindCodexAccount || kind == KindGeminiAccount
}

// AccountType is the account file type a provider kind uses ("" for
// kinds that are not accounts). A gemini-account serves both Gemini CLI
// and Antigravity logins.
func AccountType(kind string) string {
	switch kind {
	case KindClaudeAccount:
		return "claude"
	case KindCodexAccount:
		return "codex"
	case KindGeminiAccount:
		return "gemini"
	}
	return ""
}

// Accounts configures subscription accounts (accounts_dir holds them).
type Accounts struct {
	// RefreshWorkers bounds the background token refreshes run at once.
	// Default 4.
	RefreshWorkers int `yaml:"refresh_workers"`
	// MaxCooldown caps any reset time a provider states (a multi-day
	// weekly reset included); a capped account is probed again when
	// the cap ends. Default 6h.
	MaxCooldown Duration `yaml:"max_cooldown"`
	// OAuth overrides the built-in OAuth endpoints per account type
	// (claude, codex, gemini, antigravity), e.g. for a test stub or a
	// corporate proxy. Default: the providers' public endpoints.
	OAuth map[string]OAuthEndpoints `yaml:"oauth"`
}

// OAuthEndpoints are one account type's OAuth URLs and client. Empty
// fields keep the built-in value.
type OAuthEndpoints struct {
	Authorize    string `yaml:"authorize"`
	Token        string `yaml:"token"`
	Redirect     string `yaml:"redirect_uri"`
	DeviceCode   string `yaml:"device_code"`
	DeviceToken  string `yaml:"device_token"`
	DeviceVerify string `yaml:"device_verify"`
	Profile      string `yaml:"profile"`
	Userinfo     string `yaml:"userinfo"`
	CodeAssist   string `yaml:"code_assist"`
	ClientID     string `yaml:"client_id"`
	// ClientSecret is the installed-app client secret of Google's CLIs.
	ClientSecret string `yaml:"client_secret" secret:"true"`
}

// DefaultAccountsDir is where account files live unless accounts_dir
// says otherwise.
const DefaultAccountsDir = "~/.slipstream/accounts"

var accountBaseURLs = map[string]string{
	KindClaudeAccount: "https://api.anthropic.com",
	KindCodexAccount:  "https://chatgpt.com/backend-api/codex",
	KindGeminiAccount: "https://cloudcode-pa.googleapis.com",
}

func (c *Config) applyAccountDefaults() {
	if c.AccountsDir == "" {
		c.AccountsDir = DefaultAccountsDir
	}
	if c.Accounts.RefreshWorkers == 0 {
		c.Accounts.RefreshWorkers = 4
	}
	if c.Accounts.MaxCooldown == 0 {
		c.Accounts.MaxCooldown = Duration(6 * 3600e9)
	}
	for i := range c.Providers {
		p := &c.Providers[i]
		if IsAccountKind(p.Kind) && p.BaseURL == "" {
			p.BaseURL = accountBaseURLs[p.Kind]
		}
	}
}

func (c *Config) validateAccounts(add func(string, string, ...any)) {
	if c.Accounts.RefreshWorkers < 0 {
		add("accounts.refresh_workers", "must not be negative, got %d", c.Accounts.RefreshWorkers)
	}
	if c.Accounts.MaxCooldown < 0 {
		add("accounts.max_cooldown", "must not be negative, got %s", c.Accounts.MaxCooldown.D())
	}
	for typ := range c.Accounts.OAuth {
		switch typ {
		case "claude", "codex", "gemini", "antigravity":
		default:
			add("accounts.oauth."+typ, "unknown account type (want claude, codex, gemini or antigravity)")
		}
	}
}

// validateAccount checks an account provider (kind claude-account,
// codex-account or gemini-account).
func (p *Provider) validateAccount(path string, add func(string, string, ...any)) {
	if len(p.Accounts) == 0 {
		add(path+".accounts", "a %s provider needs accounts: [names or globs of accounts under accounts_dir]", p.Kind)
	}
	for i, a := range p.Accounts {
		if a == "" || strings.ContainsAny(a, "/\\") {
			add(fmt.Sprintf("%s.accounts[%d]", path, i), "want an account name or glob, got %q", a)
		}
	}
	if p.ListModels {
		add(path+".list_models", "not available for %s providers", p.Kind)
	}
	if len(p.Keys) > 0 {
		add(path+".keys", "a %s provider signs with its accounts' tokens: remove keys", p.Kind)
	}
	checkBaseURL(path+".base_url", p.BaseURL, add)
	switch p.Strategy {
	case StrategyRoundRobin, StrategyFillFirst, StrategyWeighted, StrategySoonestReset:
	default:
		add(path+".strategy", "want round-robin, fill-first, weighted or soonest-reset, got %q", p.Strategy)
	}
}
