package config

import (
	"fmt"
	"strings"
)

// Admin configures the management API (/admin/api/) and the web console
// (/console/).
type Admin struct {
	// Tokens are the named bearer tokens the management API and the
	// console accept (Authorization: Bearer TOKEN). They are separate
	// from client keys: a client key is refused there. Default: none,
	// and then the API and the console are served only when every
	// listener is a loopback address.
	Tokens []AdminToken `yaml:"tokens"`
}

// AdminToken is one named admin token.
type AdminToken struct {
	// Name identifies the token in the log line of each action; the
	// token itself is never logged.
	Name string `yaml:"name"`
	// Token is the secret, usually "${ENV}". Never printed (check -print
	// redacts it). At least 16 characters.
	Token string `yaml:"token" secret:"true"`
}

// minAdminToken is the shortest admin token accepted: the API can cancel
// traffic and reload the configuration.
const minAdminToken = 16

// validateAdmin checks admin.tokens: named, unique, long enough, and none
// equal to a client key.
func (c *Config) validateAdmin(add func(string, string, ...any)) {
	names := map[string]bool{}
	tokens := map[string]bool{}
	for i, t := range c.Admin.Tokens {
		path := fmt.Sprintf("admin.tokens[%d]", i)
		switch {
		case strings.TrimSpace(t.Name) == "":
			add(path+".name", "every admin token needs a name (it names the token in the log)")
		case names[t.Name]:
			add(path+".name", "duplicate admin token name %q", t.Name)
		}
		names[t.Name] = true
		checkSecret(path+".token", t.Token, add)
		if len(t.Token) < minAdminToken {
			add(path+".token", "too short: an admin token needs at least %d characters", minAdminToken)
		}
		if tokens[t.Token] && t.Token != "" {
			add(path+".token", "the same token is listed twice (token %q)", t.Name)
		}
		tokens[t.Token] = true
		for _, k := range c.Keys {
			if k.Key != "" && k.Key == t.Token {
				add(path+".token", "admin token %q is also client key %q: give the management API a token of its own", t.Name, k.Name)
			}
		}
	}
}
