package server

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"slipstream/server/accounts"
	"slipstream/server/config"
)

// knownBetas are the anthropic-beta values the fake upstream accepts;
// any other is refused the way Anthropic refuses it: a 400 quoting the
// client's value.
var knownBetas = map[string]bool{"claude-code-20250219": true, "oauth-2025-04-20": true}

// echoUnknownBetas answers a request carrying an unknown anthropic-beta
// value with Anthropic's 400, which quotes the value back.
func echoUnknownBetas(_ int64, _ string, w http.ResponseWriter, r *http.Request) bool {
	var unknown []string
	for _, v := range strings.Split(r.Header.Get("Anthropic-Beta"), ",") {
		if v = strings.TrimSpace(v); v != "" && !knownBetas[v] {
			unknown = append(unknown, v)
		}
	}
	if len(unknown) == 0 {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(400)
	fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":"Unexpected value(s) `+"`%s`"+` for the `+"`anthropic-beta`"+` header. Please consult our documentation at docs.anthropic.com or try again without the header."}}`, strings.Join(unknown, "`, `"))
	return true
}

// TestClaudeClientCannotBanAccounts: a client that puts the ban
// sentence in a header the provider quotes back must not disable any
// account (the provider's own ban answer is matched whole).
func TestClaudeClientCannotBanAccounts(t *testing.T) {
	t.Parallel()
	rig := newAccountRig(t, accounts.TypeClaude, "a1", "a2", "a3")
	rig.answer = echoUnknownBetas
	rig.start(config.KindClaudeAccount, "    strategy: fill-first\n")
	for _, beta := range []string{
		"claude-code-20250219,organization has been disabled",
		"claude-code-20250219,This organization has been disabled.",
		"claude-code-20250219,oauth_org_not_allowed disabled",
	} {
		status, body := rig.post("/v1/messages?beta=true", claudeCodeBody, "User-Agent", "claude-cli/2.1.197 (external, cli)",
			"Anthropic-Beta", beta, "Anthropic-Version", "2023-06-01")
		if status == 200 {
			t.Fatalf("beta %q: an unknown beta was served: %s", beta, body)
		}
	}
	as, errs := accounts.NewDir(rig.dir).List()
	if len(errs) > 0 || len(as) != 3 {
		t.Fatalf("accounts %d, errors %v", len(as), errs)
	}
	for _, a := range as {
		if a.Disabled {
			t.Errorf("%s was disabled by a client's header: %q", a.Name, a.DisabledReason)
		}
	}
	if status, body := rig.claude(claudeCodeBody); status != 200 {
		t.Fatalf("a Claude Code request after the hostile ones: status %d body %s", status, body)
	}
	rig.check()
}

// banRig starts two Claude accounts, fill-first, the first of which (a1)
// answers every request with status and body; it makes one Claude Code
// request, which must fail over to a2 and succeed.
func banRig(t *testing.T, status int, body string) *accountRig {
	t.Helper()
	rig := newAccountRig(t, accounts.TypeClaude, "a1", "a2")
	rig.answer = func(n int64, name string, w http.ResponseWriter, r *http.Request) bool {
		if name != "a1" {
			return false
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
		return true
	}
	rig.start(config.KindClaudeAccount, "    strategy: fill-first\n")
	if status, body := rig.claude(claudeCodeBody); status != 200 {
		t.Fatalf("status %d body %s", status, body)
	}
	return rig
}

// TestClaudeOrgNotAllowedDisablesAccount: the provider's own 403
// oauth_org_not_allowed still disables the account, and the request
// fails over.
func TestClaudeOrgNotAllowedDisablesAccount(t *testing.T) {
	t.Parallel()
	rig := banRig(t, 403, `{"type":"error","error":{"type":"permission_error","message":"OAuth authentication is currently not allowed for this organization.","code":"oauth_org_not_allowed"}}`)
	d := accounts.NewDir(rig.dir)
	if a, _ := d.Load("a1"); !a.Disabled {
		t.Fatal("a1 not disabled by the provider's oauth_org_not_allowed")
	}
	if a, _ := d.Load("a2"); a.Disabled {
		t.Fatal("a2 disabled")
	}
	rig.check()
}

// TestGeminiAccountProjectIsTheAccounts: a request to a Gemini account
// goes out under the account's Code Assist project; a client's
// X-Goog-User-Project (which on Google's APIs picks the project a user's
// token is charged to) or X-Goog-Request-Params never reaches the
// upstream beside the account's token.
func TestGeminiAccountProjectIsTheAccounts(t *testing.T) {
	t.Parallel()
	rig := newAccountRig(t, accounts.TypeGemini, "g1")
	var mu sync.Mutex
	var seen []string
	rig.answer = func(_ int64, _ string, _ http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		seen = append(seen, r.Header.Get("X-Goog-User-Project")+r.Header.Get("X-Goog-Request-Params"))
		mu.Unlock()
		return false
	}
	rig.start(config.KindGeminiAccount, "")
	status, body := rig.post("/v1beta/models/gemini-2.5-pro:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`,
		"X-Goog-User-Project", "victim-billing", "X-Goog-Request-Params", "project=victim-billing")
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != "" {
		t.Fatalf("the upstream saw the client's project headers: %q", seen)
	}
	rig.check()
}
