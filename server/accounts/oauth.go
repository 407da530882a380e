package accounts

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Flow is one provider's OAuth client: its endpoints (every URL can be
// overridden, so tests drive loopback stubs) and how it talks to them.
type Flow struct {
	Type string
	// ClientID (and ClientSecret for Google's installed-app clients) are
	// the provider CLI's public client.
	ClientID, ClientSecret string
	AuthorizeURL, TokenURL string
	// RedirectURI is the loopback address the provider registered for
	// the client; the login listens on its port.
	RedirectURI string
	Scopes      []string
	// JSONToken: the token endpoint takes JSON (Claude), not a form.
	JSONToken bool
	// PKCE: the flow sends an S256 code challenge.
	PKCE bool
	// Extra are further authorize parameters.
	Extra [][2]string
	// RefreshScope is sent with a refresh (Claude, Codex), or empty.
	RefreshScope string
	// Lead is how long before expiry the access token is refreshed.
	Lead time.Duration
	// Device endpoints (Codex): user code, token poll, verification page
	// and the redirect the exchanged code was issued for.
	DeviceCodeURL, DeviceTokenURL, DeviceVerifyURL, DeviceRedirectURI string
	// ProfileURL (Claude) or UserinfoURL (Google) fill the email.
	ProfileURL, UserinfoURL string
	// CodeAssistURL is the Code Assist base (Google accounts), for
	// project discovery.
	CodeAssistURL string
}

// Endpoints overrides a flow's URLs; empty fields keep the default.
type Endpoints struct {
	Authorize, Token, DeviceCode, DeviceToken, DeviceVerify, Profile, Userinfo, CodeAssist, Redirect string
}

// Published public client identities of the providers' CLIs (they are not
// secrets: they ship inside the CLIs).
const (
	claudeClientID = "9d1c250a-e61b-44d9-88ed-5944d1962f5e"
	codexClientID  = "app_EMoamEEZ73f0CkXaXp7hrann"
)

// DefaultFlow returns the built-in flow for an account type, or nil.
// Google's client ids come from the environment
// (SLIPSTREAM_GEMINI_CLIENT_ID/_SECRET, SLIPSTREAM_ANTIGRAVITY_CLIENT_ID/_SECRET)
// or the accounts config, since slipstream does not ship them.
func DefaultFlow(typ string) *Flow {
	switch typ {
	case TypeClaude:
		return &Flow{Type: typ, ClientID: claudeClientID,
			AuthorizeURL: "https://claude.ai/oauth/authorize", TokenURL: "https://platform.claude.com/v1/oauth/token",
			RedirectURI: "http://localhost:54545/callback",
			Scopes:      []string{"user:profile", "user:inference", "user:sessions:claude_code", "user:mcp_servers", "user:file_upload"},
			JSONToken:   true, PKCE: true, Extra: [][2]string{{"code", "true"}},
			RefreshScope: "user:profile user:inference user:sessions:claude_code user:mcp_servers user:file_upload",
			Lead:         4 * time.Hour, ProfileURL: "https://api.anthropic.com/api/oauth/profile"}
	case TypeCodex:
		return &Flow{Type: typ, ClientID: codexClientID,
			AuthorizeURL: "https://auth.openai.com/oauth/authorize", TokenURL: "https://auth.openai.com/oauth/token",
			RedirectURI: "http://localhost:1455/auth/callback",
			Scopes:      []string{"openid", "email", "profile", "offline_access"},
			PKCE:        true, Extra: [][2]string{{"prompt", "login"}, {"id_token_add_organizations", "true"}, {"codex_cli_simplified_flow", "true"}},
			RefreshScope: "openid profile email", Lead: 5 * 24 * time.Hour,
			DeviceCodeURL:     "https://auth.openai.com/api/accounts/deviceauth/usercode",
			DeviceTokenURL:    "https://auth.openai.com/api/accounts/deviceauth/token",
			DeviceVerifyURL:   "https://auth.openai.com/codex/device",
			DeviceRedirectURI: "https://auth.openai.com/deviceauth/callback"}
	case TypeGemini, TypeAntigravity:
		f := &Flow{Type: typ, AuthorizeURL: "https://accounts.google.com/o/oauth2/v2/auth", TokenURL: "https://oauth2.googleapis.com/token",
			Scopes: []string{"https://www.googleapis.com/auth/cloud-platform", "https://www.googleapis.com/auth/userinfo.email", "https://www.googleapis.com/auth/userinfo.profile"},
			Extra:  [][2]string{{"access_type", "offline"}, {"prompt", "consent"}}, Lead: 5 * time.Minute,
			UserinfoURL: "https://www.googleapis.com/oauth2/v1/userinfo", CodeAssistURL: "https://cloudcode-pa.googleapis.com"}
		env := "SLIPSTREAM_GEMINI_CLIENT_"
		f.RedirectURI = "http://localhost:8085/oauth2callback"
		if typ == TypeAntigravity {
			env = "SLIPSTREAM_ANTIGRAVITY_CLIENT_"
			f.RedirectURI = "http://localhost:51121/oauth-callback"
			f.Scopes = append(f.Scopes, "https://www.googleapis.com/auth/cclog", "https://www.googleapis.com/auth/experimentsandconfigs")
		}
		f.ClientID, f.ClientSecret = getenv(env+"ID"), getenv(env+"SECRET")
		return f
	}
	return nil
}

