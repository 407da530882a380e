// Package oauthstub is a loopback stand-in for the providers' OAuth
// servers, for tests: it validates what the real endpoints validate
// (client id, redirect URI, state, S256 PKCE, single-use codes, rotating
// single-use refresh tokens) and records what it saw. A refresh token
// spent twice fails the test that owns the stub.
package oauthstub

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Stub is one provider's OAuth server.
type Stub struct {
	*httptest.Server
	t testing.TB

	ClientID    string
	RedirectURI string
	// JSON: the token endpoint takes JSON (Claude); else a form.
	JSON bool
	// PKCE: the authorize endpoint requires an S256 challenge.
	PKCE bool
	// ExpiresIn is the lifetime of issued access tokens. Default 3600.
	ExpiresIn int64
	// OmitRefresh leaves refresh_token out of refresh answers (the old
	// one stays valid).
	OmitRefresh bool
	// RefreshFail, when set, may script the n-th refresh's failure: a
	// status (0: none) and a Retry-After value.
	RefreshFail func(n int64) (status int, retryAfter string)
	// RefreshDelay slows each refresh (concurrency tests).
	RefreshDelay time.Duration
	// DevicePending is how many device-token polls answer 403 first.
	DevicePending int
	// AllowReuse makes a second use of a refresh token answer
	// refresh_token_reused without failing the test.
	AllowReuse bool
	// DeviceRedirect is the redirect URI device-flow codes are issued
	// for. Default RedirectURI.
	DeviceRedirect string
	// NoEmail leaves the account object out of Claude token answers (the
	// email then comes from the profile endpoint).
	NoEmail bool
	// AccountID and Plan go into Codex id_tokens.
	AccountID, Plan, Email string

	// Project is the Code Assist project onboardUser hands out (after
	// one done:false answer).
	Project string

	Refreshes atomic.Int64
	polls     atomic.Int64
	onboards  atomic.Int64

	mu      sync.Mutex
	codes   map[string]grant // issued codes
	live    map[string]bool  // refresh tokens that may be spent
	spent   map[string]bool
	access  map[string]bool // valid access tokens
	devices map[string]grant
	seen    []string // every token and code issued (leak scans)
}

type grant struct {
	challenge, redirect, state string
	used                       bool
}

