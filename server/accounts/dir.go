package accounts

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Dir is the directory of account files: NAME.json, mode 0600, written
// atomically (a temp file renamed over the old one). A write merges: the
// file is read again and only the fields the writer owns are replaced, so
// fields an operator added or changed meanwhile (proxy_url, disabled, a
// note) survive a refresh's write-back.
type Dir struct {
	Path string
	mu   sync.Mutex // one writer at a time in this process
	// write replaces writeAtomic when set (tests inject write errors).
	write func(path string, b []byte) error
}

// NewDir returns the account directory at path ("~/" is the home
// directory).
func NewDir(path string) *Dir { return &Dir{Path: ExpandHome(path)} }

// ExpandHome replaces a leading "~/" by the user's home directory.
func ExpandHome(p string) string {
	if strings.HasPrefix(p, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, p[2:])
		}
	}
	return p
}

// ValidName reports whether name can be an account file name: letters,
// digits and . _ @ + -, not starting with a dot, at most 128 bytes.
func ValidName(name string) bool {
	if name == "" || len(name) > 128 || name[0] == '.' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._@+-", c) >= 0
		if !ok {
			return false
		}
	}
	return true
}

// lockName is the directory's lock file, taken around each write. It
// starts with a dot, so it never names an account.
const lockName = ".lock"

var errBadName = errors.New("invalid account name (letters, digits and . _ @ + - only)")

func (d *Dir) file(name string) (string, error) {
	if !ValidName(name) {
		return "", errBadName
	}
	return filepath.Join(d.Path, name+".json"), nil
}

// Load reads one account.
func (d *Dir) Load(name string) (*Account, error) {
	f, err := d.readFields(name)
	if err != nil {
		return nil, err
	}
	a := fromFields(name, f)
	return a, nil
}

// Names lists the account names in the directory, sorted. A missing
// directory has none.
func (d *Dir) Names() ([]string, error) {
	es, err := os.ReadDir(d.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot list accounts: %w", err)
	}
	var names []string
	for _, e := range es {
		n, ok := strings.CutSuffix(e.Name(), ".json")
		if ok && !e.IsDir() && ValidName(n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names, nil
}

// List loads every account; files that do not parse are reported in errs
// (by name) and left out.
func (d *Dir) List() (as []*Account, errs []error) {
	names, err := d.Names()
	if err != nil {
		return nil, []error{err}
	}
	for _, n := range names {
		a, err := d.Load(n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		as = append(as, a)
	}
	return as, errs
}

type fields map[string]json.RawMessage

func (d *Dir) readFields(name string) (fields, error) {
	path, err := d.file(name)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("account %s does not exist in %s", name, d.Path)
		}
		return nil, fmt.Errorf("cannot read account %s: %w", name, errors.Unwrap(err))
	}
	f := fields{}
	if err := json.Unmarshal(b, &f); err != nil {
		// The JSON error may quote the file's bytes (a token): not shown.
		return nil, fmt.Errorf("cannot read account %s: the file is not a JSON object", name)
	}
	return f, nil
}

// Patch merges set into the account's file: it reads the file again
// (missing: created), replaces the members named in set (a nil value
// deletes the member), and writes it atomically with mode 0600. The read
// and the write hold the directory's lock file (lockName), so a process
// sharing the directory (a replica, `slipstream login`) cannot write
// between them: a rest or a ban never writes back a refresh token that
// another process rotated meanwhile.
func (d *Dir) Patch(name string, set map[string]any) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	path, err := d.file(name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		return fmt.Errorf("cannot create the accounts directory: %w", err)
	}
	unlock, err := lockFile(filepath.Join(d.Path, lockName))
	if err != nil {
		return err
	}
	defer unlock()
	f, err := d.readFields(name)
	if err != nil {
		if _, statErr := os.Stat(path); !errors.Is(statErr, os.ErrNotExist) {
			return err
		}
		f = fields{}
	}
	for k, v := range set {
		if v == nil {
			delete(f, k)
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("cannot write account %s field %s: %w", name, k, err)
		}
		f[k] = b
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("cannot write account %s: %w", name, err)
	}
	if d.write != nil {
		return d.write(path, append(b, '\n'))
	}
	return writeAtomic(path, append(b, '\n'))
}