// Override sets the non-empty endpoints of e on f.
func (f *Flow) Override(e Endpoints) {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&f.AuthorizeURL, e.Authorize)
	set(&f.TokenURL, e.Token)
	set(&f.DeviceCodeURL, e.DeviceCode)
	set(&f.DeviceTokenURL, e.DeviceToken)
	set(&f.DeviceVerifyURL, e.DeviceVerify)
	set(&f.ProfileURL, e.Profile)
	set(&f.UserinfoURL, e.Userinfo)
	set(&f.CodeAssistURL, e.CodeAssist)
	set(&f.RedirectURI, e.Redirect)
}

// TokenResponse is a token endpoint's answer.
type TokenResponse struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	IDToken      string `json:"id_token"`
	ExpiresIn    int64  `json:"expires_in"`
	Account      struct {
		Email string `json:"email_address"`
	} `json:"account"`
}

// OAuthError is a refused token request. It holds the OAuth error code
// (invalid_grant, refresh_token_reused...), never the request's tokens.
type OAuthError struct {
	Status int
	Code   string
	// RetryAfter is the wait a 429 asked for.
	RetryAfter time.Duration
}

func (e *OAuthError) Error() string {
	if e.Code == "" {
		return "token endpoint answered status " + strconv.Itoa(e.Status)
	}
	return "token endpoint answered status " + strconv.Itoa(e.Status) + " (" + e.Code + ")"
}

// Revoked reports whether err says the refresh token is spent or revoked:
// only a new login helps.
func Revoked(err error) bool {
	var oe *OAuthError
	if !errors.As(err, &oe) {
		return false
	}
	return oe.Code == "invalid_grant" || oe.Code == "refresh_token_reused" || oe.Code == "refresh_token_expired" || oe.Code == "refresh_token_invalidated"
}

// Exchange trades an authorization code for tokens.
func (f *Flow) Exchange(ctx context.Context, c *http.Client, code, verifier, state, redirect string) (*TokenResponse, error) {
	p := [][2]string{{"grant_type", "authorization_code"}, {"code", code}, {"redirect_uri", redirect}, {"client_id", f.ClientID}}
	if f.ClientSecret != "" {
		p = append(p, [2]string{"client_secret", f.ClientSecret})
	}
	if verifier != "" {
		p = append(p, [2]string{"code_verifier", verifier})
	}
	if f.JSONToken && state != "" {
		p = append(p, [2]string{"state", state})
	}
	return f.token(ctx, c, p)
}

