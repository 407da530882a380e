package config

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Usage configures the usage ledger: one record per finished request
// (names, counts, cost and times; never a secret, never content), written
// in batches off the request path to an SQLite file or a PostgreSQL
// database (docs/OPERATIONS.md, "Usage ledger").
type Usage struct {
	// Enabled turns the ledger on or off. Default true.
	Enabled *bool `yaml:"enabled"`
	// Database is an SQLite file's path (created with its directory on
	// first use; a leading ~/ is the home directory), or a postgres:// or
	// postgresql:// URL, so that replicas write one ledger. Secret: it may
	// hold a password, which is never printed. Default
	// $XDG_STATE_HOME/slipstream/usage.db, else
	// ~/.local/state/slipstream/usage.db (see DefaultUsageDatabase); when
	// that cannot be made, the ledger is off, with a warning.
	Database string `yaml:"database" secret:"true"`
	// Retention is how long records are kept: a duration with a d (days)
	// or h suffix, such as 90d or 720h, or "forever". Older records are
	// deleted at start and every hour. Default 90d.
	Retention Retention `yaml:"retention"`
	// QueueSize is how many records wait for the writer at most; past it
	// records are dropped and counted in
	// slipstream_ledger_records_total{result="dropped"}, and no request
	// ever waits for the database. Default 2048.
	QueueSize int `yaml:"queue_size"`
	// BatchSize is the most records one write carries. Default 1024.
	BatchSize int `yaml:"batch_size"`
	// BatchInterval is the longest a record waits before it is written.
	// Default 1s.
	BatchInterval Duration `yaml:"batch_interval"`
}

// Defaults of the usage section.
const (
	DefaultUsageRetention = Retention(90 * 24 * time.Hour)
	DefaultUsageQueueSize = 2048
	DefaultUsageBatchSize = 1024
	DefaultUsageInterval  = Duration(time.Second)
)

// On reports whether the ledger is enabled.
func (u *Usage) On() bool { return u.Enabled == nil || *u.Enabled }

// Equal reports whether u and v configure the same ledger.
func (u *Usage) Equal(v *Usage) bool {
	return u.On() == v.On() && u.Database == v.Database && u.Retention == v.Retention &&
		u.QueueSize == v.QueueSize && u.BatchSize == v.BatchSize && u.BatchInterval == v.BatchInterval
}

func (u *Usage) applyDefaults() {
	if u.Enabled == nil {
		on := true
		u.Enabled = &on
	}
	if u.Retention == 0 {
		u.Retention = DefaultUsageRetention
	}
	if u.QueueSize == 0 {
		u.QueueSize = DefaultUsageQueueSize
	}
	if u.BatchSize == 0 {
		u.BatchSize = DefaultUsageBatchSize
	}
	if u.BatchInterval == 0 {
		u.BatchInterval = DefaultUsageInterval
	}
}

func (u *Usage) validate(add func(string, string, ...any)) {
	if u.QueueSize < 0 {
		add("usage.queue_size", "must not be negative")
	}
	if u.BatchSize < 0 {
		add("usage.batch_size", "must not be negative")
	}
	if u.BatchInterval < 0 {
		add("usage.batch_interval", "must not be negative")
	}
	if err := checkUsageDatabase(u.Database); err != nil {
		add("usage.database", "%v", err)
	}
}

// checkUsageDatabase checks a database setting without quoting it (it
// may hold a password).
func checkUsageDatabase(db string) error {
	switch {
	case db == "":
		return nil
	case strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://"):
		u, err := url.Parse(db)
		if err != nil || u.Host == "" {
			return errors.New("not a valid URL (want postgres://user:password@host:5432/database)")
		}
		return nil
	case strings.Contains(db, "://"):
		return errors.New("want an SQLite file path or a postgres:// URL")
	case strings.ContainsAny(db, "?#"):
		return errors.New("an SQLite file path may not contain ? or #")
	}
	return nil
}

// DefaultUsageDatabase is the ledger's file when usage.database is not
// set, looked up through lookup: usage.db in systemd's state directory
// ($STATE_DIRECTORY, set by StateDirectory=; the first when it lists
// several), else in slipstream's directory of the user's state directory
// ($XDG_STATE_HOME/slipstream, else ~/.local/state/slipstream).
func DefaultUsageDatabase(lookup func(string) (string, bool)) (string, error) {
	if d, ok := lookup("STATE_DIRECTORY"); ok && d != "" {
		d, _, _ = strings.Cut(d, ":")
		if filepath.IsAbs(d) {
			return filepath.Join(d, "usage.db"), nil
		}
	}
	if d, ok := lookup("XDG_STATE_HOME"); ok && filepath.IsAbs(d) {
		return filepath.Join(d, "slipstream", "usage.db"), nil
	}
	if h, ok := lookup("HOME"); ok && h != "" && h != "/" {
		return filepath.Join(h, ".local", "state", "slipstream", "usage.db"), nil
	}
	return "", errors.New("no state directory for the usage ledger: none of STATE_DIRECTORY, XDG_STATE_HOME or HOME is set (set usage.database, or usage.enabled: false)")
}

// Retention is how long the ledger keeps records: a time.Duration
// written with a d (days) suffix too ("90d"), or "forever" (negative).
type Retention time.Duration

// Forever is the Retention that keeps records forever.
const Forever = Retention(-1)

// D returns r as a time.Duration (negative: forever).
func (r Retention) D() time.Duration { return time.Duration(r) }

// UnmarshalText parses 90d, 720h, 30m or forever.
func (r *Retention) UnmarshalText(b []byte) error {
	s := string(b)
	if s == "forever" {
		*r = Forever
		return nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 {
			return fmt.Errorf("cannot parse retention %q (want e.g. 90d, 720h or forever)", b)
		}
		*r = Retention(time.Duration(n) * 24 * time.Hour)
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return fmt.Errorf("cannot parse retention %q (want e.g. 90d, 720h or forever)", b)
	}
	*r = Retention(d)
	return nil
}

// MarshalText writes whole days as Nd, forever as forever.
func (r Retention) MarshalText() ([]byte, error) {
	d := time.Duration(r)
	switch {
	case d < 0:
		return []byte("forever"), nil
	case d > 0 && d%(24*time.Hour) == 0:
		return []byte(strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"), nil
	}
	return []byte(d.String()), nil
}
