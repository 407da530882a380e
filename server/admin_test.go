package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"slipstream/internal/testkit"
	"slipstream/server/accounts"
	"slipstream/server/admin"
	"slipstream/server/config"
)

const (
	adminToken     = "adm-0123456789abcdef-ops"
	adminClientKey = "sk-client-0123456789"
)

// adminConfig has a client key, an admin token and an Anthropic provider
// with two credentials, ka and kb.
const adminConfig = `
keys:
  - {name: dev, key: ` + adminClientKey + `, budget: 100000, rpm: 100}
admin:
  tokens:
    - {name: ops, token: ` + adminToken + `}
providers:
  - name: anth
    kind: anthropic
    base_url: ${UP}
    keys: [{name: ka, key: sk-up-a}, {name: kb, key: sk-up-b}]
    models: ["claude-*"]
timeouts: {keepalive: 0s}
log: {access: true}
`

// serveAdminAt runs slipstream on a listener at addr ("0.0.0.0:0" is not
// loopback: the management API then needs tokens), logging to w, and
// returns a base URL that reaches it over loopback.
func serveAdminAt(t *testing.T, cfg *config.Config, addr string, w io.Writer) (string, *Server) {
	t.Helper()
	s, err := New(cfg, Options{Log: w, Version: "test-1"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, s, ln)
	return fmt.Sprintf("http://127.0.0.1:%d", ln.Addr().(*net.TCPAddr).Port), s
}

// adminDo sends an admin request with the bearer token (none when "")
// and extra headers (name, value pairs); it returns status, headers, body.
func adminDo(t *testing.T, base, method, path, token, body string, headers ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// adminGet decodes GET path into v, failing on any status but 200.
func adminGet(t *testing.T, base, path string, v any) {
	t.Helper()
	status, _, body := adminDo(t, base, "GET", path, adminToken, "")
	if status != 200 {
		t.Fatalf("GET %s: %d %s", path, status, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, body)
	}
}

// TestAdminRefusals: on a listener other hosts can reach, every request
// without the admin token is refused, as is a client key, another
// origin's page, and a rebound host name; none gets CORS headers.
func TestAdminRefusals(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, &recorder{reply: anthropicReply})
	var logs testkit.Buffer
	base, _ := serveAdminAt(t, parseConfig(t, adminConfig, up.URL), "0.0.0.0:0", &logs)
	f := func(what, method, path, token string, want int, headers ...string) {
		t.Helper()
		status, h, body := adminDo(t, base, method, path, token, "", headers...)
		if status != want {
			t.Fatalf("%s: status %d, want %d: %s", what, status, want, body)
		}
		if h.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("%s: CORS answer %q", what, h.Get("Access-Control-Allow-Origin"))
		}
		if strings.Contains(body, adminToken) || strings.Contains(body, adminClientKey) {
			t.Fatalf("%s: the answer repeats a secret: %s", what, body)
		}
	}
	f("no token", "GET", "/admin/api/status", "", 401)
	f("wrong token", "GET", "/admin/api/status", "adm-wrong-wrong-wrong-wrong", 401)
	f("token prefix", "GET", "/admin/api/status", adminToken[:len(adminToken)-1], 401)
	f("client key", "GET", "/admin/api/status", adminClientKey, 403)
	f("client key acting", "POST", "/admin/api/reload", adminClientKey, 403)
	f("no token acting", "POST", "/admin/api/reload", "", 401)
	f("no token events", "GET", "/admin/api/events", "", 401)
	f("valid", "GET", "/admin/api/status", adminToken, 200)
	f("own origin", "GET", "/admin/api/status", adminToken, 200, "Origin", base)
	f("foreign origin", "GET", "/admin/api/status", adminToken, 403, "Origin", "http://evil.example")
	f("foreign origin acting", "POST", "/admin/api/reload", adminToken, 403, "Origin", "http://evil.example")
	f("null origin", "GET", "/admin/api/status", adminToken, 403, "Origin", "null")
	f("cross-site fetch", "GET", "/admin/api/status", adminToken, 403, "Sec-Fetch-Site", "cross-site")
	f("preflight", "OPTIONS", "/admin/api/status", "", 403, "Origin", "http://evil.example", "Access-Control-Request-Method", "POST")
	f("rebound host", "GET", "/admin/api/status", adminToken, 403, "Host", "evil.example")
	f("rebound host console", "GET", "/console/", "", 403, "Host", "evil.example")
	f("unknown route", "GET", "/admin/api/nope", adminToken, 404)
	f("wrong method", "GET", "/admin/api/reload", adminToken, 405)
	if strings.Contains(logs.String(), adminToken) || strings.Contains(logs.String(), adminClientKey) {
		t.Fatal("the log holds a secret")
	}
}