// Refresh spends refreshToken for new tokens. The answer may rotate the
// refresh token (it must be saved before any further use) or omit it
// (the old one stays valid).
func (f *Flow) Refresh(ctx context.Context, c *http.Client, refreshToken string) (*TokenResponse, error) {
	p := [][2]string{{"grant_type", "refresh_token"}, {"refresh_token", refreshToken}, {"client_id", f.ClientID}}
	if f.ClientSecret != "" {
		p = append(p, [2]string{"client_secret", f.ClientSecret})
	}
	if f.RefreshScope != "" {
		p = append(p, [2]string{"scope", f.RefreshScope})
	}
	return f.token(ctx, c, p)
}

func (f *Flow) token(ctx context.Context, c *http.Client, params [][2]string) (*TokenResponse, error) {
	var body []byte
	ct := "application/x-www-form-urlencoded"
	if f.JSONToken {
		m := map[string]string{}
		for _, kv := range params {
			m[kv[0]] = kv[1]
		}
		body, _ = json.Marshal(m) // a map of strings always marshals
		ct = "application/json"
	} else {
		v := url.Values{}
		for _, kv := range params {
			v.Set(kv[0], kv[1])
		}
		body = []byte(v.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.TokenURL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("cannot build the token request: %w", err)
	}
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Accept", "application/json")
	var tr TokenResponse
	if err := doJSON(c, req, &tr); err != nil {
		return nil, err
	}
	if tr.AccessToken == "" {
		return nil, errors.New("token endpoint answered without an access_token")
	}
	return &tr, nil
}

// doJSON sends req and decodes a 2xx JSON answer into out; any other
// status is an *OAuthError carrying the answer's `error` code only.
func doJSON(c *http.Client, req *http.Request, out any) error {
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach %s: %w", req.URL.Host, unwrapURLError(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("cannot read the answer of %s: %w", req.URL.Host, err)
	}
	if resp.StatusCode/100 != 2 {
		oe := &OAuthError{Status: resp.StatusCode, Code: errorCode(b)}
		if d, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			oe.RetryAfter = time.Duration(d) * time.Second
		}
		return oe
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("cannot read the answer of %s: not the expected JSON", req.URL.Host)
		}
	}
	return nil
}

// unwrapURLError drops net/url's wrapper, which quotes the whole URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// errorCode reads an OAuth error body's code: {"error":"invalid_grant"},
// {"error":{"code":"refresh_token_reused"}} or {"error":{"type":...}}.
// Only a short token-like code is kept.
func errorCode(b []byte) string {
	var v struct {
		Error json.RawMessage `json:"error"`
		Code  string          `json:"code"`
	}
	if json.Unmarshal(b, &v) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(v.Error, &s) == nil {
		return codeOnly(s)
	}
	var o struct{ Code, Type string }
	if json.Unmarshal(v.Error, &o) == nil {
		if o.Code != "" {
			return codeOnly(o.Code)
		}
		return codeOnly(o.Type)
	}
	return codeOnly(v.Code)
}

func codeOnly(s string) string {
	if len(s) > 64 {
		return ""
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return ""
		}
	}
	return s
}

// CodexClaims are what a Codex id_token says about the ChatGPT account.
type CodexClaims struct {
	Email     string
	AccountID string
	Plan      string
}

// ParseCodexIDToken reads (without verifying: the token came straight from
// the token endpoint over TLS) the claims of a Codex id_token.
func ParseCodexIDToken(tok string) (CodexClaims, error) {
	parts := strings.Split(tok, ".")
	if len(parts) < 2 {
		return CodexClaims{}, errors.New("id_token is not a JWT")
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return CodexClaims{}, errors.New("id_token payload is not base64url")
	}
	var c struct {
		Email string `json:"email"`
		Auth  struct {
			AccountID string `json:"chatgpt_account_id"`
			Plan      string `json:"chatgpt_plan_type"`
		} `json:"https://api.openai.com/auth"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return CodexClaims{}, errors.New("id_token payload is not JSON")
	}
	return CodexClaims{Email: c.Email, AccountID: c.Auth.AccountID, Plan: c.Auth.Plan}, nil
}
