package accounts

import (
	"context"
	"errors"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"slipstream/internal/oauthstub"
	"slipstream/internal/redistest"
	"slipstream/internal/testkit"
	"slipstream/server/provider"
)

// clock is an injectable clock for tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type fixture struct {
	stub  *oauthstub.Stub
	dir   *Dir
	clk   *clock
	logs  *testkit.Buffer
	flows map[string]*Flow
}

// newFixture starts a Codex-like (form) or Claude-like (JSON) stub and a
// directory holding one account "a1" whose token expires in `left`.
func newFixture(t *testing.T, typ string, left time.Duration) *fixture {
	t.Helper()
	f := DefaultFlow(typ)
	stub := oauthstub.New(t, f.ClientID, "http://localhost:1/cb", f.JSONToken, f.PKCE)
	f.Override(Endpoints{Token: stub.URL + "/token", Authorize: stub.URL + "/authorize", Redirect: "http://localhost:1/cb"})
	fx := &fixture{stub: stub, dir: NewDir(t.TempDir()), clk: newClock(), logs: &testkit.Buffer{}, flows: map[string]*Flow{typ: f}}
	at, rt := stub.Issue()
	a := &Account{Name: "a1", Type: typ, AccessToken: at, RefreshToken: rt,
		LastRefresh: fx.clk.Now().Add(-time.Hour), Expiry: fx.clk.Now().Add(left), Email: "user@example.com"}
	if err := fx.dir.Save(a); err != nil {
		t.Fatal(err)
	}
	return fx
}

func (fx *fixture) manager(o Options) *Manager {
	o.Flows, o.Now = fx.flows, fx.clk.Now
	if o.Log == nil {
		o.Log = log.New(fx.logs, "", 0)
	}
	m := NewManager(fx.dir, o)
	if errs := m.Load([]string{"a1"}); len(errs) > 0 {
		panic(errs[0])
	}
	return m
}

func TestRefreshLeadTime(t *testing.T) {
	// Claude's lead is 4 h: a token with 5 h left is not due; with 3 h
	// left it is refreshed by the background pass.
	fx := newFixture(t, TypeClaude, 5*time.Hour)
	fx.dir.Patch("a1", map[string]any{"last_refresh": timeField(fx.clk.Now().Add(-3 * time.Hour))})
	m := fx.manager(Options{})
	m.RefreshDue(nil)
	if n := fx.stub.Refreshes.Load(); n != 0 {
		t.Fatalf("refreshed %d times 5 h before expiry", n)
	}
	fx.clk.Add(2 * time.Hour)
	m.RefreshDue(nil)
	if n := fx.stub.Refreshes.Load(); n != 1 {
		t.Fatalf("refreshes = %d 3 h before expiry, want 1", n)
	}
	a, _ := fx.dir.Load("a1")
	if !a.Expiry.Equal(fx.clk.Now().Add(time.Hour).Truncate(time.Second)) {
		t.Fatalf("expiry %v", a.Expiry)
	}
	tok, err := m.Token(context.Background(), "a1")
	if err != nil || !fx.stub.ValidAccess(tok.Access) {
		t.Fatalf("token after refresh: %v", err)
	}
}

