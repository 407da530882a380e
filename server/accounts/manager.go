package accounts

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Locker serializes refreshes of one account across processes (a Redis
// lock shared by replicas). Lock blocks until the lock is held or ctx
// ends; the returned func releases it.
type Locker interface {
	Lock(ctx context.Context, name string) (unlock func(), err error)
}

// Options configure a Manager; the zero value of each field is usable.
type Options struct {
	// Flows per account type. Default: DefaultFlow of each type.
	Flows map[string]*Flow
	// HTTP is the client for token endpoints. Default: 30 s timeout.
	HTTP *http.Client
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Log receives refresh outcomes (names and error codes only).
	// Default: discard.
	Log *log.Logger
	// Lock, when set, is taken around each refresh, and the file is read
	// again under it, so replicas spend a refresh token once.
	Lock Locker
	// Workers bounds the background refreshes run at once. Default 4.
	Workers int
	// Tick is how often the background loop looks for due accounts.
	// Default 30 s.
	Tick time.Duration
	// MaxCooldown caps any reset a provider states. Default 6 h.
	MaxCooldown time.Duration
	// OnRefresh, when set, is told each refresh's outcome ("ok",
	// "failed", "revoked", "adopted") for metrics.
	OnRefresh func(account, outcome string)
}

// Manager keeps the accounts of one directory usable: it hands out valid
// access tokens, refreshing ahead of expiry in the background and on
// demand, one refresh per account at a time.
type Manager struct {
	dir  *Dir
	o    Options
	mu   sync.Mutex
	accs map[string]*entry
}

// entry is one account's live state. tok is read lock-free on the
// request path; refresh (the single flight) holds mu.
type entry struct {
	name string
	tok  atomic.Pointer[Token]
	mu   sync.Mutex
	// acct is the last loaded account (under mu).
	acct *Account
	// unsaved holds the tokens of a refresh whose write-back failed, and
	// stale the spent refresh token the file still holds instead: a
	// file read with stale in it is out of date, and unsaved stays live
	// until it is written. Under mu.
	unsaved *Account
	stale   string
	// retryAt: no background refresh before this (Unix ns) after a failure.
	retryAt  atomic.Int64
	revoked  atomic.Bool // logged once
	disabled atomic.Bool

	coolUntil  atomic.Int64    // account-wide rest (Unix ns), 0 none
	probeUntil atomic.Int64    // a half-open probe is in flight until
	longReset  atomic.Int64    // the longer window's reset (Unix ns)
	util       [2]atomic.Int64 // window utilisation x 1e6
}

// Token is what a request needs of an account. Access is a secret.
type Token struct {
	Access string
	// Bearer is "Bearer " + Access, built once per token.
	Bearer    string
	AccountID string // Codex chatgpt-account-id
	ProjectID string // Google Code Assist project
	Expiry    int64  // Unix ns; 0 unknown
	Type      string
}

// NewManager returns a manager over dir.
func NewManager(dir *Dir, o Options) *Manager {
	if o.HTTP == nil {
		o.HTTP = &http.Client{Timeout: 30 * time.Second}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = log.New(discard{}, "", 0)
	}
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.Tick <= 0 {
		o.Tick = 30 * time.Second
	}
	if o.Flows == nil {
		o.Flows = map[string]*Flow{}
	}
	for _, t := range []string{TypeClaude, TypeCodex, TypeGemini, TypeAntigravity} {
		if o.Flows[t] == nil {
			o.Flows[t] = DefaultFlow(t)
		}
	}
	return &Manager{dir: dir, o: o, accs: map[string]*entry{}}
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

// Dir is the manager's account directory.
func (m *Manager) Dir() *Dir { return m.dir }

// Flow returns the flow of an account type.
func (m *Manager) Flow(typ string) *Flow { return m.o.Flows[typ] }

// Load reads the named accounts (and forgets no others): a provider
// calls it when it is built. Accounts that cannot be read are returned
// as errors, by name.
func (m *Manager) Load(names []string) []error {
	var errs []error
	for _, n := range names {
		if err := m.load(n); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// load reads one account into its entry. The file is read under e.mu,
// so a ban written meanwhile (Disable) is not undone by an older read.
func (m *Manager) load(name string) error {
	e := m.lookup(name)
	if e == nil {
		if _, err := m.dir.Load(name); err != nil {
			return err // no entry for an account that cannot be read
		}
		e = m.entry(name)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	a, err := m.dir.Load(name)
	if err != nil {
		return err
	}
	e.keepUnsaved(a)
	e.adopt(a)
	return nil
}

func (m *Manager) entry(name string) *entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.accs[name]
	if e == nil {
		e = &entry{name: name}
		m.accs[name] = e
	}
	return e
}

// entries returns the loaded entries (a snapshot: m.mu is not held
// when the caller looks at them).
func (m *Manager) entries() []*entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	es := make([]*entry, 0, len(m.accs))
	for _, e := range m.accs {
		es = append(es, e)
	}
	return es
}

func (m *Manager) lookup(name string) *entry {
	m.mu.Lock()
	e := m.accs[name]
	m.mu.Unlock()
	return e
}

// keepUnsaved puts e's unsaved tokens into a, just read from the file,
// when the file still holds the spent refresh token they replaced. When
// the file holds other tokens (a new login), the file's win and the
// unsaved ones are dropped. e.mu is held.
func (e *entry) keepUnsaved(a *Account) {
	u := e.unsaved
	if u == nil {
		return
	}
	if a.RefreshToken != e.stale {
		e.unsaved, e.stale = nil, ""
		return
	}
	a.AccessToken, a.RefreshToken, a.IDToken = u.AccessToken, u.RefreshToken, u.IDToken
	a.Expiry, a.LastRefresh = u.Expiry, u.LastRefresh
}

// saveUnsaved writes e's unsaved tokens again (when the file still
// holds the spent token they replaced). e.mu is held.
func (m *Manager) saveUnsaved(e *entry) {
	if e.unsaved == nil {
		return
	}
	a, err := m.dir.Load(e.name)
	if err != nil {
		m.o.Log.Printf("accounts: %v", err)
		return
	}
	e.keepUnsaved(a)
	if e.unsaved == nil {
		return // the file changed meanwhile: it is read on the next refresh
	}
	if err := m.dir.Patch(e.name, tokenFields(a)); err != nil {
		m.o.Log.Printf("accounts: %s: refreshed tokens still not saved: %v", e.name, err)
		return
	}
	e.unsaved, e.stale = nil, ""
}

// keepState carries into a, read from the file by a refresh, the ban or
// needs-login the entry holds in memory: Disable sets its flag before it
// waits for e.mu to write the file, so the file a refresh read may not
// have it yet. Only Load and reconsider (the operator's way back) take
// a cleared state from the file. e.mu is held.
func (e *entry) keepState(a *Account) {
	if e.disabled.Load() && !a.Disabled {
		a.Disabled = true
		if e.acct != nil {
			a.DisabledReason = e.acct.DisabledReason
		}
	}
	if e.revoked.Load() {
		a.NeedsLogin = true
	}
}

// adopt makes a the entry's account. e.mu is held.
func (e *entry) adopt(a *Account) {
	e.acct = a
	t := &Token{Access: a.AccessToken, Bearer: "Bearer " + a.AccessToken, AccountID: a.AccountID, ProjectID: a.ProjectID, Type: a.Type}
	if !a.Expiry.IsZero() {
		t.Expiry = a.Expiry.UnixNano()
	}
	e.tok.Store(t)
	e.revoked.Store(a.NeedsLogin)
	e.disabled.Store(a.Disabled)
	if a.CoolingUntil.IsZero() {
		e.coolUntil.Store(0)
	} else if e.coolUntil.Load() == 0 {
		e.coolUntil.Store(a.CoolingUntil.UnixNano())
	}
}

// Usable reports whether the named account may be selected: loaded,
// not needing a login, not disabled.
func (m *Manager) Usable(name string) bool {
	e := m.lookup(name)
	return e != nil && !e.revoked.Load() && !e.disabled.Load() && e.tok.Load() != nil
}

// ErrNeedsLogin is returned for an account whose refresh token was
// refused.
var ErrNeedsLogin = errors.New("the account needs a new login")

// ErrRefreshBackoff is returned for an expired token whose last refresh
// failed moments ago (the token endpoint is not asked again before its
// backoff ends).
var ErrRefreshBackoff = errors.New("the account's token expired and its last refresh failed; retrying later")

// ErrDisabled is returned for a disabled account.
var ErrDisabled = errors.New("the account is disabled")

// Token returns a valid token of the named account, refreshing it first
// (once, however many callers wait) when it has expired.
func (m *Manager) Token(ctx context.Context, name string) (*Token, error) {
	e := m.lookup(name)
	if e == nil {
		return nil, fmt.Errorf("account %s is not loaded", name)
	}
	if e.revoked.Load() {
		return nil, ErrNeedsLogin
	}
	if e.disabled.Load() {
		return nil, ErrDisabled
	}
	t := e.tok.Load()
	now := m.o.Now().UnixNano()
	if t != nil && t.Access != "" && (t.Expiry == 0 || t.Expiry > now) {
		return t, nil
	}
	if e.retryAt.Load() > now {
		return nil, ErrRefreshBackoff // the last refresh failed: not again before retryAt
	}
	if err := m.refresh(ctx, e, func(t *Token, now int64) bool {
		return t == nil || t.Access == "" || (t.Expiry != 0 && t.Expiry <= now)
	}); err != nil {
		return nil, err
	}
	return e.tok.Load(), nil
}

// Rejected is called when the upstream refused token t (401): the
// account is refreshed unless another caller already replaced t.
func (m *Manager) Rejected(ctx context.Context, name string, t *Token) error {
	e := m.lookup(name)
	if e == nil {
		return fmt.Errorf("account %s is not loaded", name)
	}
	return m.refresh(ctx, e, func(cur *Token, _ int64) bool { return cur == nil || cur.Access == t.Access })
}

// Refresh refreshes the named account now when its token is due (within
// the flow's lead of expiry) or force is set.
func (m *Manager) Refresh(ctx context.Context, name string, force bool) error {
	e := m.entry(name)
	e.mu.Lock()
	if e.acct == nil {
		a, err := m.dir.Load(name)
		if err != nil {
			e.mu.Unlock()
			return err
		}
		e.adopt(a)
	}
	e.mu.Unlock()
	return m.refresh(ctx, e, func(t *Token, now int64) bool { return force || m.due(e, t, now) })
}

// lead is how long before expiry a's token is refreshed: the flow's
// lead, at most half the token's lifetime (a short-lived token is not
// refreshed on every tick).
func (m *Manager) lead(a *Account) time.Duration {
	f := m.o.Flows[a.Type]
	if f == nil {
		return 0
	}
	l := f.Lead
	if !a.LastRefresh.IsZero() && !a.Expiry.IsZero() {
		if life := a.Expiry.Sub(a.LastRefresh); life > 0 && l > life/2 {
			l = life / 2
		}
	}
	return l
}

// due reports whether e's token t should be refreshed at now. e.mu held.
func (m *Manager) due(e *entry, t *Token, now int64) bool {
	if t == nil || t.Access == "" {
		return true
	}
	if t.Expiry == 0 || e.acct == nil {
		return false
	}
	return t.Expiry-int64(m.lead(e.acct)) <= now
}

// refresh is the single flight: under e.mu, when still needed (need
// judges the current token), it takes the shared lock, reads the file
// again (another replica may have refreshed it: adopted), spends the
// refresh token, and saves the answer before anything else may use it.
func (m *Manager) refresh(ctx context.Context, e *entry, need func(*Token, int64) bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.revoked.Load() {
		return ErrNeedsLogin
	}
	if !need(e.tok.Load(), m.o.Now().UnixNano()) {
		return nil
	}
	if m.o.Lock != nil {
		unlock, err := m.o.Lock.Lock(ctx, e.name)
		if err != nil {
			return fmt.Errorf("cannot lock account %s for its refresh: %w", e.name, err)
		}
		defer unlock()
	}
	a, err := m.dir.Load(e.name)
	if err != nil {
		return err
	}
	// onDisk is the refresh token the file holds: the one our unsaved
	// tokens replaced (stale), or ours once they are written.
	onDisk := a.RefreshToken
	e.keepUnsaved(a)
	e.keepState(a)
	if e.unsaved != nil {
		if err := m.dir.Patch(e.name, tokenFields(a)); err != nil {
			m.o.Log.Printf("accounts: %s: refreshed tokens still not saved: %v", e.name, err)
		} else {
			e.unsaved, e.stale, onDisk = nil, "", a.RefreshToken
		}
	}
	if e.acct != nil && a.RefreshToken != e.acct.RefreshToken || e.acct != nil && a.AccessToken != e.acct.AccessToken {
		// The file changed under us (another replica refreshed, or a
		// new login): take it, and refresh only if still needed.
		e.adopt(a)
		if !need(e.tok.Load(), m.o.Now().UnixNano()) {
			m.outcome(e.name, "adopted")
			return nil
		}
	}
	e.adopt(a)
	if a.NeedsLogin {
		return ErrNeedsLogin
	}
	if a.RefreshToken == "" {
		return fmt.Errorf("account %s has no refresh token", e.name)
	}
	f := m.o.Flows[a.Type]
	if f == nil {
		return fmt.Errorf("account %s has an unknown type %q", e.name, clip(a.Type))
	}
	tr, err := f.Refresh(ctx, m.o.HTTP, a.RefreshToken)
	if err != nil {
		return m.refreshFailed(e, err)
	}
	now := m.o.Now()
	a.AccessToken = tr.AccessToken
	if tr.RefreshToken != "" {
		a.RefreshToken = tr.RefreshToken
	}
	if tr.IDToken != "" {
		a.IDToken = tr.IDToken
	}
	a.LastRefresh = now
	a.Expiry = time.Time{}
	if tr.ExpiresIn > 0 {
		a.Expiry = now.Add(time.Duration(tr.ExpiresIn) * time.Second)
	}
	// Saved before the new tokens are handed out: a rotated refresh
	// token that was never written would be lost with the process.
	if err := m.dir.Patch(e.name, tokenFields(a)); err != nil {
		// Kept in memory, and written on the next pass: the file's
		// refresh token (onDisk) is spent and must not be read back.
		m.o.Log.Printf("accounts: %s refreshed but not saved: %v", e.name, err)
		u := *a
		e.unsaved, e.stale = &u, onDisk
	} else {
		e.unsaved, e.stale = nil, ""
	}
	e.keepState(a) // a ban may have come during the call
	e.adopt(a)
	e.retryAt.Store(0)
	m.outcome(e.name, "ok")
	m.o.Log.Printf("accounts: refreshed %s (valid until %s)", e.name, a.Expiry.UTC().Format(time.RFC3339))
	return nil
}

// refreshFailed handles a refused refresh: a spent or revoked refresh
// token marks the account as needing a login (logged once); anything
// else backs off 5 minutes (or the 429's Retry-After).
func (m *Manager) refreshFailed(e *entry, err error) error {
	if Revoked(err) {
		if !e.revoked.Swap(true) {
			m.o.Log.Printf("accounts: %s needs a new login: its refresh token was refused (%v)", e.name, err)
			if perr := m.dir.Patch(e.name, map[string]any{"needs_login": true}); perr != nil {
				m.o.Log.Printf("accounts: %v", perr)
			}
			if e.acct != nil {
				e.acct.NeedsLogin = true
			}
		}
		m.outcome(e.name, "revoked")
		return ErrNeedsLogin
	}
	wait := 5 * time.Minute
	var oe *OAuthError
	if errors.As(err, &oe) && oe.RetryAfter > 0 {
		wait = min(max(oe.RetryAfter, 5*time.Second), 5*time.Minute)
	}
	e.retryAt.Store(m.o.Now().Add(wait).UnixNano())
	m.outcome(e.name, "failed")
	m.o.Log.Printf("accounts: refresh of %s failed: %v", e.name, err)
	return fmt.Errorf("cannot refresh account %s: %w", e.name, err)
}

func (m *Manager) outcome(name, o string) {
	if m.o.OnRefresh != nil {
		m.o.OnRefresh(name, o)
	}
}

// Run refreshes due accounts in the background, Workers at a time, every
// Tick until stop closes. Cooling accounts are refreshed like any other,
// so they come back from a rest with a valid token.
func (m *Manager) Run(stop <-chan struct{}) {
	t := time.NewTicker(m.o.Tick)
	defer t.Stop()
	for {
		m.RefreshDue(stop)
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// RefreshDue refreshes every loaded account that is due, Workers at a
// time, and returns when they are done. An account whose refresh is in
// flight (it may wait on a slow token endpoint or the shared lock) is
// left to that refresh; m.mu is never held while an account is looked
// at, so requests for other accounts never wait for it.
func (m *Manager) RefreshDue(stop <-chan struct{}) {
	now := m.o.Now().UnixNano()
	var due []*entry
	var held []*entry
	for _, e := range m.entries() {
		if e.revoked.Load() || e.disabled.Load() {
			held = append(held, e)
			continue
		}
		if !e.mu.TryLock() {
			continue // being refreshed
		}
		m.saveUnsaved(e)
		if e.retryAt.Load() > now {
			e.mu.Unlock()
			continue
		}
		d := e.acct != nil && m.due(e, e.tok.Load(), now)
		e.mu.Unlock()
		if d {
			due = append(due, e)
		}
	}
	for _, e := range held {
		m.reconsider(e)
	}
	sem := make(chan struct{}, m.o.Workers)
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	for _, e := range due {
		sem <- struct{}{}
		wg.Add(1)
		go func(e *entry) {
			defer func() { <-sem; wg.Done() }()
			_ = m.refresh(ctx, e, func(t *Token, now int64) bool { return m.due(e, t, now) }) // logged inside
		}(e)
	}
	wg.Wait()
}

// Account returns a copy of the named account's last known state.
func (m *Manager) Account(name string) (Account, bool) {
	e := m.lookup(name)
	if e == nil {
		return Account{}, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.acct == nil {
		return Account{}, false
	}
	return *e.acct, true
}

// Cool records an account-wide rest (quota) in the file, for
// `slipstream accounts`.
func (m *Manager) Cool(name string, until time.Time, reason string) {
	e := m.lookup(name)
	if e == nil {
		return
	}
	e.mu.Lock() // a refresh reading the file meanwhile must see the rest
	defer e.mu.Unlock()
	if e.acct != nil {
		e.acct.CoolingUntil, e.acct.CoolingReason = until, reason
	}
	if until.IsZero() {
		e.coolUntil.Store(0)
	} else {
		e.coolUntil.Store(until.UnixNano())
	}
	e.probeUntil.Store(0)
	var r any = reason
	if reason == "" {
		r = nil
	}
	if err := m.dir.Patch(name, map[string]any{"cooling_until": timeField(until), "cooling_reason": r}); err != nil {
		m.o.Log.Printf("accounts: %v", err)
	}
}

// Disable marks the account disabled with the provider's message (a ban
// or suspension answer): it is excluded until the operator clears
// `disabled` in its file and slipstream reloads.
func (m *Manager) Disable(name, reason string) {
	e := m.lookup(name)
	if e == nil || e.disabled.Swap(true) {
		return
	}
	reason = clip(reason)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.disabled.Store(true) // a file read before the ban may have been adopted meanwhile (Load)
	if e.acct != nil {
		e.acct.Disabled, e.acct.DisabledReason = true, reason
	}
	m.o.Log.Printf("accounts: %s disabled by the provider: %s", name, reason)
	if err := m.dir.Patch(name, map[string]any{"disabled": true, "disabled_reason": reason}); err != nil {
		m.o.Log.Printf("accounts: %v", err)
	}
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// reconsider reads the file of an account left out (needs login,
// disabled) again: after a new `slipstream login` or the operator
// clearing `disabled`, it is used again without a restart.
func (m *Manager) reconsider(e *entry) {
	if !e.mu.TryLock() { // Disable and a refused refresh write the file under it
		return // busy (a refresh in flight): looked at on the next tick
	}
	defer e.mu.Unlock()
	a, err := m.dir.Load(e.name)
	if err != nil || a.NeedsLogin || a.Disabled {
		return
	}
	e.keepUnsaved(a)
	e.adopt(a)
	e.retryAt.Store(0)
	m.o.Log.Printf("accounts: %s is usable again (its file was updated)", e.name)
}

// String keeps the token out of any formatted output.
func (t *Token) String() string { return t.Type + " account token (redacted)" }
