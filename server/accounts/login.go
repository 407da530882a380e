package accounts

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Login is one authorization-code login in progress: the state and PKCE
// verifier it was started with.
type Login struct {
	Flow     *Flow
	HTTP     *http.Client
	State    string
	Verifier string // empty when the flow uses no PKCE
}

// NewLogin starts a login over f with a fresh random state and, when
// the flow uses PKCE, a verifier.
func NewLogin(f *Flow, c *http.Client) *Login {
	if c == nil {
		c = &http.Client{Timeout: 30 * time.Second}
	}
	l := &Login{Flow: f, HTTP: c, State: randomString(32)}
	if f.PKCE {
		l.Verifier = randomString(64)
	}
	return l
}

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)[:n]
}

// Challenge is the S256 PKCE challenge of a verifier.
func Challenge(verifier string) string {
	h := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// AuthorizeURL is the page the user opens to sign in.
func (l *Login) AuthorizeURL() string {
	f := l.Flow
	q := url.Values{}
	for _, kv := range f.Extra {
		q.Set(kv[0], kv[1])
	}
	q.Set("client_id", f.ClientID)
	q.Set("response_type", "code")
	q.Set("redirect_uri", f.RedirectURI)
	q.Set("scope", strings.Join(f.Scopes, " "))
	q.Set("state", l.State)
	if l.Verifier != "" {
		q.Set("code_challenge", Challenge(l.Verifier))
		q.Set("code_challenge_method", "S256")
	}
	sep := "?"
	if strings.Contains(f.AuthorizeURL, "?") {
		sep = "&"
	}
	return f.AuthorizeURL + sep + q.Encode()
}

// ErrStateMismatch is a callback whose state is not the login's: it may
// be forged, and its code is not used.
var ErrStateMismatch = errors.New("the redirect's state does not match this login (a stale or forged redirect); start the login again")

// ParseRedirect reads the code out of what the user pasted: the whole
// redirect URL (…?code=C&state=S), or Claude's "C#S" form. The state
// must be the login's.
func (l *Login) ParseRedirect(pasted string) (string, error) {
	pasted = strings.TrimSpace(pasted)
	if pasted == "" {
		return "", errors.New("nothing was pasted")
	}
	var code, state string
	if strings.Contains(pasted, "://") || strings.HasPrefix(pasted, "/") || strings.HasPrefix(pasted, "?") {
		u, err := url.Parse(pasted)
		if err != nil {
			return "", errors.New("cannot parse the pasted redirect URL")
		}
		q := u.Query()
		if e := q.Get("error"); e != "" {
			return "", fmt.Errorf("the provider refused the login: %s", codeOnly(e))
		}
		code, state = q.Get("code"), q.Get("state")
	} else {
		code, state, _ = strings.Cut(pasted, "#")
	}
	// Claude's code may carry "#state" itself.
	if c, s, ok := strings.Cut(code, "#"); ok {
		code = c
		if state == "" {
			state = s
		}
	}
	if code == "" {
		return "", errors.New("the redirect holds no code")
	}
	if state != l.State {
		return "", ErrStateMismatch
	}
	return code, nil
}

// Callback serves the flow's loopback redirect on its port until one
// redirect arrives (or ctx ends) and returns its code. A redirect with a
// wrong state is refused and waiting goes on.
func (l *Login) Callback(ctx context.Context, ln net.Listener) (string, error) {
	u, err := url.Parse(l.Flow.RedirectURI)
	if err != nil {
		return "", errors.New("cannot parse the redirect URI")
	}
	got := make(chan string, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != u.Path {
			http.NotFound(w, r)
			return
		}
		code, err := l.ParseRedirect(r.URL.String())
		if err != nil {
			http.Error(w, "slipstream login: "+err.Error(), http.StatusBadRequest)
			return
		}
		io.WriteString(w, "slipstream: signed in. You can close this page.\n")
		select {
		case got <- code:
		default:
		}
	})}
	go srv.Serve(ln)
	defer func() {
		// Let the page that delivered the code be answered first.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}()
	select {
	case c := <-got:
		return c, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// ListenRedirect listens on the redirect URI's loopback port.
func (l *Login) ListenRedirect() (net.Listener, error) {
	u, err := url.Parse(l.Flow.RedirectURI)
	if err != nil {
		return nil, errors.New("cannot parse the redirect URI")
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return net.Listen("tcp", net.JoinHostPort("127.0.0.1", port))
}

// Finish exchanges the code and builds the account named name (default:
// the email, else the type).
func (l *Login) Finish(ctx context.Context, name, code string, now time.Time) (*Account, error) {
	return finish(ctx, l.Flow, l.HTTP, name, code, l.Verifier, l.State, l.Flow.RedirectURI, now)
}

func finish(ctx context.Context, f *Flow, c *http.Client, name, code, verifier, state, redirect string, now time.Time) (*Account, error) {
	tr, err := f.Exchange(ctx, c, code, verifier, state, redirect)
	if err != nil {
		return nil, fmt.Errorf("cannot exchange the authorization code: %w", err)
	}
	a := &Account{Type: f.Type, AccessToken: tr.AccessToken, RefreshToken: tr.RefreshToken, IDToken: tr.IDToken, LastRefresh: now}
	if tr.ExpiresIn > 0 {
		a.Expiry = now.Add(time.Duration(tr.ExpiresIn) * time.Second)
	}
	a.Email = tr.Account.Email
	if a.Email == "" && f.Type == TypeClaude {
		a.Email = claudeEmail(ctx, f, c, a.AccessToken)
	}
	if tr.IDToken != "" && f.Type == TypeCodex {
		if cl, err := ParseCodexIDToken(tr.IDToken); err == nil {
			a.Email, a.AccountID, a.Plan = cl.Email, cl.AccountID, cl.Plan
		}
	}
	if f.Type == TypeGemini || f.Type == TypeAntigravity {
		a.Email = googleEmail(ctx, f, c, a.AccessToken)
		a.ProjectID = codeAssistProject(ctx, f, c, a.AccessToken)
	}
	a.Name = name
	if a.Name == "" {
		a.Name = DefaultName(a)
	}
	if !ValidName(a.Name) {
		return nil, errBadName
	}
	return a, nil
}

// DefaultName names an account after its type and email (codex-
// user@example.com), else its type.
func DefaultName(a *Account) string {
	n := a.Type
	if a.Email != "" {
		n += "-" + a.Email
	}
	if a.AccountID != "" && a.Type == TypeCodex {
		id := a.AccountID
		if len(id) > 8 {
			id = id[:8]
		}
		n += "-" + id // one email may sign into several workspaces
	}
	if !ValidName(n) {
		return a.Type
	}
	return n
}

func googleEmail(ctx context.Context, f *Flow, c *http.Client, tok string) string {
	if f.UserinfoURL == "" {
		return ""
	}
	var v struct {
		Email string `json:"email"`
	}
	if getJSON(ctx, c, f.UserinfoURL, tok, &v) != nil {
		return ""
	}
	return v.Email
}

// codeAssistProject finds the Code Assist project of a Google account:
// loadCodeAssist, else onboardUser polled until done. "" when unknown.
func codeAssistProject(ctx context.Context, f *Flow, c *http.Client, tok string) string {
	if f.CodeAssistURL == "" {
		return ""
	}
	ide := "IDE_UNSPECIFIED"
	if f.Type == TypeAntigravity {
		ide = "ANTIGRAVITY"
	}
	meta := map[string]any{"metadata": map[string]string{"ideType": ide, "platform": "PLATFORM_UNSPECIFIED", "pluginType": "GEMINI"}}
	var load struct {
		Project      json.RawMessage `json:"cloudaicompanionProject"`
		AllowedTiers []struct {
			ID        string `json:"id"`
			IsDefault bool   `json:"isDefault"`
		} `json:"allowedTiers"`
	}
	if postJSON(ctx, c, f.CodeAssistURL+"/v1internal:loadCodeAssist", tok, meta, &load) != nil {
		return ""
	}
	if p := projectID(load.Project); p != "" {
		return p
	}
	tier := "free-tier"
	for _, t := range load.AllowedTiers {
		if t.IsDefault {
			tier = t.ID
		}
	}
	meta["tierId"] = tier
	for i := 0; i < 10; i++ {
		var op struct {
			Done     bool `json:"done"`
			Response struct {
				Project json.RawMessage `json:"cloudaicompanionProject"`
			} `json:"response"`
		}
		if postJSON(ctx, c, f.CodeAssistURL+"/v1internal:onboardUser", tok, meta, &op) != nil {
			return ""
		}
		if op.Done {
			return projectID(op.Response.Project)
		}
		select {
		case <-ctx.Done():
			return ""
		case <-time.After(onboardPoll):
		}
	}
	return ""
}

// onboardPoll is the wait between onboardUser polls.
var onboardPoll = 2 * time.Second

func projectID(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(raw, &o)
	return o.ID
}

// getJSON GETs url with tok as the bearer token (and the extra header
// name/value pairs) and decodes the JSON answer into out (doJSON).
func getJSON(ctx context.Context, c *http.Client, url, tok string, out any, header ...string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return doJSON(c, req, out)
}

func postJSON(ctx context.Context, c *http.Client, u, tok string, in, out any) error {
	b, _ := json.Marshal(in)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return doJSON(c, req, out)
}

// DeviceCode is a started Codex device login.
type DeviceCode struct {
	ID, UserCode string
	Interval     time.Duration
	VerifyURL    string
}

// StartDevice asks for a user code (Codex's device flow).
func StartDevice(ctx context.Context, f *Flow, c *http.Client) (*DeviceCode, error) {
	if f.DeviceCodeURL == "" {
		return nil, fmt.Errorf("%s has no device-code login", f.Type)
	}
	var v struct {
		ID       string          `json:"device_auth_id"`
		UserCode string          `json:"user_code"`
		Interval json.RawMessage `json:"interval"`
	}
	if err := postJSON(ctx, c, f.DeviceCodeURL, "", map[string]string{"client_id": f.ClientID}, &v); err != nil {
		return nil, fmt.Errorf("cannot start the device login: %w", err)
	}
	if v.ID == "" || v.UserCode == "" {
		return nil, errors.New("cannot start the device login: the answer lacks a device or user code")
	}
	d := &DeviceCode{ID: v.ID, UserCode: v.UserCode, Interval: 5 * time.Second, VerifyURL: f.DeviceVerifyURL}
	s := strings.Trim(string(v.Interval), `"`)
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		d.Interval = time.Duration(n) * time.Second
	}
	return d, nil
}

// PollDevice polls until the user approved the code (403/404 mean
// pending), at most 15 minutes, then exchanges the code it got.
func PollDevice(ctx context.Context, f *Flow, c *http.Client, d *DeviceCode, name string, now func() time.Time) (*Account, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	for {
		var v struct {
			Code     string `json:"authorization_code"`
			Verifier string `json:"code_verifier"`
		}
		err := postJSON(ctx, c, f.DeviceTokenURL, "", map[string]string{"device_auth_id": d.ID, "user_code": d.UserCode}, &v)
		var oe *OAuthError
		switch {
		case err == nil && v.Code != "":
			return finish(ctx, f, c, name, v.Code, v.Verifier, "", f.DeviceRedirectURI, now())
		case err == nil:
			return nil, errors.New("the device login answer lacks an authorization code")
		case errors.As(err, &oe) && (oe.Status == 403 || oe.Status == 404):
			// pending
		default:
			return nil, fmt.Errorf("device login failed: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil, errors.New("the device login timed out (15 min)")
		case <-time.After(max(d.Interval, 10*time.Millisecond)):
		}
	}
}

// claudeEmail asks Claude's OAuth profile endpoint for the account's
// email when the token answer left it out. "" when unknown.
func claudeEmail(ctx context.Context, f *Flow, c *http.Client, tok string) string {
	if f.ProfileURL == "" {
		return ""
	}
	var v struct {
		Account struct {
			Email string `json:"email"`
		} `json:"account"`
	}
	if getJSON(ctx, c, f.ProfileURL, tok, &v, "Anthropic-Beta", "oauth-2025-04-20") != nil {
		return ""
	}
	return v.Account.Email
}