// TestAdminConsoleAssets: the console's pages are served from the binary
// with their content types, a strict CSP and framing denied.
func TestAdminConsoleAssets(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, &recorder{reply: anthropicReply})
	base, _ := serveAdminAt(t, parseConfig(t, adminConfig, up.URL), "0.0.0.0:0", nil)
	f := func(path, ctype, contains string) {
		t.Helper()
		status, h, body := adminDo(t, base, "GET", path, "", "")
		if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), ctype) || !strings.Contains(body, contains) {
			t.Fatalf("GET %s: %d %q %.80q", path, status, h.Get("Content-Type"), body)
		}
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
			t.Fatalf("GET %s: CSP %q", path, csp)
		}
		if h.Get("X-Frame-Options") != "DENY" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("GET %s: headers %v", path, h)
		}
	}
	f("/console/", "text/html", "<title>slipstream console</title>")
	f("/console", "text/html", "<title>slipstream console</title>") // redirected to /console/
	f("/console/app.js", "text/javascript", "sessionStorage")
	f("/console/app.css", "text/css", "@media")
	if status, _, _ := adminDo(t, base, "GET", "/console/../api/status", "", ""); status == 200 {
		t.Fatal("a dotted path is served")
	}
	if status, _, _ := adminDo(t, base, "GET", "/console/nope.js", "", ""); status != 404 {
		t.Fatalf("unknown asset: %d", status)
	}
}

// TestAdminWithoutTokens: with no admin token configured the API and the
// console are off on a listener other hosts reach, with a message saying
// how to turn them on, and served on a loopback one (a client key is
// still refused there).
func TestAdminWithoutTokens(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, &recorder{reply: anthropicReply})
	yml := strings.Replace(adminConfig, "    - {name: ops, token: "+adminToken+"}\n", "", 1)
	yml = strings.Replace(yml, "admin:\n  tokens:\n", "", 1)
	open, _ := serveAdminAt(t, parseConfig(t, yml, up.URL), "0.0.0.0:0", nil)
	for _, path := range []string{"/admin/api/status", "/console/"} {
		status, _, body := adminDo(t, open, "GET", path, "", "")
		if status != 403 || !strings.Contains(body, "admin.tokens") {
			t.Fatalf("GET %s without tokens on a public listener: %d %s", path, status, body)
		}
	}
	local, _ := serveAdminAt(t, parseConfig(t, yml, up.URL), "127.0.0.1:0", nil)
	if status, _, body := adminDo(t, local, "GET", "/admin/api/status", "", ""); status != 200 {
		t.Fatalf("loopback without tokens: %d %s", status, body)
	}
	if status, _, _ := adminDo(t, local, "GET", "/admin/api/status", adminClientKey, ""); status != 403 {
		t.Fatalf("client key on loopback: %d", status)
	}
}

// credentialOf finds a credential in GET providers.
func credentialOf(t *testing.T, base, prov, cred string) admin.Credential {
	t.Helper()
	var ps []admin.Provider
	adminGet(t, base, "/admin/api/providers", &ps)
	for _, p := range ps {
		for _, c := range p.Credentials {
			if p.Name == prov && c.Name == cred {
				return c
			}
		}
	}
	t.Fatalf("no credential %s/%s in %+v", prov, cred, ps)
	return admin.Credential{}
}