// New starts a stub; its URLs are s.URL + /authorize, /token,
// /device/usercode, /device/token, /profile.
func New(t testing.TB, clientID, redirect string, jsonToken, pkce bool) *Stub {
	s := &Stub{t: t, ClientID: clientID, RedirectURI: redirect, JSON: jsonToken, PKCE: pkce, ExpiresIn: 3600,
		codes: map[string]grant{}, live: map[string]bool{}, spent: map[string]bool{}, access: map[string]bool{}, devices: map[string]grant{},
		AccountID: "acct-123", Plan: "pro", Email: "user@example.com"}
	mux := http.NewServeMux()
	mux.HandleFunc("/authorize", s.authorize)
	mux.HandleFunc("/token", s.token)
	mux.HandleFunc("/device/usercode", s.usercode)
	mux.HandleFunc("/device/token", s.deviceToken)
	mux.HandleFunc("/profile", s.profile)
	mux.HandleFunc("/v1internal:loadCodeAssist", s.loadCodeAssist)
	mux.HandleFunc("/v1internal:onboardUser", s.onboardUser)
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func random(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// Secrets returns every token and code the stub issued.
func (s *Stub) Secrets() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// Issue makes a valid refresh token (and access token), as a login would
// have, for tests that start from a stored account.
func (s *Stub) Issue() (access, refresh string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	access, refresh = random("at-"), random("rt-")
	s.access[access], s.live[refresh] = true, true
	s.seen = append(s.seen, access, refresh)
	return access, refresh
}

// ValidAccess reports whether tok is an access token the stub issued.
func (s *Stub) ValidAccess(tok string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.access[tok]
}

// Revoke makes every access token invalid (a 401 from upstreams).
func (s *Stub) Revoke() {
	s.mu.Lock()
	s.access = map[string]bool{}
	s.mu.Unlock()
}

func (s *Stub) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	switch {
	case q.Get("client_id") != s.ClientID:
		http.Error(w, "bad client_id", 400)
		return
	case q.Get("redirect_uri") != s.RedirectURI:
		http.Error(w, "bad redirect_uri", 400)
		return
	case q.Get("response_type") != "code":
		http.Error(w, "bad response_type", 400)
		return
	case q.Get("state") == "":
		http.Error(w, "missing state", 400)
		return
	case s.PKCE && (q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == ""):
		http.Error(w, "PKCE S256 required", 400)
		return
	}
	code := random("code-")
	s.mu.Lock()
	s.codes[code] = grant{challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri"), state: q.Get("state")}
	s.seen = append(s.seen, code)
	s.mu.Unlock()
	http.Redirect(w, r, s.RedirectURI+"?code="+url.QueryEscape(code)+"&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
}

func (s *Stub) params(r *http.Request) (map[string]string, error) {
	m := map[string]string{}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	if s.JSON {
		if r.Header.Get("Content-Type") != "application/json" {
			return nil, fmt.Errorf("want a JSON body")
		}
		return m, json.Unmarshal(b, &m)
	}
	v, err := url.ParseQuery(string(b))
	if err != nil || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		return nil, fmt.Errorf("want a form body")
	}
	for k := range v {
		m[k] = v.Get(k)
	}
	return m, nil
}

func oauthError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":%q,"error_description":"stub"}`, code)
}

func (s *Stub) token(w http.ResponseWriter, r *http.Request) {
	p, err := s.params(r)
	if err != nil {
		oauthError(w, 400, "invalid_request")
		return
	}
	if p["client_id"] != s.ClientID {
		oauthError(w, 401, "invalid_client")
		return
	}
	switch p["grant_type"] {
	case "authorization_code":
		s.exchange(w, p)
	case "refresh_token":
		s.refresh(w, p)
	default:
		oauthError(w, 400, "unsupported_grant_type")
	}
}

func (s *Stub) exchange(w http.ResponseWriter, p map[string]string) {
	s.mu.Lock()
	g, ok := s.codes[p["code"]]
	if ok {
		s.codes[p["code"]] = grant{used: true}
	}
	s.mu.Unlock()
	switch {
	case !ok || g.used:
		oauthError(w, 400, "invalid_grant")
		return
	case p["redirect_uri"] != g.redirect:
		oauthError(w, 400, "invalid_grant")
		return
	case s.PKCE && Challenge(p["code_verifier"]) != g.challenge:
		oauthError(w, 400, "invalid_grant")
		return
	case s.JSON && p["state"] != g.state:
		oauthError(w, 400, "invalid_request")
		return
	}
	s.issue(w, true)
}

// Challenge is the S256 PKCE challenge of a verifier.
func Challenge(verifier string) string {
	h := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

func (s *Stub) refresh(w http.ResponseWriter, p map[string]string) {
	n := s.Refreshes.Add(1)
	if s.RefreshFail != nil {
		if status, ra := s.RefreshFail(n); status != 0 {
			if ra != "" {
				w.Header().Set("Retry-After", ra)
			}
			oauthError(w, status, "temporarily_unavailable")
			return
		}
	}
	if s.RefreshDelay > 0 {
		time.Sleep(s.RefreshDelay)
	}
	rt := p["refresh_token"]
	s.mu.Lock()
	live, spent := s.live[rt], s.spent[rt]
	if live && !s.OmitRefresh {
		delete(s.live, rt)
		s.spent[rt] = true
	}
	s.mu.Unlock()
	if spent {
		if !s.AllowReuse {
			s.t.Errorf("oauthstub: a rotated refresh token was spent twice")
		}
		oauthError(w, 400, "refresh_token_reused")
		return
	}
	if !live {
		oauthError(w, 400, "invalid_grant")
		return
	}
	s.issue(w, !s.OmitRefresh)
}

func (s *Stub) issue(w http.ResponseWriter, withRefresh bool) {
	access := random("at-")
	out := map[string]any{"access_token": access, "expires_in": s.ExpiresIn, "token_type": "Bearer"}
	s.mu.Lock()
	s.access[access] = true
	s.seen = append(s.seen, access)
	if withRefresh {
		rt := random("rt-")
		s.live[rt] = true
		s.seen = append(s.seen, rt)
		out["refresh_token"] = rt
	}
	s.mu.Unlock()
	if s.JSON && !s.NoEmail {
		out["account"] = map[string]string{"uuid": "u-1", "email_address": s.Email}
		out["organization"] = map[string]string{"uuid": "o-1", "name": "org"}
	} else if !s.JSON {
		claims, _ := json.Marshal(map[string]any{"email": s.Email,
			"https://api.openai.com/auth": map[string]string{"chatgpt_account_id": s.AccountID, "chatgpt_plan_type": s.Plan}})
		out["id_token"] = "eyJhbGciOiJub25lIn0." + base64.RawURLEncoding.EncodeToString(claims) + "."
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func (s *Stub) usercode(w http.ResponseWriter, r *http.Request) {
	var in struct {
		ClientID string `json:"client_id"`
	}
	if json.NewDecoder(r.Body).Decode(&in) != nil || in.ClientID != s.ClientID {
		http.Error(w, "bad client", 400)
		return
	}
	id, code := random("dev-"), "ABCD-1234"
	s.mu.Lock()
	s.devices[id] = grant{}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"device_auth_id":%q,"user_code":%q,"interval":"0"}`, id, code)
}

func (s *Stub) deviceToken(w http.ResponseWriter, r *http.Request) {
	var in struct {
		ID   string `json:"device_auth_id"`
		Code string `json:"user_code"`
	}
	if json.NewDecoder(r.Body).Decode(&in) != nil {
		http.Error(w, "bad body", 400)
		return
	}
	s.mu.Lock()
	_, ok := s.devices[in.ID]
	s.mu.Unlock()
	if !ok || in.Code != "ABCD-1234" {
		http.Error(w, "unknown device", 400)
		return
	}
	if s.polls.Add(1) <= int64(s.DevicePending) {
		http.Error(w, `{"error":"authorization_pending"}`, 403)
		return
	}
	verifier := random("ver-")
	code := random("code-")
	s.mu.Lock()
	redirect := s.DeviceRedirect
	if redirect == "" {
		redirect = s.RedirectURI
	}
	s.codes[code] = grant{challenge: Challenge(verifier), redirect: redirect}
	s.seen = append(s.seen, code)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"authorization_code":%q,"code_verifier":%q,"code_challenge":%q}`, code, verifier, Challenge(verifier))
}

// Polls is how many device-token polls the stub answered.
func (s *Stub) Polls() int { return int(s.polls.Load()) }

func (s *Stub) profile(w http.ResponseWriter, r *http.Request) {
	tok := r.Header.Get("Authorization")
	if len(tok) < 8 || !s.ValidAccess(tok[7:]) {
		http.Error(w, "unauthorized", 401)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"account":{"email":%q},"email":%q}`, s.Email, s.Email)
}

// Itoa is strconv.Itoa, for tests building scripted answers.
func Itoa(n int) string { return strconv.Itoa(n) }

func (s *Stub) authorized(r *http.Request) bool {
	tok := r.Header.Get("Authorization")
	return len(tok) > 7 && s.ValidAccess(tok[7:])
}

// loadCodeAssist answers like a new Code Assist user: tiers, no project.
func (s *Stub) loadCodeAssist(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Metadata struct {
			IDEType string `json:"ideType"`
		} `json:"metadata"`
	}
	if !s.authorized(r) || json.NewDecoder(r.Body).Decode(&in) != nil || in.Metadata.IDEType == "" {
		http.Error(w, `{"error":{"code":400,"status":"INVALID_ARGUMENT"}}`, 400)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"allowedTiers":[{"id":"free-tier","isDefault":true},{"id":"standard-tier"}]}`)
}

// onboardUser answers done:false once, then the project.
func (s *Stub) onboardUser(w http.ResponseWriter, r *http.Request) {
	var in struct {
		TierID string `json:"tierId"`
	}
	if !s.authorized(r) || json.NewDecoder(r.Body).Decode(&in) != nil || in.TierID != "free-tier" {
		http.Error(w, `{"error":{"code":400,"status":"INVALID_ARGUMENT"}}`, 400)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if s.onboards.Add(1) == 1 {
		io.WriteString(w, `{"name":"op-1","done":false}`)
		return
	}
	fmt.Fprintf(w, `{"name":"op-1","done":true,"response":{"cloudaicompanionProject":{"id":%q,"name":"p"}}}`, s.Project)
}
