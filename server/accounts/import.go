package accounts

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// CLIFile is where a provider's own CLI keeps its login (the default
// import source): Claude Code's ~/.claude/.credentials.json (Linux and
// Windows; macOS keeps it in the Keychain) and Codex's ~/.codex/auth.json
// ($CODEX_HOME/auth.json when set).
func CLIFile(typ string) string {
	home, _ := os.UserHomeDir()
	switch typ {
	case TypeClaude:
		return filepath.Join(home, ".claude", ".credentials.json")
	case TypeCodex:
		if h := os.Getenv("CODEX_HOME"); h != "" {
			return filepath.Join(h, "auth.json")
		}
		return filepath.Join(home, ".codex", "auth.json")
	}
	return ""
}

// Import reads a CLI's stored login into an account (not yet saved).
// Errors never quote the file (it holds tokens).
func Import(typ, path string, now time.Time) (*Account, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, errors.Unwrap(err))
	}
	a := &Account{Type: typ}
	switch typ {
	case TypeClaude:
		var v struct {
			OAuth struct {
				AccessToken  string `json:"accessToken"`
				RefreshToken string `json:"refreshToken"`
				ExpiresAt    int64  `json:"expiresAt"`
			} `json:"claudeAiOauth"`
		}
		if json.Unmarshal(b, &v) != nil || v.OAuth.RefreshToken == "" {
			return nil, fmt.Errorf("%s is not a Claude Code credentials file (claudeAiOauth with a refreshToken)", path)
		}
		a.AccessToken, a.RefreshToken = v.OAuth.AccessToken, v.OAuth.RefreshToken
		if v.OAuth.ExpiresAt > 0 {
			a.Expiry = time.UnixMilli(v.OAuth.ExpiresAt)
		}
	case TypeCodex:
		var v struct {
			Tokens struct {
				IDToken      string `json:"id_token"`
				AccessToken  string `json:"access_token"`
				RefreshToken string `json:"refresh_token"`
				AccountID    string `json:"account_id"`
			} `json:"tokens"`
			LastRefresh time.Time `json:"last_refresh"`
		}
		if json.Unmarshal(b, &v) != nil || v.Tokens.RefreshToken == "" {
			return nil, fmt.Errorf("%s is not a Codex auth file (tokens with a refresh_token; an API-key login cannot be imported)", path)
		}
		t := v.Tokens
		a.AccessToken, a.RefreshToken, a.IDToken, a.AccountID, a.LastRefresh = t.AccessToken, t.RefreshToken, t.IDToken, t.AccountID, v.LastRefresh
		if cl, err := ParseCodexIDToken(t.IDToken); err == nil {
			a.Email, a.Plan = cl.Email, cl.Plan
			if a.AccountID == "" {
				a.AccountID = cl.AccountID
			}
		}
		a.Expiry = jwtExpiry(t.AccessToken)
	default:
		return nil, fmt.Errorf("cannot import %s logins (claude or codex)", typ)
	}
	if a.LastRefresh.IsZero() {
		a.LastRefresh = now
	}
	return a, nil
}

// jwtExpiry reads the exp claim of a JWT (unverified), zero when absent.
func jwtExpiry(tok string) time.Time {
	parts := strings.Split(tok, ".")
	if len(parts) < 2 {
		return time.Time{}
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}
	}
	var c struct {
		Exp int64 `json:"exp"`
	}
	if json.Unmarshal(b, &c) != nil || c.Exp == 0 {
		return time.Time{}
	}
	return time.Unix(c.Exp, 0)
}
