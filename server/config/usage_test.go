package config

import (
	"strings"
	"testing"
	"time"
)

func TestUsage(t *testing.T) {
	parse := func(yml string) (*Config, error) {
		return Parse([]byte("providers:\n  - {name: m, kind: mock, models: [\"*\"]}\n"+yml), func(string) (string, bool) { return "", false })
	}
	// Defaults: on, 90 days, the default queue and batches.
	c, err := parse("")
	if err != nil {
		t.Fatal(err)
	}
	u := c.Usage
	if !u.On() || u.Database != "" || u.Retention.D() != 90*24*time.Hour || u.QueueSize != 2048 || u.BatchSize != 1024 || u.BatchInterval.D() != time.Second {
		t.Fatalf("defaults: %+v", u)
	}
	// Set.
	c, err = parse("usage:\n  enabled: false\n  database: /var/lib/slipstream/usage.db\n  retention: 30d\n  queue_size: 10\n  batch_size: 5\n  batch_interval: 250ms\n")
	if err != nil {
		t.Fatal(err)
	}
	u = c.Usage
	if u.On() || u.Database != "/var/lib/slipstream/usage.db" || u.Retention.D() != 30*24*time.Hour || u.QueueSize != 10 || u.BatchSize != 5 || u.BatchInterval.D() != 250*time.Millisecond {
		t.Fatalf("set: %+v", u)
	}
	c, err = parse("usage: {retention: forever}\n")
	if err != nil || c.Usage.Retention != Forever {
		t.Fatalf("forever: %+v, %v", c, err)
	}
	// Problems, never quoting the database (it may hold a password).
	f := func(yml, want string) {
		t.Helper()
		_, err := parse(yml)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%q: %v, want %q", yml, err, want)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Fatalf("%q: the password reached the problem: %v", yml, err)
		}
	}
	f("usage: {retention: 0d}\n", "usage.retention")
	f("usage: {retention: soon}\n", "usage.retention")
	f("usage: {queue_size: -1}\n", "usage.queue_size: must not be negative")
	f("usage: {database: \"mysql://u:hunter2@db/x\"}\n", "usage.database: want an SQLite file path or a postgres:// URL")
	f("usage: {database: \"postgres://u:hunter2@/x\"}\n", "usage.database: not a valid URL")
	f("usage: {database: [\"hunter2\"]}\n", "usage.database")
	f("usage: {colour: red}\n", "usage.colour")
}

func TestUsagePrint(t *testing.T) {
	c, err := Parse([]byte("providers:\n  - {name: m, kind: mock, models: [\"*\"]}\nusage:\n  database: postgres://u:hunter2@db:5432/ledger\n  retention: 7d\n"), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.MarshalRedacted()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "hunter2") || !strings.Contains(string(out), "database: REDACTED") || !strings.Contains(string(out), "retention: 7d") {
		t.Fatalf("printed:\n%s", out)
	}
}

func TestDefaultUsageDatabase(t *testing.T) {
	f := func(env map[string]string, want string) {
		t.Helper()
		got, err := DefaultUsageDatabase(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		if want == "" {
			if err == nil {
				t.Fatalf("%v: %q, want an error", env, got)
			}
			return
		}
		if err != nil || got != want {
			t.Fatalf("%v: %q, %v; want %q", env, got, err, want)
		}
	}
	f(map[string]string{"XDG_STATE_HOME": "/s", "HOME": "/h"}, "/s/slipstream/usage.db")
	f(map[string]string{"XDG_STATE_HOME": "relative", "HOME": "/h"}, "/h/.local/state/slipstream/usage.db")
	f(map[string]string{"HOME": "/h"}, "/h/.local/state/slipstream/usage.db")
	f(map[string]string{"STATE_DIRECTORY": "/var/lib/slipstream:/var/lib/other", "HOME": "/h"}, "/var/lib/slipstream/usage.db")
	f(map[string]string{"HOME": "/"}, "")
	f(map[string]string{}, "")
}
