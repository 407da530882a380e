package accounts

import (
	"net/http"
	"testing"
	"time"

	"slipstream/server/provider"
)

func credsOf(names ...string) []provider.Credential {
	cs := make([]provider.Credential, len(names))
	for i, n := range names {
		cs[i] = provider.Credential{Name: n, Index: i}
	}
	return cs
}

func hdr(kv ...string) Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return func(k string) []byte {
		v := h.Get(k)
		if v == "" {
			return nil
		}
		return []byte(v)
	}
}

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func TestReadSignal(t *testing.T) {
	f := func(name, typ string, status int, h Header, body string, until time.Time, ban bool, open bool) {
		t.Helper()
		s := ReadSignal(typ, status, h, []byte(body), t0)
		if !s.Until.Equal(until) || (s.Ban != "") != ban || s.Open != open {
			t.Errorf("%s: until %v ban %q open %v; want until %v ban %v open %v", name, s.Until, s.Ban, s.Open, until, ban, open)
		}
	}
	r5 := t0.Add(2 * time.Hour)
	r7 := t0.Add(3 * 24 * time.Hour)
	// Claude: the latest reset among the rejected windows.
	f("claude 5h rejected", TypeClaude, 429, hdr("Anthropic-Ratelimit-Unified-Status", "rejected",
		"Anthropic-Ratelimit-Unified-5h-Status", "rejected", "Anthropic-Ratelimit-Unified-5h-Reset", itoa(r5.Unix()),
		"Anthropic-Ratelimit-Unified-7d-Status", "allowed", "Anthropic-Ratelimit-Unified-7d-Reset", itoa(r7.Unix())), "", r5, false, false)
	f("claude both rejected", TypeClaude, 429, hdr("Anthropic-Ratelimit-Unified-5h-Status", "rejected", "Anthropic-Ratelimit-Unified-5h-Reset", itoa(r5.Unix()),
		"Anthropic-Ratelimit-Unified-7d-Status", "rejected", "Anthropic-Ratelimit-Unified-7d-Reset", r7.Format(time.RFC3339)), "", r7, false, false)
	f("claude allowed: open", TypeClaude, 200, hdr("Anthropic-Ratelimit-Unified-5h-Status", "allowed", "Anthropic-Ratelimit-Unified-7d-Status", "allowed_warning"), "", time.Time{}, false, true)
	f("claude 429 Retry-After only", TypeClaude, 429, hdr("Retry-After", "30"), `{"type":"error","error":{"type":"rate_limit_error","message":"x"}}`, time.Time{}, false, false)
	f("claude banned", TypeClaude, 400, hdr(), `{"type":"error","error":{"type":"invalid_request_error","message":"This organization has been disabled."}}`, time.Time{}, true, false)
	f("claude oauth org not allowed", TypeClaude, 403, hdr(), `{"type":"error","error":{"type":"permission_error","message":"OAuth authentication is currently not allowed for this organization.","code":"oauth_org_not_allowed"}}`, time.Time{}, true, false)
	f("claude banned, case and spacing", TypeClaude, 400, hdr(), `{"type":"error","error":{"type":"invalid_request_error","message":"  this organization has been disabled "}}`, time.Time{}, true, false)
	f("claude 403 code only", TypeClaude, 403, hdr(), `{"type":"error","error":{"type":"permission_error","code":"oauth_org_not_allowed"}}`, time.Time{}, true, false)
	f("claude 403 type oauth_org_not_allowed", TypeClaude, 403, hdr(), `{"type":"error","error":{"type":"oauth_org_not_allowed","message":"m"}}`, time.Time{}, true, false)
	f("claude 403 disabled sentence", TypeClaude, 403, hdr(), `{"type":"error","error":{"type":"permission_error","message":"This organization has been disabled."}}`, time.Time{}, true, false)
	f("claude 403 oauth sentence", TypeClaude, 403, hdr(), `{"type":"error","error":{"type":"permission_error","message":"OAuth authentication is currently not allowed for this organization"}}`, time.Time{}, true, false)
	// Claude answers that quote the client's input (an unknown beta, a
	// model name) are the client's error, never a ban.
	f("claude 400 echoing a beta", TypeClaude, 400, hdr(), `{"type":"error","error":{"type":"invalid_request_error","message":"Unexpected value(s) `+"`organization has been disabled`"+` for the `+"`anthropic-beta`"+` header. Please consult our documentation at docs.anthropic.com or try again without the header."}}`, time.Time{}, false, false)
	f("claude 400 echoing the whole sentence", TypeClaude, 400, hdr(), `{"type":"error","error":{"type":"invalid_request_error","message":"Unexpected value(s) `+"`This organization has been disabled.`"+` for the `+"`anthropic-beta`"+` header."}}`, time.Time{}, false, false)
	f("claude 403 echoing oauth_org_not_allowed", TypeClaude, 403, hdr(), `{"type":"error","error":{"type":"permission_error","message":"model oauth_org_not_allowed is not available"}}`, time.Time{}, false, false)
	f("claude 403 echoing disabled", TypeClaude, 403, hdr(), `{"type":"error","error":{"type":"permission_error","message":"Your organization does not have access to model claude-disabled"}}`, time.Time{}, false, false)
	f("claude 403 echo in another member", TypeClaude, 403, hdr(), `{"type":"error","error":{"type":"permission_error","message":"no access","param":"oauth_org_not_allowed"}}`, time.Time{}, false, false)
	// Codex.
	f("codex resets_at", TypeCodex, 429, hdr(), `{"error":{"type":"usage_limit_reached","message":"m","resets_at":`+itoa(r7.Unix())+`}}`, r7, false, false)
	f("codex resets_in_seconds", TypeCodex, 429, hdr(), `{"error":{"type":"usage_limit_reached","resets_in_seconds":7200}}`, r5, false, false)
	f("codex transient 429", TypeCodex, 429, hdr(), `{"error":{"type":"rate_limit_exceeded","message":"slow down"}}`, time.Time{}, false, false)
	f("codex headers open", TypeCodex, 200, hdr("X-Codex-Primary-Used-Percent", "40", "X-Codex-Secondary-Used-Percent", "70"), "", time.Time{}, false, true)
	f("codex deactivated code", TypeCodex, 403, hdr(), `{"error":{"code":"account_deactivated","message":"m"}}`, time.Time{}, true, false)
	f("codex deactivated type", TypeCodex, 401, hdr(), `{"error":{"type":"account_deactivated"}}`, time.Time{}, true, false)
	f("codex 403 echoing deactivated", TypeCodex, 403, hdr(), `{"error":{"type":"invalid_request_error","message":"The model 'deactivated' is not supported"}}`, time.Time{}, false, false)
	f("codex 400 echoing account_deactivated", TypeCodex, 400, hdr(), `{"error":{"type":"invalid_request_error","message":"Unknown parameter: 'account_deactivated'.","param":"account_deactivated"}}`, time.Time{}, false, false)
	f("codex limit header", TypeCodex, 429, hdr("X-Codex-Limit-Reached", "true", "X-Codex-Primary-Used-Percent", "100", "X-Codex-Primary-Reset-After-Seconds", "7200"), "", r5, false, false)
	// Google.
	f("google RetryInfo", TypeGemini, 429, hdr(), `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"7200s"}]}}`, r5, false, false)
	f("google quotaResetDelay", TypeAntigravity, 429, hdr(), `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"QUOTA_EXHAUSTED","metadata":{"quotaResetDelay":"2h0m0s"}}]}}`, r5, false, false)
	f("google message", TypeGemini, 429, hdr(), `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"You have exhausted your capacity. Your quota will reset after 7200s."}}`, r5, false, false)
	f("google array body", TypeGemini, 429, hdr(), `[{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"retryDelay":"0.5s"}]}}]`, t0.Add(500*time.Millisecond), false, false)
	f("google TOS", TypeGemini, 403, hdr(), `{"error":{"code":403,"status":"PERMISSION_DENIED","message":"suspended","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TOS_VIOLATION"}]}}`, time.Time{}, true, false)
}