func TestRefreshOnceForConcurrentExpired(t *testing.T) {
	fx := newFixture(t, TypeCodex, -time.Minute)
	fx.stub.RefreshDelay = 50 * time.Millisecond
	m := fx.manager(Options{})
	var wg sync.WaitGroup
	var bad atomic.Int64
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok, err := m.Token(context.Background(), "a1")
			if err != nil || !fx.stub.ValidAccess(tok.Access) {
				bad.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := fx.stub.Refreshes.Load(); n != 1 {
		t.Fatalf("50 concurrent requests on an expired token made %d refresh calls, want 1", n)
	}
	if bad.Load() > 0 {
		t.Fatalf("%d callers got no valid token", bad.Load())
	}
}

func TestRotatedTokenSavedAndNeverReused(t *testing.T) {
	// Each refresh rotates the refresh token; the stub fails the test
	// if a spent one comes back. A second manager (a restart) must read
	// the rotated one from the file.
	fx := newFixture(t, TypeCodex, -time.Minute)
	m := fx.manager(Options{})
	for i := 0; i < 3; i++ {
		if err := m.Refresh(context.Background(), "a1", true); err != nil {
			t.Fatal(err)
		}
	}
	m2 := fx.manager(Options{})
	fx.clk.Add(30 * 24 * time.Hour)
	if _, err := m2.Token(context.Background(), "a1"); err != nil {
		t.Fatal(err)
	}
	if n := fx.stub.Refreshes.Load(); n != 4 {
		t.Fatalf("refreshes = %d, want 4", n)
	}
}

func TestRefreshKeepsOldRefreshTokenWhenOmitted(t *testing.T) {
	fx := newFixture(t, TypeClaude, -time.Minute)
	fx.stub.OmitRefresh = true
	before, _ := fx.dir.Load("a1")
	m := fx.manager(Options{})
	if _, err := m.Token(context.Background(), "a1"); err != nil {
		t.Fatal(err)
	}
	after, _ := fx.dir.Load("a1")
	if after.RefreshToken != before.RefreshToken || after.AccessToken == before.AccessToken {
		t.Fatal("an answer without refresh_token must keep the old one and store the new access token")
	}
}

func TestWriteBackKeepsFieldsAddedMeanwhile(t *testing.T) {
	fx := newFixture(t, TypeCodex, -time.Minute)
	m := fx.manager(Options{})
	// The operator edits the file after slipstream loaded it.
	if err := fx.dir.Patch("a1", map[string]any{"proxy_url": "socks5://127.0.0.1:1080", "note": "work"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Token(context.Background(), "a1"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(fx.dir.Path, "a1.json"))
	if !strings.Contains(string(b), `"proxy_url": "socks5://127.0.0.1:1080"`) || !strings.Contains(string(b), `"note": "work"`) {
		t.Fatalf("refresh write-back dropped fields added meanwhile:\n%s", b)
	}
	st, _ := os.Stat(filepath.Join(fx.dir.Path, "a1.json"))
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", st.Mode().Perm())
	}
}

func TestRefreshWhileCooling(t *testing.T) {
	// An account resting for its quota still gets its token refreshed,
	// so it comes back usable.
	fx := newFixture(t, TypeClaude, 3*time.Hour)
	fx.dir.Patch("a1", map[string]any{"last_refresh": timeField(fx.clk.Now().Add(-5 * time.Hour))})
	m := fx.manager(Options{})
	m.Cool("a1", fx.clk.Now().Add(48*time.Hour), "7d window")
	m.RefreshDue(nil)
	if n := fx.stub.Refreshes.Load(); n != 1 {
		t.Fatalf("refreshes of a cooling account = %d, want 1", n)
	}
	a, _ := fx.dir.Load("a1")
	if a.CoolingReason != "7d window" {
		t.Fatal("cooling state lost by the refresh")
	}
}

func TestRevokedMarksNeedsLoginOnce(t *testing.T) {
	fx := newFixture(t, TypeCodex, -time.Minute)
	fx.stub.AllowReuse = true
	// Spend the stored refresh token elsewhere (another process).
	a, _ := fx.dir.Load("a1")
	if _, err := fx.flows[TypeCodex].Refresh(context.Background(), http0(), a.RefreshToken); err != nil {
		t.Fatal(err)
	}
	m := fx.manager(Options{})
	for range 3 {
		if _, err := m.Token(context.Background(), "a1"); err != ErrNeedsLogin {
			t.Fatalf("err = %v, want ErrNeedsLogin", err)
		}
	}
	if m.Usable("a1") {
		t.Fatal("an account needing login must not be usable")
	}
	if n := strings.Count(fx.logs.String(), "needs a new login"); n != 1 {
		t.Fatalf("logged %d times, want once:\n%s", n, fx.logs.String())
	}
	a, _ = fx.dir.Load("a1")
	if !a.NeedsLogin || !strings.HasPrefix(a.State(fx.clk.Now()), "needs login") {
		t.Fatal("needs_login not saved")
	}
	for _, s := range fx.stub.Secrets() {
		if strings.Contains(fx.logs.String(), s) {
			t.Fatal("a token reached the log")
		}
	}
}

func TestRejectedRefreshesOnce(t *testing.T) {
	fx := newFixture(t, TypeCodex, time.Hour)
	m := fx.manager(Options{})
	tok, _ := m.Token(context.Background(), "a1")
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() { defer wg.Done(); _ = m.Rejected(context.Background(), "a1", tok) }()
	}
	wg.Wait()
	if n := fx.stub.Refreshes.Load(); n != 1 {
		t.Fatalf("10 rejections of one token made %d refreshes", n)
	}
}

func TestAccountStringHasNoToken(t *testing.T) {
	fx := newFixture(t, TypeCodex, time.Hour)
	a, _ := fx.dir.Load("a1")
	if strings.Contains(a.String(), a.AccessToken) || strings.Contains(a.State(fx.clk.Now()), a.RefreshToken) {
		t.Fatal("token in String/State")
	}
}

func TestTwoProcessesShareOneRefreshThroughRedis(t *testing.T) {
	// Two managers (two slipstream processes) over one account file and
	// one Redis: the expired token is refreshed once; the second process
	// takes the lock after the first, reads the file again and adopts
	// the rotated tokens (the stub fails the test if the old refresh
	// token is spent twice).
	rs := redistest.Start(t)
	fx := newFixture(t, TypeCodex, -time.Minute)
	fx.stub.RefreshDelay = 100 * time.Millisecond
	var ms [2]*Manager
	for i := range ms {
		l := NewRedisLock(rs.URL(), "t")
		t.Cleanup(l.Close)
		ms[i] = fx.manager(Options{Lock: l})
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok, err := ms[i%2].Token(context.Background(), "a1")
			if err != nil || !fx.stub.ValidAccess(tok.Access) {
				t.Errorf("process %d: %v", i%2, err)
			}
		}()
	}
	wg.Wait()
	if n := fx.stub.Refreshes.Load(); n != 1 {
		t.Fatalf("two processes made %d refreshes, want 1", n)
	}
}

