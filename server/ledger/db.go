package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // PostgreSQL: the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // SQLite in pure Go: the "sqlite" driver, no cgo
)

// DB is a ledger database: an SQLite file or a PostgreSQL database, with
// the ledger's schema. Its methods are safe for concurrent use.
type DB struct {
	db       *sql.DB
	postgres bool
	where    string // Describe(database): no password

	schemaMu sync.Mutex
	schemaOK bool // migrations applied

	stmtMu sync.Mutex
	stmts  [maxChunkLog + 1]*sql.Stmt // PostgreSQL's INSERTs of 1<<k rows, prepared on first use

	path   string     // the SQLite file
	liteMu sync.Mutex // held around every use of lite
	lite   *lite      // SQLite's writing connection, opened by the first Insert
}

// IsPostgres reports whether database names a PostgreSQL database (a
// postgres:// or postgresql:// URL) rather than an SQLite file.
func IsPostgres(database string) bool {
	return strings.HasPrefix(database, "postgres://") || strings.HasPrefix(database, "postgresql://")
}

// Describe names database for a log line or an error: an SQLite file's
// path, or a PostgreSQL URL with its password replaced by xxxxx. It never
// returns a password.
func Describe(database string) string {
	if !IsPostgres(database) {
		return database
	}
	u, err := url.Parse(database)
	if err != nil {
		return "postgres://(a URL that does not parse)"
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// Open opens the ledger database and applies its migrations: an SQLite
// file (created with its directory, mode 0600 in 0700, on first use; a
// leading ~/ is the home directory) or, for a postgres:// URL, a
// PostgreSQL database. When the migrations fail, Open returns the DB
// with the error: a PostgreSQL server that is down now may answer later,
// and Insert applies them first. The caller closes the DB either way
// (unless it is nil).
func Open(ctx context.Context, database string) (*DB, error) {
	d, err := OpenLazy(database)
	if err != nil {
		return nil, err
	}
	return d, d.ensureSchema(ctx)
}

// OpenLazy is Open without connecting: an SQLite file and its directory
// are created (so that a path that cannot be written fails now), but the
// database is first opened, and its migrations applied, by the first
// Insert, Prune or query. A server opens its ledger so, so that the
// database's code and caches cost no memory until a request is recorded.
func OpenLazy(database string) (*DB, error) {
	if database == "" {
		return nil, errors.New("cannot open the usage ledger: no database given (usage.database)")
	}
	d := &DB{postgres: IsPostgres(database), where: Describe(database)}
	var err error
	if d.postgres {
		d.db, err = sql.Open("pgx", database)
		if err == nil {
			d.db.SetMaxOpenConns(4)
			d.db.SetMaxIdleConns(1)
		}
	} else {
		d.path, d.db, err = openSQLite(database)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot open the usage ledger %s: %w", d.where, err)
	}
	d.db.SetConnMaxIdleTime(time.Minute)
	return d, nil
}

// sqliteParams are the settings of every SQLite connection: WAL so that
// `slipstream usage` reads while the server writes, a 5 s wait for a lock
// held by another process, a 256 KiB page cache (the ledger is written in
// batches and read rarely: a small cache keeps idle memory small), and
// write transactions that take the lock at BEGIN.
const sqliteParams = "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=cache_size(-256)&_txlock=immediate"

// openSQLite creates the file at path and returns its full path and the
// database/sql handle that migrates, queries and prunes it.
func openSQLite(path string) (string, *sql.DB, error) {
	if strings.ContainsAny(path, "?#") {
		return "", nil, errors.New("an SQLite path may not contain ? or #")
	}
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", nil, err
		}
		path = filepath.Join(home, rest)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", nil, err
	}
	if err := f.Close(); err != nil {
		return "", nil, err
	}
	db, err := sql.Open("sqlite", "file:"+path+sqliteParams)
	if err != nil {
		return "", nil, err
	}
	// Two connections for queries, pruning and migrations (Insert writes
	// on its own: see lite), one kept while idle.
	db.SetMaxOpenConns(2)
	db.SetMaxIdleConns(1)
	return path, db, nil
}

// String describes the database as Describe does.
func (d *DB) String() string { return d.where }

// Postgres reports whether d is a PostgreSQL database.
func (d *DB) Postgres() bool { return d.postgres }

// Close closes the database.
func (d *DB) Close() error {
	d.stmtMu.Lock()
	for i, st := range d.stmts {
		if st != nil {
			st.Close() //nolint:errcheck // closing the database closes it anyway
			d.stmts[i] = nil
		}
	}
	d.stmtMu.Unlock()
	d.liteMu.Lock()
	if d.lite != nil {
		d.lite.close()
		d.lite = nil
	}
	d.liteMu.Unlock()
	return d.db.Close()
}

// ph is the nth (1-based) placeholder of d's SQL dialect.
func (d *DB) ph(b *strings.Builder, n int) {
	if d.postgres {
		fmt.Fprintf(b, "$%d", n)
		return
	}
	b.WriteByte('?')
}

// clean makes s storable as text in either database: valid UTF-8 (a
// client's model name is not checked on the request path) without NUL.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	return s
}