// writeAtomic writes b to a temp file beside path (0600), syncs it and
// renames it over path.
func writeAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot create the accounts directory: %w", err)
	}
	t, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("cannot write account file: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			_ = t.Close()
			_ = os.Remove(t.Name())
		}
	}()
	if err := t.Chmod(0o600); err != nil {
		return fmt.Errorf("cannot write account file: %w", err)
	}
	if _, err := t.Write(b); err != nil {
		return fmt.Errorf("cannot write account file: %w", err)
	}
	if err := t.Sync(); err != nil {
		return fmt.Errorf("cannot write account file: %w", err)
	}
	if err := t.Close(); err != nil {
		return fmt.Errorf("cannot write account file: %w", err)
	}
	if err := os.Rename(t.Name(), path); err != nil {
		return fmt.Errorf("cannot write account file: %w", err)
	}
	ok = true
	return nil
}

// Save writes every field a login owns (tokens, identity, state cleared).
func (d *Dir) Save(a *Account) error {
	set := tokenFields(a)
	set["type"] = a.Type
	for k, v := range identityFields(a) {
		set[k] = v
	}
	set["needs_login"], set["disabled"], set["disabled_reason"] = nil, nil, nil
	set["cooling_until"], set["cooling_reason"] = nil, nil
	return d.Patch(a.Name, set)
}

// tokenFields are the members a refresh owns.
func tokenFields(a *Account) map[string]any {
	set := map[string]any{
		"access_token":  a.AccessToken,
		"refresh_token": a.RefreshToken,
		"expired":       timeField(a.Expiry),
		"last_refresh":  timeField(a.LastRefresh),
	}
	if a.IDToken != "" {
		set["id_token"] = a.IDToken
	}
	return set
}

func identityFields(a *Account) map[string]any {
	set := map[string]any{}
	add := func(k, v string) {
		if v != "" {
			set[k] = v
		}
	}
	add("email", a.Email)
	add("plan", a.Plan)
	add("account_id", a.AccountID)
	add("project_id", a.ProjectID)
	return set
}

func timeField(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

// fromFields reads an account from its file's members. Unknown members
// are the operator's and are kept by Patch.
func fromFields(name string, f fields) *Account {
	a := &Account{Name: name}
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(f[k], &s) // a non-string reads as empty
		return s
	}
	boolean := func(k string) bool {
		var b bool
		_ = json.Unmarshal(f[k], &b)
		return b
	}
	tm := func(k string) time.Time {
		t, _ := time.Parse(time.RFC3339, str(k))
		return t
	}
	a.Type = str("type")
	a.AccessToken, a.RefreshToken, a.IDToken = str("access_token"), str("refresh_token"), str("id_token")
	a.Expiry, a.LastRefresh = tm("expired"), tm("last_refresh")
	a.Email, a.Plan, a.AccountID, a.ProjectID = str("email"), str("plan"), str("account_id"), str("project_id")
	a.CoolingUntil, a.CoolingReason = tm("cooling_until"), str("cooling_reason")
	a.NeedsLogin, a.Disabled, a.DisabledReason = boolean("needs_login"), boolean("disabled"), str("disabled_reason")
	if a.Type == TypeGemini && len(f["token"]) > 0 {
		readGoogleToken(a, f["token"])
	}
	return a
}

// readGoogleToken reads the Gemini CLI layout, which nests the tokens in
// `token` (access_token, refresh_token, expiry).
func readGoogleToken(a *Account, raw json.RawMessage) {
	var t struct {
		AccessToken  string    `json:"access_token"`
		RefreshToken string    `json:"refresh_token"`
		Expiry       time.Time `json:"expiry"`
	}
	if json.Unmarshal(raw, &t) != nil {
		return
	}
	if a.AccessToken == "" {
		a.AccessToken, a.RefreshToken, a.Expiry = t.AccessToken, t.RefreshToken, t.Expiry
	}
}