func TestRefreshBackoffAfterFailure(t *testing.T) {
	// A 429 with Retry-After 60: no refresh call before it ends, on the
	// request path or in the background; a 503 backs off 5 minutes.
	fx := newFixture(t, TypeClaude, -time.Minute)
	fx.stub.RefreshFail = func(n int64) (int, string) {
		switch n {
		case 1:
			return 429, "60"
		case 2:
			return 503, ""
		}
		return 0, ""
	}
	m := fx.manager(Options{})
	if _, err := m.Token(context.Background(), "a1"); err == nil {
		t.Fatal("a refused refresh gave a token")
	}
	fx.clk.Add(30 * time.Second)
	if _, err := m.Token(context.Background(), "a1"); err != ErrRefreshBackoff {
		t.Fatalf("err = %v, want ErrRefreshBackoff", err)
	}
	m.RefreshDue(nil)
	if n := fx.stub.Refreshes.Load(); n != 1 {
		t.Fatalf("refreshes = %d during the backoff, want 1", n)
	}
	fx.clk.Add(31 * time.Second)
	m.RefreshDue(nil) // 503
	fx.clk.Add(4 * time.Minute)
	m.RefreshDue(nil)
	if n := fx.stub.Refreshes.Load(); n != 2 {
		t.Fatalf("refreshes = %d 4 min after a 5xx, want 2", n)
	}
	fx.clk.Add(time.Minute + time.Second)
	if _, err := m.Token(context.Background(), "a1"); err != nil {
		t.Fatal(err)
	}
}

func TestNewLoginBringsAccountBack(t *testing.T) {
	fx := newFixture(t, TypeCodex, -time.Minute)
	fx.stub.AllowReuse = true
	a, _ := fx.dir.Load("a1")
	fx.flows[TypeCodex].Refresh(context.Background(), http0(), a.RefreshToken) // spent elsewhere
	m := fx.manager(Options{})
	if _, err := m.Token(context.Background(), "a1"); err != ErrNeedsLogin {
		t.Fatalf("err = %v", err)
	}
	// The operator logs in again (slipstream login writes the file).
	at, rt := fx.stub.Issue()
	fx.dir.Save(&Account{Name: "a1", Type: TypeCodex, AccessToken: at, RefreshToken: rt, Expiry: fx.clk.Now().Add(time.Hour)})
	m.RefreshDue(nil)
	if tok, err := m.Token(context.Background(), "a1"); err != nil || tok.Access != at {
		t.Fatalf("after a new login: %v", err)
	}
}

