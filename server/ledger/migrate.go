package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// A migration moves the schema from version-1 to version, with
// statements for each database (none: that database's schema does not
// change, and the version is recorded all the same). Migrations are only ever appended: a
// released one is never edited.
type migration struct {
	version          int
	sqlite, postgres []string
}

// migrations is the ledger's schema history. usage_records.ts is the
// request's arrival in Unix microseconds (UTC), latency_us and ttft_us
// are microseconds, cost_nano_usd billionths of a US dollar.
var migrations = []migration{{
	version: 1,
	sqlite: []string{
		`CREATE TABLE usage_records (
			id INTEGER PRIMARY KEY,
			ts INTEGER NOT NULL,
			request_id TEXT NOT NULL,
			key_name TEXT NOT NULL,
			provider TEXT NOT NULL,
			credential TEXT NOT NULL,
			model TEXT NOT NULL,
			upstream_model TEXT NOT NULL,
			client_dialect TEXT NOT NULL,
			upstream_dialect TEXT NOT NULL,
			transport TEXT NOT NULL,
			status INTEGER NOT NULL,
			cause TEXT NOT NULL,
			input_tokens INTEGER NOT NULL,
			output_tokens INTEGER NOT NULL,
			cache_read_tokens INTEGER NOT NULL,
			cache_write_tokens INTEGER NOT NULL,
			reasoning_tokens INTEGER NOT NULL,
			estimated BOOLEAN NOT NULL,
			cost_nano_usd INTEGER NOT NULL,
			priced BOOLEAN NOT NULL,
			api_equivalent BOOLEAN NOT NULL,
			latency_us INTEGER NOT NULL,
			ttft_us INTEGER NOT NULL,
			bytes_in INTEGER NOT NULL,
			bytes_out INTEGER NOT NULL
		)`,
		`CREATE INDEX usage_records_ts ON usage_records (ts)`,
	},
	postgres: []string{
		`CREATE TABLE usage_records (
			id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
			ts BIGINT NOT NULL,
			request_id TEXT NOT NULL,
			key_name TEXT NOT NULL,
			provider TEXT NOT NULL,
			credential TEXT NOT NULL,
			model TEXT NOT NULL,
			upstream_model TEXT NOT NULL,
			client_dialect TEXT NOT NULL,
			upstream_dialect TEXT NOT NULL,
			transport TEXT NOT NULL,
			status INTEGER NOT NULL,
			cause TEXT NOT NULL,
			input_tokens BIGINT NOT NULL,
			output_tokens BIGINT NOT NULL,
			cache_read_tokens BIGINT NOT NULL,
			cache_write_tokens BIGINT NOT NULL,
			reasoning_tokens BIGINT NOT NULL,
			estimated BOOLEAN NOT NULL,
			cost_nano_usd BIGINT NOT NULL,
			priced BOOLEAN NOT NULL,
			api_equivalent BOOLEAN NOT NULL,
			latency_us BIGINT NOT NULL,
			ttft_us BIGINT NOT NULL,
			bytes_in BIGINT NOT NULL,
			bytes_out BIGINT NOT NULL
		)`,
		`CREATE INDEX usage_records_ts ON usage_records (ts)`,
	},
}, {
	// The guardrail rules that matched each request (names only).
	version:  2,
	sqlite:   []string{`ALTER TABLE usage_records ADD COLUMN guardrails TEXT NOT NULL DEFAULT ''`},
	postgres: []string{`ALTER TABLE usage_records ADD COLUMN guardrails TEXT NOT NULL DEFAULT ''`},
}, {
	// SQLite stores records in pages (page.go): one row of usage_pages
	// holds up to 512 of them as a JSON array of arrays, values in the
	// order of usage_records' columns. The rows of version 2 move into
	// pages in the order of their ids, and a view keeps usage_records'
	// name and columns for an operator's SQL; its id is the page's id
	// times 1024 plus the record's place in the page. The view reads with
	// json_extract rather than ->>, which an sqlite3 older than 3.38 would
	// not parse (and so refuse the whole file). PostgreSQL keeps its rows:
	// no statements.
	version: 3,
	sqlite: []string{
		`CREATE TABLE usage_pages (
			id INTEGER PRIMARY KEY,
			ts_min INTEGER NOT NULL,
			ts_max INTEGER NOT NULL,
			n INTEGER NOT NULL,
			records TEXT NOT NULL
		)`,
		`CREATE INDEX usage_pages_ts_max ON usage_pages (ts_max, ts_min)`,
		`CREATE INDEX usage_pages_ts_min ON usage_pages (ts_min, ts_max)`,
		`INSERT INTO usage_pages (ts_min, ts_max, n, records)
			SELECT MIN(ts), MAX(ts), COUNT(*), json_group_array(json_array(
				ts, request_id, key_name, provider, credential, model, upstream_model, client_dialect,
				upstream_dialect, transport, status, cause, input_tokens, output_tokens,
				cache_read_tokens, cache_write_tokens, reasoning_tokens, estimated, cost_nano_usd,
				priced, api_equivalent, latency_us, ttft_us, bytes_in, bytes_out, guardrails
			) ORDER BY id)
			FROM (SELECT *, (row_number() OVER (ORDER BY id) - 1) / 512 AS page FROM usage_records)
			GROUP BY page ORDER BY page`,
		`DROP TABLE usage_records`,
		`CREATE VIEW usage_records (id,
				ts, request_id, key_name, provider, credential, model, upstream_model, client_dialect,
				upstream_dialect, transport, status, cause, input_tokens, output_tokens,
				cache_read_tokens, cache_write_tokens, reasoning_tokens, estimated, cost_nano_usd,
				priced, api_equivalent, latency_us, ttft_us, bytes_in, bytes_out, guardrails
			) AS SELECT
				p.id * 1024 + j.key, json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'),
				json_extract(j.value, '$[2]'), json_extract(j.value, '$[3]'), json_extract(j.value, '$[4]'),
				json_extract(j.value, '$[5]'), json_extract(j.value, '$[6]'), json_extract(j.value, '$[7]'),
				json_extract(j.value, '$[8]'), json_extract(j.value, '$[9]'), json_extract(j.value, '$[10]'),
				json_extract(j.value, '$[11]'), json_extract(j.value, '$[12]'), json_extract(j.value, '$[13]'),
				json_extract(j.value, '$[14]'), json_extract(j.value, '$[15]'), json_extract(j.value, '$[16]'),
				json_extract(j.value, '$[17]'), json_extract(j.value, '$[18]'), json_extract(j.value, '$[19]'),
				json_extract(j.value, '$[20]'), json_extract(j.value, '$[21]'), json_extract(j.value, '$[22]'),
				json_extract(j.value, '$[23]'), json_extract(j.value, '$[24]'), json_extract(j.value, '$[25]')
			FROM usage_pages AS p, json_each(p.records) AS j`,
	},
}}