func itoa(n int64) string { return formatInt(n) }

func formatInt(n int64) string {
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

func TestSoonestResetOrdering(t *testing.T) {
	fx := newFixture(t, TypeCodex, time.Hour)
	for _, n := range []string{"b", "c", "d"} {
		at, rt := fx.stub.Issue()
		fx.dir.Save(&Account{Name: n, Type: TypeCodex, AccessToken: at, RefreshToken: rt, Expiry: fx.clk.Now().Add(time.Hour)})
	}
	m := fx.manager(Options{})
	m.Load([]string{"b", "c", "d"})
	g := m.Gate()
	creds := credsOf("a1", "b", "c", "d")
	now := fx.clk.Now()
	weekly := func(name string, in time.Duration) {
		m.Observe(name, Signal{Long: now.Add(in), Util: [2]float64{-1, -1}})
	}
	weekly("a1", 5*24*time.Hour)
	weekly("b", 2*24*time.Hour)
	weekly("c", 3*time.Hour) // resets soonest: drained first
	// d: no known reset: last.
	if i := g.First(creds, now.UnixNano()); creds[i].Name != "c" {
		t.Fatalf("first = %s, want c", creds[i].Name)
	}
	m.Observe("c", Signal{Until: now.Add(time.Hour), Reason: "window used up", Util: [2]float64{-1, -1}})
	if i := g.First(creds, now.UnixNano()); creds[i].Name != "b" {
		t.Fatalf("with c resting, first = %s, want b", creds[i].Name)
	}
	m.Disable("b", "banned")
	if i := g.First(creds, now.UnixNano()); creds[i].Name != "a1" {
		t.Fatalf("with b disabled, first = %s, want a1", creds[i].Name)
	}
	if g.Hold(&creds[1], now.UnixNano()) != -1 {
		t.Fatal("a disabled account must be held out")
	}
}