// addAccount saves a second account of the fixture's type, valid for 7 h.
func (fx *fixture) addAccount(t *testing.T, name, typ string) {
	t.Helper()
	at, rt := fx.stub.Issue()
	a := &Account{Name: name, Type: typ, AccessToken: at, RefreshToken: rt,
		LastRefresh: fx.clk.Now().Add(-time.Hour), Expiry: fx.clk.Now().Add(7 * time.Hour)}
	if err := fx.dir.Save(a); err != nil {
		t.Fatal(err)
	}
}

// waitUntil polls cond for up to 5 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}

func TestSlowRefreshDoesNotStallOtherAccounts(t *testing.T) {
	// a1's token endpoint is slow; a background pass refreshes it and
	// the next tick comes while it runs. The healthy a2 is served
	// without waiting for a1.
	fx := newFixture(t, TypeClaude, -time.Minute)
	fx.stub.RefreshDelay = 1500 * time.Millisecond
	fx.addAccount(t, "a2", TypeClaude)
	m := fx.manager(Options{})
	if errs := m.Load([]string{"a2"}); len(errs) > 0 {
		t.Fatal(errs[0])
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); m.RefreshDue(nil) }()
	waitUntil(t, "a1's refresh is under way", func() bool { return fx.stub.Refreshes.Load() == 1 })
	go func() { defer wg.Done(); m.RefreshDue(nil) }() // the next tick
	time.Sleep(50 * time.Millisecond)
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := m.Token(context.Background(), "a2")
		if err == nil && m.Gate().Hold(&provider.Credential{Name: "a2"}, fx.clk.Now().UnixNano()) != 0 {
			err = errors.New("a2 is held out")
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(500 * time.Millisecond):
		t.Errorf("a2 waited over 500 ms for a1's slow refresh")
	}
	wg.Wait()
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the passes took %v", d)
	}
	if n := fx.stub.Refreshes.Load(); n != 1 {
		t.Fatalf("refreshes = %d, want 1 (a1 once)", n)
	}
}

// failFirstWrite makes d's next account write fail, as a full disk would,
// and the ones after it succeed.
func failFirstWrite(d *Dir) {
	var fail atomic.Bool
	fail.Store(true)
	d.write = func(path string, b []byte) error {
		if fail.Swap(false) {
			return errors.New("no space left on device")
		}
		return writeAtomic(path, b)
	}
}

func TestUnsavedRefreshSurvivesTheStaleFile(t *testing.T) {
	// The write-back after a refresh fails once: the file keeps the
	// refresh token just spent. A provider rebuild (Load) and the next
	// refresh must use the live tokens held in memory, not the file's
	// spent one (the stub fails the test when a spent token comes back),
	// and the file must end with the live tokens.
	fx := newFixture(t, TypeCodex, -time.Minute)
	m := fx.manager(Options{})
	failFirstWrite(fx.dir)
	if err := m.Refresh(context.Background(), "a1", true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fx.logs.String(), "refreshed but not saved") {
		t.Fatalf("the write did not fail:\n%s", fx.logs.String())
	}
	if errs := m.Load([]string{"a1"}); len(errs) > 0 {
		t.Fatal(errs[0])
	}
	if err := m.Refresh(context.Background(), "a1", true); err != nil {
		t.Fatalf("the refresh after an unsaved one: %v", err)
	}
	tok, err := m.Token(context.Background(), "a1")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := fx.dir.Load("a1")
	if a.NeedsLogin || a.AccessToken != tok.Access || !fx.stub.ValidAccess(a.AccessToken) {
		t.Fatalf("the file does not hold the live token (needs_login %v)", a.NeedsLogin)
	}
	// A restart reads the live refresh token from the file.
	m2 := fx.manager(Options{})
	if err := m2.Refresh(context.Background(), "a1", true); err != nil {
		t.Fatalf("a restart cannot refresh: %v", err)
	}
	if n := fx.stub.Refreshes.Load(); n != 3 {
		t.Fatalf("refreshes = %d, want 3", n)
	}
}

