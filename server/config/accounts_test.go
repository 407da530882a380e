package config

import (
	"strings"
	"testing"

	"slipstream/internal/testkit"
)

func TestAccountProviderValidation(t *testing.T) {
	f := func(yml, want string) {
		t.Helper()
		_, err := Parse([]byte("listen: 127.0.0.1:0\n"+yml), testkit.Env())
		switch {
		case want == "" && err != nil:
			t.Fatalf("%s: %v", yml, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Fatalf("%s: err %v, want %q", yml, err, want)
		}
	}
	f("providers: [{name: c, kind: claude-account, accounts: [\"max*\"], models: [\"*\"], strategy: soonest-reset}]", "")
	f("providers: [{name: c, kind: codex-account, models: [\"*\"]}]", "needs accounts")
	f("providers: [{name: c, kind: codex-account, accounts: [a], keys: [k], models: [\"*\"]}]", "remove keys")
	f("providers: [{name: c, kind: gemini-account, accounts: [\"../x\"], models: [\"*\"]}]", "account name or glob")
	f("providers: [{name: c, kind: anthropic, keys: [k], strategy: soonest-reset, models: [\"*\"]}]", "account kinds only")
	f("providers: [{name: c, kind: codex-account, accounts: [a], list_models: true, models: [\"*\"]}]", "not available")
	f("accounts: {max_cooldown: -1s}\nproviders: [{name: m, kind: mock, models: [\"*\"]}]", "must not be negative")
	f("accounts: {oauth: {chatgpt: {token: http://x}}}\nproviders: [{name: m, kind: mock, models: [\"*\"]}]", "unknown account type")

	c, err := Parse([]byte("listen: 127.0.0.1:0\nproviders: [{name: c, kind: codex-account, accounts: [a], models: [\"*\"]}]"), testkit.Env())
	if err != nil {
		t.Fatal(err)
	}
	if c.AccountsDir != DefaultAccountsDir || c.Accounts.MaxCooldown.D().Hours() != 6 || c.Accounts.RefreshWorkers != 4 || c.Providers[0].BaseURL != "https://chatgpt.com/backend-api/codex" {
		t.Fatalf("defaults: %q %v %d %q", c.AccountsDir, c.Accounts.MaxCooldown.D(), c.Accounts.RefreshWorkers, c.Providers[0].BaseURL)
	}
}