// SchemaVersion is the schema version this slipstream writes.
func SchemaVersion() int { return migrations[len(migrations)-1].version }

// migrationLock is the PostgreSQL advisory lock key that serialises
// replicas migrating one database at once ("slipstrm" in ASCII).
const migrationLock = 0x736c697073747270

// ensureSchema applies the migrations once; after a failure the next
// call tries again.
func (d *DB) ensureSchema(ctx context.Context) error {
	d.schemaMu.Lock()
	defer d.schemaMu.Unlock()
	if d.schemaOK {
		return nil
	}
	if err := d.migrate(ctx); err != nil {
		return fmt.Errorf("cannot prepare the usage ledger %s: %w", d.where, err)
	}
	d.schemaOK = true
	return nil
}

// migrate applies, in one transaction, the migrations the database has
// not seen, recording each in schema_version. Replicas starting together
// take turns: PostgreSQL through an advisory lock held to the commit,
// SQLite through its write lock, taken at BEGIN.
func (d *DB) migrate(ctx context.Context) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	if d.postgres {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrationLock)); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_us BIGINT NOT NULL)`); err != nil {
		return err
	}
	have, err := schemaVersion(ctx, tx)
	if err != nil {
		return err
	}
	if have > SchemaVersion() {
		return fmt.Errorf("its schema is version %d, newer than this slipstream knows (%d): upgrade slipstream", have, SchemaVersion())
	}
	for _, m := range migrations[have:] {
		if err := d.apply(ctx, tx, &m); err != nil {
			return fmt.Errorf("migration %d: %w", m.version, err)
		}
	}
	return tx.Commit()
}

func schemaVersion(ctx context.Context, tx *sql.Tx) (int, error) {
	var v int
	err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&v)
	return v, err
}

func (d *DB) apply(ctx context.Context, tx *sql.Tx, m *migration) error {
	stmts := m.sqlite
	if d.postgres {
		stmts = m.postgres
	}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	q := "INSERT INTO schema_version (version, applied_us) VALUES (?, ?)"
	if d.postgres {
		q = "INSERT INTO schema_version (version, applied_us) VALUES ($1, $2)"
	}
	_, err := tx.ExecContext(ctx, q, m.version, time.Now().UnixMicro())
	return err
}