func TestUnsavedRefreshSavedOnNextTick(t *testing.T) {
	// Tokens whose write failed are written by the next background pass,
	// without a refresh: a crash after it loses nothing.
	fx := newFixture(t, TypeCodex, time.Minute)
	m := fx.manager(Options{})
	failFirstWrite(fx.dir)
	if err := m.Refresh(context.Background(), "a1", true); err != nil {
		t.Fatal(err)
	}
	tok, _ := m.Token(context.Background(), "a1")
	m.RefreshDue(nil)
	if a, _ := fx.dir.Load("a1"); a.AccessToken != tok.Access {
		t.Fatal("the unsaved tokens were not written by the next pass")
	}
	if n := fx.stub.Refreshes.Load(); n != 1 {
		t.Fatalf("refreshes = %d, want 1", n)
	}
}

func TestBanDuringRefreshStands(t *testing.T) {
	// A ban arrives 100 ms into a 300 ms refresh: the refresh, which
	// read the file before the ban, must not undo it in memory or in
	// the file.
	fx := newFixture(t, TypeClaude, time.Hour)
	fx.stub.RefreshDelay = 300 * time.Millisecond
	m := fx.manager(Options{})
	done := make(chan error, 1)
	go func() { done <- m.Refresh(context.Background(), "a1", true) }()
	waitUntil(t, "the refresh is under way", func() bool { return fx.stub.Refreshes.Load() == 1 })
	time.Sleep(100 * time.Millisecond)
	if _, banned := m.Observe("a1", Signal{Ban: "This organization has been disabled.", Util: [2]float64{-1, -1}}); !banned {
		t.Fatal("the ban was not taken")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if m.Usable("a1") {
		t.Error("a1 is usable after a ban that arrived during its refresh")
	}
	if _, err := m.Token(context.Background(), "a1"); err != ErrDisabled {
		t.Errorf("Token: %v, want ErrDisabled", err)
	}
	if a, ok := m.Account("a1"); !ok || !a.Disabled {
		t.Error("the in-memory account is not disabled")
	}
	a, _ := fx.dir.Load("a1")
	if !a.Disabled || a.DisabledReason == "" {
		t.Errorf("the file is not disabled: %v %q", a.Disabled, a.DisabledReason)
	}
	if !fx.stub.ValidAccess(a.AccessToken) || a.RefreshToken == "" {
		t.Error("the refreshed tokens were not saved")
	}
	// The next background pass leaves it out.
	m.RefreshDue(nil)
	if m.Usable("a1") {
		t.Error("a1 usable again after a background pass")
	}
}

func TestRestDoesNotWriteBackATokenRotatedMeanwhile(t *testing.T) {
	// Two replicas over one directory: replica A writes a quota rest
	// while replica B's refresh rotates the tokens between A's read of
	// the file and A's write. A must not put the spent refresh token
	// back (the stub fails the test when a restart spends it again).
	fx := newFixture(t, TypeCodex, time.Hour)
	a := fx.manager(Options{})
	dirB := NewDir(fx.dir.Path)
	b := NewManager(dirB, Options{Flows: fx.flows, Now: fx.clk.Now})
	if errs := b.Load([]string{"a1"}); len(errs) > 0 {
		t.Fatal(errs[0])
	}
	var once sync.Once
	refreshed := make(chan error, 1)
	fx.dir.write = func(path string, buf []byte) error {
		once.Do(func() {
			go func() { refreshed <- b.Refresh(context.Background(), "a1", true) }()
			select { // B's write waits for A's when the file is locked
			case err := <-refreshed:
				refreshed <- err
			case <-time.After(300 * time.Millisecond):
			}
		})
		return writeAtomic(path, buf)
	}
	a.Cool("a1", fx.clk.Now().Add(time.Hour), "5h window")
	if err := <-refreshed; err != nil {
		t.Fatal(err)
	}
	f, _ := fx.dir.Load("a1")
	if tok, _ := b.Token(context.Background(), "a1"); f.AccessToken != tok.Access {
		t.Error("the rest wrote back the tokens B's refresh replaced")
	}
	if f.CoolingReason != "5h window" {
		t.Error("the rest was lost")
	}
	fx.dir.write = nil
	c := fx.manager(Options{}) // a restart
	if err := c.Refresh(context.Background(), "a1", true); err != nil {
		t.Fatalf("a restart cannot refresh: %v", err)
	}
}
