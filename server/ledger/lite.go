package ledger

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"

	"slipstream/pool"
)

// lite writes records into an SQLite ledger through SQLite's C API (as
// modernc.org/sqlite transpiles it to Go) on a connection of its own,
// rather than through database/sql: one prepared single-row INSERT,
// stepped once per record inside one transaction per batch.
//
// That path costs about half of database/sql's for the same rows: no
// interface boxing of 25 arguments per row, no per-parameter name
// lookups, no C copy of each string (the strings of a row are copied into
// one C buffer, bound in place), and no mutex per call (the connection is
// opened without SQLite's own, because lite has one user at a time: DB
// holds liteMu around every call).
//
// Migrations, queries and pruning stay on database/sql; WAL lets them run
// beside this connection.
type lite struct {
	tls   *libc.TLS
	db    uintptr // sqlite3*
	ins   uintptr // sqlite3_stmt*: the INSERT of one row
	arena uintptr // C buffer of arenaSize bytes: one row's strings
	text  []byte  // the arena as Go sees it
}

// maxText cuts the configuration names a row stores (key, provider,
// credential): longer ones are stored cut, at a whole UTF-8 character.
const maxText = 512

// arenaSize holds the longest row's strings, each byte stored as at most
// three (an invalid byte becomes U+FFFD): the id, two model names, the
// guardrails' rule names and seven other names, each cut to its maximum.
const arenaSize = 3 * (MaxID + 3*MaxName + 7*maxText)

// openLite opens path (an existing file whose schema is in place) for
// writing rows.
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
	l.text = pool.Foreign(l.arena, arenaSize)
	if l.db, err = l.open(path); err != nil {
		return nil, err
	}
	for _, q := range []string{"PRAGMA busy_timeout=5000", "PRAGMA synchronous=NORMAL", "PRAGMA cache_size=-256"} {
		if err := l.exec(q); err != nil {
			return nil, err
		}
	}
	l.ins, err = l.prepare("INSERT INTO usage_records (" + columns + ") VALUES (?" + strings.Repeat(",?", numColumns-1) + ")")
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
	db := uintptr(binary.NativeEndian.Uint64(l.text[:8]))
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
	return uintptr(binary.NativeEndian.Uint64(l.text[:8])), nil
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

// err is the connection's last error.
func (l *lite) err(rc int32) error {
	return fmt.Errorf("sqlite: %s (code %d)", libc.GoString(sqlite3.Xsqlite3_errmsg(l.tls, l.db)), rc)
}

// insert writes rs in one transaction: all of them or none.
func (l *lite) insert(ctx context.Context, rs []Record) error {
	if err := l.exec("BEGIN IMMEDIATE"); err != nil {
		return err
	}
	for i := range rs {
		err := ctx.Err()
		if err == nil {
			err = l.row(&rs[i])
		}
		if err != nil {
			l.exec("ROLLBACK") //nolint:errcheck // the row's error is the one to report
			return err
		}
	}
	return l.exec("COMMIT")
}

// row inserts one record.
func (l *lite) row(r *Record) error {
	st := l.ins
	defer sqlite3.Xsqlite3_reset(l.tls, st)
	b := binder{l: l}
	b.int(r.Start)
	b.text(r.ID.b[:r.ID.n], MaxID)
	b.text(pool.S2B(r.Key), maxText)
	b.text(pool.S2B(r.Provider), maxText)
	b.text(pool.S2B(r.Credential), maxText)
	b.text(r.Model.b[:r.Model.n], MaxName)
	b.text(r.UpstreamModel.b[:r.UpstreamModel.n], MaxName)
	b.text(pool.S2B(r.ClientDialect), maxText)
	b.text(pool.S2B(r.UpstreamDialect), maxText)
	b.text(pool.S2B(r.Transport.String()), maxText)
	b.int(int64(r.Status))
	b.text(pool.S2B(r.Cause), maxText)
	b.int(r.Input)
	b.int(r.Output)
	b.int(r.CacheRead)
	b.int(r.CacheWrite)
	b.int(r.Reasoning)
	b.bool(r.Estimated)
	b.int(r.CostNanoUSD)
	b.bool(r.Priced)
	b.bool(r.APIEquivalent)
	b.int(r.Latency.Microseconds())
	b.int(r.TTFT.Microseconds())
	b.int(r.BytesIn)
	b.int(r.BytesOut)
	b.text(r.Guardrails.b[:r.Guardrails.n], MaxName)
	if b.rc != sqlite3.SQLITE_OK {
		return l.err(b.rc)
	}
	if rc := sqlite3.Xsqlite3_step(l.tls, st); rc != sqlite3.SQLITE_DONE {
		return l.err(rc)
	}
	return nil
}

// close finalizes the statement and closes the connection.
func (l *lite) close() {
	if l.ins != 0 {
		sqlite3.Xsqlite3_finalize(l.tls, l.ins)
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

// binder binds one row's parameters in order, its strings copied into
// the arena; the first failure is kept and the rest skipped.
type binder struct {
	l   *lite
	i   int32 // the last parameter bound, 1-based
	off int   // bytes of the arena used
	rc  int32
}

func (b *binder) int(v int64) {
	b.i++
	if b.rc == sqlite3.SQLITE_OK {
		b.rc = sqlite3.Xsqlite3_bind_int64(b.l.tls, b.l.ins, b.i, v)
	}
}

func (b *binder) bool(v bool) {
	var n int64
	if v {
		n = 1
	}
	b.int(n)
}

// text binds s, cut to max bytes at a whole UTF-8 character, as
// appendStorable stores it. The arena is bound in place (SQLITE_STATIC):
// it is not touched again before the statement is reset.
func (b *binder) text(s []byte, max int) {
	b.i++
	if b.rc != sqlite3.SQLITE_OK {
		return
	}
	s = wholeRunes(s[:min(len(s), max)], max)
	start := b.off
	dst := appendStorable(b.l.text[start:start], s)
	if len(dst) > 0 && &dst[0] != &b.l.text[start] {
		panic("BUG: a usage record's names outgrew the writer's buffer")
	}
	b.off += len(dst)
	b.rc = sqlite3.Xsqlite3_bind_text(b.l.tls, b.l.ins, b.i, b.l.arena+uintptr(start), int32(len(dst)), 0)
}

// appendStorable appends s as text either database stores, as clean
// does: valid UTF-8 (a client's model name is not checked on the request
// path; each run of invalid bytes becomes one U+FFFD) and no NUL.
func appendStorable(dst, s []byte) []byte {
	if utf8.Valid(s) && bytes.IndexByte(s, 0) < 0 {
		return append(dst, s...)
	}
	return appendStorableSlow(dst, s)
}

func appendStorableSlow(dst, s []byte) []byte {
	invalid := false
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		switch {
		case r == utf8.RuneError && n == 1:
			if !invalid {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			}
			invalid = true
		case r != 0:
			dst = append(dst, s[:n]...)
			invalid = false
		default:
			invalid = false
		}
		s = s[n:]
	}
	return dst
}
