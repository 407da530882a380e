package ledger

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"

	"slipstream/pool"
)

// lite writes pages into an SQLite ledger through SQLite's C API (as
// modernc.org/sqlite transpiles it to Go) on a connection of its own,
// rather than through database/sql: the page is appended straight into C
// memory and bound in place, and BEGIN, the page's INSERT and COMMIT are
// statements prepared once.
//
// Per batch that saves what database/sql spends around SQLite's own
// commit: a goroutine per transaction, a goroutine per statement watching
// the context, a C copy of the page, and SQLite's mutex (the connection is
// opened without it, because lite has one user at a time: DB holds liteMu
// around every call). BenchmarkInsertSQL, the database/sql page insert,
// is the baseline it must beat.
//
// Migrations, queries and pruning stay on database/sql; WAL lets them run
// beside this connection.
type lite struct {
	tls   *libc.TLS
	db    uintptr // sqlite3*
	begin uintptr // sqlite3_stmt*: BEGIN IMMEDIATE
	ins   uintptr // sqlite3_stmt*: the INSERT of one page
	end   uintptr // sqlite3_stmt*: COMMIT
	arena uintptr // C buffer of arenaSize bytes: the page
	page  []byte  // the arena as Go sees it
	w     pageWriter
}

// maxRecordBytes bounds one record as appendRecord writes it: each byte
// of a name is written as at most six (a control byte as \u00XX), and
// each number as at most 20 bytes, plus the separators.
const maxRecordBytes = 6*(MaxID+3*MaxName+7*maxText) + numColumns*24

// arenaSize holds the longest page: appendPage starts a record only while
// the page is under pageBytes.
const arenaSize = pageBytes + maxRecordBytes + 2

// liteCacheSize is the writing connection's page cache, in KiB (negated,
// as SQLite takes it). The writer only appends: what it reads again is
// the right edges of the table and its two indexes, which fit in 64 KiB;
// a usage page's overflow pages are written once (past the cache, SQLite
// spills them to the WAL before the commit). A larger cache only grows
// the resident set, since SQLite's allocator (modernc.org/memory) keeps
// what it once held mapped for reuse: 256 KiB here left 0.3 MB more
// resident after a write.
const liteCacheSize = "-64"

// openLite opens path (an existing file whose schema is in place) for
// writing pages.
func openLite(path string) (_ *lite, err error) {
	l := &lite{tls: libc.NewTLS()}
	defer func() {
		if err != nil {
			l.close()
		}
	}()
	if l.arena = libc.Xmalloc(l.tls, arenaSize); l.arena == 0 {
		return nil, errors.New("out of memory")
	}
	l.page = pool.Foreign(l.arena, arenaSize)[:0]
	if l.db, err = l.open(path); err != nil {
		return nil, err
	}
	for _, q := range []string{"PRAGMA busy_timeout=5000", "PRAGMA synchronous=NORMAL", "PRAGMA cache_size=" + liteCacheSize} {
		if err := l.exec(q); err != nil {
			return nil, err
		}
	}
	if l.begin, err = l.prepare("BEGIN IMMEDIATE"); err != nil {
		return nil, err
	}
	if l.ins, err = l.prepare(insertPageSQL); err != nil {
		return nil, err
	}
	l.end, err = l.prepare("COMMIT")
	return l, err
}

// open is sqlite3_open_v2 without SQLite's mutex (see lite).
func (l *lite) open(path string) (uintptr, error) {
	cpath, err := libc.CString(path)
	if err != nil {
		return 0, err
	}
	defer libc.Xfree(l.tls, cpath)
	out := l.arena // the sqlite3* comes back in the arena's first 8 bytes
	flags := int32(sqlite3.SQLITE_OPEN_READWRITE | sqlite3.SQLITE_OPEN_NOMUTEX)
	rc := sqlite3.Xsqlite3_open_v2(l.tls, cpath, out, flags, 0)
	db := uintptr(binary.NativeEndian.Uint64(l.page[:8]))
	if rc != sqlite3.SQLITE_OK {
		msg := "cannot open the file"
		if db != 0 {
			msg = libc.GoString(sqlite3.Xsqlite3_errmsg(l.tls, db))
			sqlite3.Xsqlite3_close_v2(l.tls, db)
		}
		return 0, fmt.Errorf("sqlite: %s (code %d)", msg, rc)
	}
	return db, nil
}