// TestAdminCredentialActions: a 429 rests a credential (shown cooling,
// with why); ending its cooldown makes it ready; a disabled credential is
// skipped by requests until enabled again; each action is logged with the
// admin token's name.
func TestAdminCredentialActions(t *testing.T) {
	t.Parallel()
	var limitA atomic.Bool
	limitA.Store(true)
	var usedA atomic.Int64
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("X-Api-Key") == "sk-up-a" {
			usedA.Add(1)
			if limitA.Load() {
				w.WriteHeader(429)
				io.WriteString(w, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`)
				return
			}
		}
		io.WriteString(w, anthropicReply)
	}))
	var logs testkit.Buffer
	base, _ := serveAdminAt(t, parseConfig(t, adminConfig, up.URL), "0.0.0.0:0", &logs)
	ask := func() {
		t.Helper()
		status, _, body := post(t, base+"/v1/messages", `{"model":"claude-x","max_tokens":5,"messages":[]}`, "x-api-key", adminClientKey)
		if status != 200 {
			t.Fatalf("request: %d %s", status, body)
		}
	}
	ask() // round-robin starts at ka: 429, fails over to kb
	ask()
	c := credentialOf(t, base, "anth", "ka")
	if c.State != admin.StateCooling || c.CoolingUntil == nil || !c.CoolingUntil.After(time.Now()) || c.Why != "rate_limited" || c.LastError != "rate_limited" {
		t.Fatalf("after a 429: %+v", c)
	}
	if c := credentialOf(t, base, "anth", "kb"); c.State != admin.StateReady {
		t.Fatalf("kb: %+v", c)
	}
	act := func(path, body string, want int) {
		t.Helper()
		if status, _, b := adminDo(t, base, "POST", "/admin/api/"+path, adminToken, body); status != want {
			t.Fatalf("POST %s: %d %s", path, status, b)
		}
	}
	limitA.Store(false)
	act("credentials/end-cooldown", `{"provider":"anth","credential":"ka"}`, 200)
	if c := credentialOf(t, base, "anth", "ka"); c.State != admin.StateReady || c.CoolingUntil != nil {
		t.Fatalf("after end-cooldown: %+v", c)
	}
	act("credentials/disable", `{"provider":"anth","credential":"ka"}`, 200)
	if c := credentialOf(t, base, "anth", "ka"); c.State != admin.StateDisabled {
		t.Fatalf("after disable: %+v", c)
	}
	before := usedA.Load()
	for range 4 {
		ask()
	}
	if usedA.Load() != before {
		t.Fatal("a disabled credential was used")
	}
	act("credentials/enable", `{"provider":"anth","credential":"ka"}`, 200)
	for range 4 {
		ask()
	}
	if usedA.Load() == before {
		t.Fatal("an enabled credential is never used")
	}
	act("credentials/disable", `{"provider":"anth","credential":"nope"}`, 404)
	act("credentials/disable", `{"provider":"nope","credential":"ka"}`, 404)
	act("credentials/disable", `{"provider":"anth"}`, 400)
	act("credentials/disable", `not json`, 400)
	if status, _, _ := adminDo(t, base, "POST", "/admin/api/credentials/disable", adminToken, "provider=anth", "Content-Type", "application/x-www-form-urlencoded"); status != 415 {
		t.Fatalf("form body: %d", status)
	}
	l := logs.String()
	for _, want := range []string{`admin action: admin="ops" action=end-cooldown target="anth/ka" outcome="ok"`, `action=disable target="anth/ka"`, `action=enable target="anth/ka"`} {
		if !strings.Contains(l, want) {
			t.Fatalf("log lacks %q:\n%s", want, l)
		}
	}
	if strings.Contains(l, adminToken) {
		t.Fatal("the log holds the admin token")
	}
}

// TestAdminKeysAndStatus: a key's usage and limits move with a request;
// the ledger's routes say it is not enabled.
func TestAdminKeysAndStatus(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, &recorder{reply: anthropicReply})
	base, _ := serveAdminAt(t, parseConfig(t, adminConfig, up.URL), "0.0.0.0:0", nil)
	if status, _, body := post(t, base+"/v1/messages", `{"model":"claude-x","max_tokens":5,"messages":[]}`, "x-api-key", adminClientKey); status != 200 {
		t.Fatalf("request: %d %s", status, body)
	}
	var ks []admin.Key
	adminGet(t, base, "/admin/api/keys", &ks)
	if len(ks) != 1 || ks[0].Name != "dev" || ks[0].Requests != 1 || ks[0].InputTokens != 2900 || ks[0].OutputTokens != 12 ||
		ks[0].RPM != 100 || ks[0].RPMNow != 1 || ks[0].Budget != 100000 || ks[0].BudgetUsed != 2912 || ks[0].BudgetLeft == nil || *ks[0].BudgetLeft != 100000-2912 {
		t.Fatalf("keys: %+v", ks)
	}
	var st admin.Status
	adminGet(t, base, "/admin/api/status", &st)
	if st.Version != "test-1" || len(st.ConfigDigest) != 64 || st.Traffic.Requests != 1 || st.Traffic.OutputTokens != 12 || st.LastReload != nil || st.Ledger {
		t.Fatalf("status: %+v", st)
	}
	for _, path := range []string{"/admin/api/usage?by=key", "/admin/api/requests?limit=5"} {
		if status, _, body := adminDo(t, base, "GET", path, adminToken, ""); status != 503 || !strings.Contains(body, "usage ledger is not enabled") {
			t.Fatalf("GET %s: %d %s", path, status, body)
		}
	}
}

// TestAdminKeyMoney: a key with budget_usd shows its money budget and what
// it spent, the request's cost at the configured price; a key without one
// shows neither.
func TestAdminKeyMoney(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, &recorder{reply: anthropicReply})
	yml := strings.Replace(adminConfig, "budget: 100000, rpm: 100}", "budget_usd: 2.5, rpm: 100}\n  - {name: plain, key: sk-plain-0123456789}", 1) +
		"prices:\n  - {model: \"claude-x\", input: 3, output: 15}\n"
	base, _ := serveAdminAt(t, parseConfig(t, yml, up.URL), "0.0.0.0:0", nil)
	if status, _, body := post(t, base+"/v1/messages", `{"model":"claude-x","max_tokens":5,"messages":[]}`, "x-api-key", adminClientKey); status != 200 {
		t.Fatalf("request: %d %s", status, body)
	}
	var ks []admin.Key
	adminGet(t, base, "/admin/api/keys", &ks)
	if len(ks) != 2 || ks[0].BudgetUSD == nil || ks[0].SpentUSD == nil || ks[1].BudgetUSD != nil || ks[1].SpentUSD != nil {
		t.Fatalf("keys: %+v", ks)
	}
	// 2900 input tokens at $3 and 12 output tokens at $15 per million.
	if want := 2900*3e-6 + 12*15e-6; *ks[0].BudgetUSD != 2.5 || *ks[0].SpentUSD < want-1e-9 || *ks[0].SpentUSD > want+1e-9 {
		t.Fatalf("budget %v spent %v, want 2.5 and %v", *ks[0].BudgetUSD, *ks[0].SpentUSD, want)
	}
}

// TestAdminUsageFromLedger: with a ledger, the usage and requests routes
// answer from it (costs included) and the status shows today's spend.
func TestAdminUsageFromLedger(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, &recorder{reply: anthropicReply})
	yml := adminConfig + "prices:\n  - {model: \"claude-x\", input: 3, output: 15}\n" +
		"usage: {database: \"" + filepath.Join(t.TempDir(), "usage.db") + "\", batch_interval: 5ms}\n"
	base, s := serveAdminAt(t, parseConfig(t, yml, up.URL), "0.0.0.0:0", nil)
	for range 2 {
		if status, _, body := post(t, base+"/v1/messages", `{"model":"claude-x","max_tokens":5,"messages":[]}`, "x-api-key", adminClientKey); status != 200 {
			t.Fatalf("request: %d %s", status, body)
		}
	}
	waitLedger(t, s.Ledger(), 2)
	const cost = 2900*3e-6 + 12*15e-6 // per request
	near := func(got, want float64) bool { return got > want-1e-9 && got < want+1e-9 }
	var usage struct{ Rows []admin.UsageRow }
	adminGet(t, base, "/admin/api/usage?by=key", &usage)
	rows := usage.Rows
	if len(rows) != 1 || rows[0].Group != "dev" || rows[0].Requests != 2 || rows[0].InputTokens != 5800 || !near(rows[0].CostUSD, 2*cost) {
		t.Fatalf("usage by key: %+v", rows)
	}
	var reqs []admin.RequestRow
	adminGet(t, base, "/admin/api/requests?limit=5", &reqs)
	if len(reqs) != 2 || reqs[0].Time.Before(reqs[1].Time) || reqs[0].CostUSD == nil || !near(*reqs[0].CostUSD, cost) || reqs[0].Key != "dev" {
		t.Fatalf("requests: %+v", reqs)
	}
	var st admin.Status
	adminGet(t, base, "/admin/api/status", &st)
	if !st.Ledger || st.Traffic.SpentUSDToday == nil || !near(*st.Traffic.SpentUSDToday, 2*cost) {
		t.Fatalf("status: %+v", st)
	}
}

// TestAdminReload: the reload action reloads the file the server watches
// and the status shows it; a server without a file says it cannot.
func TestAdminReload(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, &recorder{reply: anthropicReply})
	yml := strings.ReplaceAll(adminConfig, "${UP}", up.URL)
	path := filepath.Join(t.TempDir(), "slipstream.yaml")
	if err := os.WriteFile(path, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs testkit.Buffer
	base, s := serveAdminAt(t, parseConfig(t, adminConfig, up.URL), "0.0.0.0:0", &logs)
	if status, _, body := adminDo(t, base, "POST", "/admin/api/reload", adminToken, ""); status != 409 || !strings.Contains(body, "without a configuration file") {
		t.Fatalf("reload without a file: %d %s", status, body)
	}
	stop := make(chan struct{})
	defer close(stop)
	load := func() (*config.Config, error) { return config.LoadFile(path, config.Override{}) }
	if err := s.WatchConfig(path, load, stop); err != nil {
		t.Fatal(err)
	}
	if status, _, body := adminDo(t, base, "POST", "/admin/api/reload", adminToken, ""); status != 200 {
		t.Fatalf("reload: %d %s", status, body)
	}
	var st admin.Status
	adminGet(t, base, "/admin/api/status", &st)
	if st.LastReload == nil || !st.LastReload.OK || !strings.Contains(st.LastReload.Source, "management API") {
		t.Fatalf("status after reload: %+v", st.LastReload)
	}
	if !strings.Contains(logs.String(), `admin="ops" action=reload`) {
		t.Fatalf("reload not logged:\n%s", logs.String())
	}
}

// liveOne waits until exactly one request is live and returns it.
func liveOne(t *testing.T, base string) admin.LiveRequest {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var ls []admin.LiveRequest
		adminGet(t, base, "/admin/api/live", &ls)
		if len(ls) == 1 {
			return ls[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("live: %+v", ls)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAdminCancelHTTPStream: a live SSE stream is listed with its id, key,
// model and progress; cancelling it ends the client's stream with
// Anthropic's error event, closes the upstream connection, leaves the
// live list, and logs cause "cancelled".
func TestAdminCancelHTTPStream(t *testing.T) {
	t.Parallel()
	upURL, closed, _ := upstreamClosed(t, 0, fmt.Sprintf(anthEvent, 1)+fmt.Sprintf(anthEvent, 2), fmt.Sprintf(anthEvent, 3))
	var logs testkit.Buffer
	base, _ := serveAdminAt(t, parseConfig(t, adminConfig, upURL), "0.0.0.0:0", &logs)
	req, _ := http.NewRequest("POST", base+"/v1/messages", strings.NewReader(`{"model":"claude-x","max_tokens":5,"messages":[],"stream":true}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", adminClientKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil { // the first event has arrived
		t.Fatal(err)
	}
	head := resp.Header.Get("X-Slipstream-Request-Id")
	r := liveOne(t, base)
	if head != r.ID || r.Key != "dev" || r.Model != "claude-x" || r.Provider != "anth" || r.Credential != "ka" || r.Transport != "http" || !r.Stream {
		t.Fatalf("live %+v (request id %q)", r, head)
	}
	deadline := time.Now().Add(5 * time.Second)
	for r.BytesOut == 0 { // (Anthropic reports output tokens at the end: Tokens stays 0 here)
		if time.Now().After(deadline) {
			t.Fatalf("no progress: %+v", r)
		}
		time.Sleep(20 * time.Millisecond)
		r = liveOne(t, base)
	}
	if c := credentialOf(t, base, "anth", "ka"); c.InFlight != 1 {
		t.Fatalf("ka while streaming: %+v", c)
	}
	cancelled := time.Now()
	if status, _, b := adminDo(t, base, "POST", "/admin/api/live/cancel", adminToken, `{"id":"`+r.ID+`"}`); status != 200 {
		t.Fatalf("cancel: %d %s", status, b)
	}
	rest, _ := io.ReadAll(br) // to the end of the chunked body
	if time.Since(cancelled) > 2*time.Second {
		t.Fatalf("the stream ended %v after the cancel", time.Since(cancelled))
	}
	if !strings.Contains(string(rest), "event: error\n") || !strings.Contains(string(rest), "cancelled by the gateway's operator") {
		t.Fatalf("the client's stream ends with %q", clipT(rest))
	}
	waitClosed(t, closed, cancelled, time.Second, "cancel")
	deadline = time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), `cause=cancelled`) {
		if time.Now().After(deadline) {
			t.Fatalf("access log lacks cause=cancelled:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	var ls []admin.LiveRequest
	adminGet(t, base, "/admin/api/live", &ls)
	if len(ls) != 0 {
		t.Fatalf("still live: %+v", ls)
	}
	if status, _, _ := adminDo(t, base, "POST", "/admin/api/live/cancel", adminToken, `{"id":"`+r.ID+`"}`); status != 404 {
		t.Fatalf("cancel of an ended request: %d", status)
	}
}

// TestAdminCancelWebSocket: a Responses turn over the WebSocket
// transport is live as "websocket"; cancelling it ends the turn with an
// error frame and the upstream connection is closed.
func TestAdminCancelWebSocket(t *testing.T) {
	t.Parallel()
	hold, gone := make(chan struct{}), make(chan struct{})
	defer close(hold)
	u := &sseUpstream{reply: func(int, []byte) upReply {
		return upReply{body: textAnswer("resp_1", "hello"), hold: hold, gone: gone}
	}}
	up := newUpstream(t, u)
	yml := "admin: {tokens: [{name: ops, token: " + adminToken + "}]}\nproviders:\n  - {name: up, kind: openai, api: responses, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 0s, ws_ping: 100ms}\n"
	base, _ := serveAdminAt(t, parseConfig(t, yml, up.URL), "127.0.0.1:0", nil)
	c, _ := wsDial(t, base, "/v1/responses")
	wsSend(t, c, frameJSON(`[{"role":"user","content":"hi"}]`, ""))
	r := liveOne(t, base)
	if r.Transport != "websocket" || r.Provider != "up" {
		t.Fatalf("live %+v", r)
	}
	if status, _, b := adminDo(t, base, "POST", "/admin/api/live/cancel", adminToken, `{"id":"`+r.ID+`"}`); status != 200 {
		t.Fatalf("cancel: %d %s", status, b)
	}
	evs := wsResponse(t, c)
	end := last(evs)
	if end.Type != "error" && end.Type != "response.failed" || !strings.Contains(string(end.Raw), "cancelled") {
		t.Fatalf("the turn ends with %s", end.Raw)
	}
	select {
	case <-gone:
	case <-time.After(3 * time.Second):
		t.Fatal("the upstream connection is still open")
	}
}

// TestAdminEvents: the live feed announces a request going live and
// ending, and an action, to a subscriber holding the token, also after
// timeouts.write has passed since it opened.
func TestAdminEvents(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, &recorder{reply: anthropicReply})
	yml := strings.Replace(adminConfig, "timeouts: {keepalive: 0s}", "timeouts: {keepalive: 0s, write: 1s}", 1)
	base, _ := serveAdminAt(t, parseConfig(t, yml, up.URL), "0.0.0.0:0", nil)
	req, _ := http.NewRequest("GET", base+"/admin/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	br := bufio.NewReader(resp.Body)
	if line, _ := br.ReadString('\n'); line != ": hello\n" {
		t.Fatalf("first line %q", line)
	}
	time.Sleep(1500 * time.Millisecond) // past timeouts.write: the feed lives on
	if status, _, body := post(t, base+"/v1/messages", `{"model":"claude-x","max_tokens":5,"messages":[]}`, "x-api-key", adminClientKey); status != 200 {
		t.Fatalf("request: %d %s", status, body)
	}
	adminDo(t, base, "POST", "/admin/api/credentials/disable", adminToken, `{"provider":"anth","credential":"kb"}`)
	want := []string{"event: live.start", "event: live.end", "event: credential", "event: action"}
	got := ""
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, w := range want {
			for !strings.Contains(got, w) {
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				got += line
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		resp.Body.Close()
		<-done
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Fatalf("feed lacks %q:\n%s", w, got)
		}
	}
	if !strings.Contains(got, `"key":"dev"`) || !strings.Contains(got, `"state":"disabled"`) {
		t.Fatalf("feed data:\n%s", got)
	}
}

// TestAdminLiveUnderLoad: streams start, progress and end on several
// connections while the API lists, counts and cancels them; run under
// -race it checks the live registry's sharing.
func TestAdminLiveUnderLoad(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 5 {
			fmt.Fprintf(w, anthEvent, i)
			w.(http.Flusher).Flush()
			time.Sleep(time.Millisecond)
		}
		io.WriteString(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	base, _ := serveAdminAt(t, parseConfig(t, adminConfig, up.URL), "0.0.0.0:0", nil)
	const clients, each = 4, 15
	done := make(chan struct{})
	var served atomic.Int64
	for range clients {
		go func() {
			defer func() { done <- struct{}{} }()
			for range each {
				req, _ := http.NewRequest("POST", base+"/v1/messages", strings.NewReader(`{"model":"claude-x","max_tokens":5,"messages":[],"stream":true}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Api-Key", adminClientKey)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				served.Add(1)
			}
		}()
	}
	for finished := 0; finished < clients; {
		select {
		case <-done:
			finished++
		default:
			var ls []admin.LiveRequest
			adminGet(t, base, "/admin/api/live", &ls)
			for _, r := range ls {
				if r.Key != "dev" || r.Model != "claude-x" || r.Transport != "http" {
					t.Fatalf("live %+v", r)
				}
				adminDo(t, base, "POST", "/admin/api/live/cancel", adminToken, `{"id":"`+r.ID+`"}`)
			}
			var ps []admin.Provider
			adminGet(t, base, "/admin/api/providers", &ps)
		}
	}
	var st admin.Status
	adminGet(t, base, "/admin/api/status", &st)
	if st.Traffic.Requests != served.Load() || st.Traffic.InFlight != 0 {
		t.Fatalf("status %+v after %d requests", st.Traffic, served.Load())
	}
}

// TestAdminCancelMockStream: a paced mock stream is cancelled between its
// events and ends with the dialect's error event.
func TestAdminCancelMockStream(t *testing.T) {
	t.Parallel()
	yml := "admin: {tokens: [{name: ops, token: " + adminToken + "}]}\nproviders:\n  - {name: m, kind: mock, models: [\"*\"], reply: \"" + strings.Repeat("word ", 200) + "\", chunks: 200, chunk_delay: 20ms}\ntimeouts: {keepalive: 0s}\n"
	base, _ := serveAdminAt(t, parseConfig(t, yml, ""), "127.0.0.1:0", nil)
	resp, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := liveOne(t, base)
	if r.Provider != "m" {
		t.Fatalf("live %+v", r)
	}
	if status, _, b := adminDo(t, base, "POST", "/admin/api/live/cancel", adminToken, `{"id":"`+r.ID+`"}`); status != 200 {
		t.Fatalf("cancel: %d %s", status, b)
	}
	start := time.Now()
	rest, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(rest), "cancelled by the gateway's operator") || time.Since(start) > 2*time.Second {
		t.Fatalf("after %v the stream ends with %q", time.Since(start), clipT(rest[max(0, len(rest)-300):]))
	}
}

// TestAdminAccountStates: a subscription account rested by its quota
// shows cooling with the provider's reason and its quota window; one the
// provider banned shows disabled.
func TestAdminAccountStates(t *testing.T) {
	t.Parallel()
	rig := newAccountRig(t, accounts.TypeClaude, "a1", "a2", "a3")
	rig.answer = func(n int64, name string, w http.ResponseWriter, r *http.Request) bool {
		switch name {
		case "a1":
			w.Header().Set("Anthropic-Ratelimit-Unified-Status", "rejected")
			w.Header().Set("Anthropic-Ratelimit-Unified-5h-Status", "rejected")
			w.Header().Set("Anthropic-Ratelimit-Unified-5h-Reset", fmt.Sprint(rig.clk.Now().Add(2*time.Hour).Unix()))
			w.WriteHeader(429)
			io.WriteString(w, `{"type":"error","error":{"type":"rate_limit_error","message":"usage limit"}}`)
			return true
		case "a2":
			w.WriteHeader(400)
			io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"This organization has been disabled."}}`)
			return true
		}
		return false
	}
	rig.startWith(config.KindClaudeAccount, "admin: {tokens: [{name: ops, token: "+adminToken+"}]}", "    strategy: fill-first\n")
	if status, body := rig.claude(claudeCodeBody); status != 200 {
		t.Fatalf("status %d body %s", status, body)
	}
	a1, a2, a3 := credentialOf(t, rig.base, "acct", "a1"), credentialOf(t, rig.base, "acct", "a2"), credentialOf(t, rig.base, "acct", "a3")
	if a1.State != admin.StateCooling || a1.CoolingUntil == nil || a1.Why == "" {
		t.Fatalf("a1: %+v", a1)
	}
	if a2.State != admin.StateDisabled || a3.State != admin.StateReady {
		t.Fatalf("a2 %+v, a3 %+v", a2, a3)
	}
	rig.noSecrets("providers", fmt.Sprint(a1, a2, a3))
}