// prepare compiles one statement.
func (l *lite) prepare(q string) (uintptr, error) {
	cq, err := libc.CString(q)
	if err != nil {
		return 0, err
	}
	defer libc.Xfree(l.tls, cq)
	if rc := sqlite3.Xsqlite3_prepare_v2(l.tls, l.db, cq, -1, l.arena, 0); rc != sqlite3.SQLITE_OK {
		return 0, l.err(rc)
	}
	return uintptr(binary.NativeEndian.Uint64(l.page[:8])), nil
}

// exec runs statements that return no rows.
func (l *lite) exec(q string) error {
	cq, err := libc.CString(q)
	if err != nil {
		return err
	}
	defer libc.Xfree(l.tls, cq)
	if rc := sqlite3.Xsqlite3_exec(l.tls, l.db, cq, 0, 0, 0); rc != sqlite3.SQLITE_OK {
		return l.err(rc)
	}
	return nil
}

// step runs a prepared statement that returns no rows, and resets it.
func (l *lite) step(st uintptr) error {
	rc := sqlite3.Xsqlite3_step(l.tls, st)
	sqlite3.Xsqlite3_reset(l.tls, st)
	if rc != sqlite3.SQLITE_DONE {
		return l.err(rc)
	}
	return nil
}

// err is the connection's last error.
func (l *lite) err(rc int32) error {
	return fmt.Errorf("sqlite: %s (code %d)", libc.GoString(sqlite3.Xsqlite3_errmsg(l.tls, l.db)), rc)
}

// insert writes rs as pages in one transaction: all of them or none.
func (l *lite) insert(ctx context.Context, rs []Record) error {
	if err := l.step(l.begin); err != nil {
		return err
	}
	for len(rs) > 0 {
		n, err := l.insertPage(ctx, rs)
		if err != nil {
			l.exec("ROLLBACK") //nolint:errcheck // the page's error is the one to report
			return err
		}
		rs = rs[n:]
	}
	return l.step(l.end)
}

// insertPage writes the first page of rs and returns how many records
// it holds. The page is bound in place (SQLITE_STATIC): the arena is not
// touched again before the statement is reset.
func (l *lite) insertPage(ctx context.Context, rs []Record) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	page, n, lo, hi := l.w.appendPage(l.page[:0], rs)
	if &page[0] != &l.page[:1][0] {
		panic("BUG: a usage page outgrew the writer's buffer")
	}
	st := l.ins
	rc := sqlite3.Xsqlite3_bind_int64(l.tls, st, 1, lo)
	if rc == sqlite3.SQLITE_OK {
		rc = sqlite3.Xsqlite3_bind_int64(l.tls, st, 2, hi)
	}
	if rc == sqlite3.SQLITE_OK {
		rc = sqlite3.Xsqlite3_bind_int64(l.tls, st, 3, int64(n))
	}
	if rc == sqlite3.SQLITE_OK {
		rc = sqlite3.Xsqlite3_bind_text(l.tls, st, 4, l.arena, int32(len(page)), 0)
	}
	if rc != sqlite3.SQLITE_OK {
		return 0, l.err(rc)
	}
	return n, l.step(st)
}

// close finalizes the statements and closes the connection.
func (l *lite) close() {
	for _, st := range []uintptr{l.begin, l.ins, l.end} {
		if st != 0 {
			sqlite3.Xsqlite3_finalize(l.tls, st)
		}
	}
	if l.db != 0 {
		sqlite3.Xsqlite3_close_v2(l.tls, l.db)
	}
	if l.arena != 0 {
		libc.Xfree(l.tls, l.arena)
	}
	l.tls.Close()
	*l = lite{}
}
