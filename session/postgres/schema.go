package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// SchemaVersion is the version of the schema this package reads and writes,
// kept in the strata_schema table. Version 1 holds what version 4 of the
// SQLite store holds (session.SchemaVersion): sessions, loops chained by
// previous_loop_id, turns, message parts, leases, pings and tl;drs;
// version 2 adds the content-addressed payloads (session.Payloads).
const SchemaVersion = 2

// migrations[v] migrates the schema from version v to v+1, inside the
// migration's transaction. Add a step to the end (never edit a released one)
// and bump SchemaVersion.
var migrations = []string{migrate0to1, migrate1to2}

// migrateLock is the advisory lock key that serializes migrations of one
// database: two processes opening it at once cannot both create the tables.
const migrateLock = 0x5374726174610001 // "Strata" + 1

// migrate brings the schema of the search_path's first schema to
// SchemaVersion in one transaction.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	if len(migrations) != SchemaVersion {
		return fmt.Errorf("schema: %d migrations for version %d", len(migrations), SchemaVersion)
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLock)); err != nil {
			return fmt.Errorf("schema: lock: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS strata_schema (version INTEGER NOT NULL)`); err != nil {
			return fmt.Errorf("schema: version table: %w", err)
		}
		var v int
		err := tx.QueryRow(ctx, `SELECT version FROM strata_schema`).Scan(&v)
		switch {
		case err == pgx.ErrNoRows:
			if _, err := tx.Exec(ctx, `INSERT INTO strata_schema (version) VALUES (0)`); err != nil {
				return fmt.Errorf("schema: write version: %w", err)
			}
		case err != nil:
			return fmt.Errorf("schema: read version: %w", err)
		}
		if v > SchemaVersion {
			return fmt.Errorf("schema version %d is newer than this strata's %d; upgrade strata", v, SchemaVersion)
		}
		for ; v < SchemaVersion; v++ {
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return fmt.Errorf("schema: migrate %d→%d: %w", v, v+1, err)
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE strata_schema SET version = $1`, SchemaVersion); err != nil {
			return fmt.Errorf("schema: write version: %w", err)
		}
		return nil
	})
}

// migrate0to1 creates the schema. Times are Unix milliseconds, token counts
// tokens; ord columns keep insertion order (SQLite's rowid).
const migrate0to1 = `
CREATE TABLE sessions (
	id         TEXT PRIMARY KEY,
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL,
	title      TEXT NOT NULL DEFAULT '',
	cwd        TEXT NOT NULL DEFAULT '',
	agent_file TEXT NOT NULL DEFAULT '',
	provider   TEXT NOT NULL DEFAULT '',
	model      TEXT NOT NULL DEFAULT '',
	layout     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX sessions_updated ON sessions(updated_at);

CREATE TABLE loops (
	id                 TEXT PRIMARY KEY,
	ord                BIGSERIAL,
	session_id         TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	parent_loop_id     TEXT REFERENCES loops(id) ON DELETE SET NULL,
	previous_loop_id   TEXT REFERENCES loops(id) ON DELETE SET NULL,
	branched_from_loop TEXT REFERENCES loops(id) ON DELETE SET NULL,
	branched_from_turn INTEGER,
	trigger            TEXT NOT NULL,
	created_at         BIGINT NOT NULL
);
CREATE INDEX loops_session ON loops(session_id, created_at);

CREATE TABLE turns (
	loop_id               TEXT NOT NULL REFERENCES loops(id) ON DELETE CASCADE,
	turn_index            INTEGER NOT NULL,
	triggered_by          TEXT NOT NULL,
	correlation_id        TEXT NOT NULL DEFAULT '',
	status                TEXT NOT NULL CHECK (status IN ('in_progress', 'completed', 'failed')),
	stop_reason           TEXT NOT NULL DEFAULT '',
	error                 TEXT NOT NULL DEFAULT '',
	input_tokens          BIGINT NOT NULL DEFAULT 0,
	output_tokens         BIGINT NOT NULL DEFAULT 0,
	reasoning_tokens      BIGINT NOT NULL DEFAULT 0,
	cache_read_tokens     BIGINT NOT NULL DEFAULT 0,
	cache_write_tokens    BIGINT NOT NULL DEFAULT 0,
	cache_write_1h_tokens BIGINT NOT NULL DEFAULT 0,
	total_tokens          BIGINT NOT NULL DEFAULT 0,
	started_at            BIGINT NOT NULL,
	ended_at              BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (loop_id, turn_index)
);

CREATE TABLE messages (
	loop_id    TEXT NOT NULL REFERENCES loops(id) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,
	part       INTEGER NOT NULL,
	turn_index INTEGER NOT NULL,
	role       TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
	kind       TEXT NOT NULL CHECK (kind IN ('input', 'output', 'tool_results')),
	content    TEXT NOT NULL,
	PRIMARY KEY (loop_id, seq, part)
);
CREATE INDEX messages_turn ON messages(loop_id, turn_index);

CREATE TABLE leases (
	session_id  TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
	owner       TEXT NOT NULL,
	acquired_at BIGINT NOT NULL,
	expires_at  BIGINT NOT NULL
);

CREATE TABLE pings (
	ord                   BIGSERIAL PRIMARY KEY,
	session_id            TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	at                    BIGINT NOT NULL,
	input_tokens          BIGINT NOT NULL DEFAULT 0,
	output_tokens         BIGINT NOT NULL DEFAULT 0,
	reasoning_tokens      BIGINT NOT NULL DEFAULT 0,
	cache_read_tokens     BIGINT NOT NULL DEFAULT 0,
	cache_write_tokens    BIGINT NOT NULL DEFAULT 0,
	cache_write_1h_tokens BIGINT NOT NULL DEFAULT 0,
	total_tokens          BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX pings_session ON pings(session_id, at);

CREATE TABLE tldrs (
	session_id    TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	source_sha256 TEXT NOT NULL,
	tldr          TEXT NOT NULL,
	created_at    BIGINT NOT NULL,
	PRIMARY KEY (session_id, source_sha256)
);
`

// migrate1to2 adds the content-addressed payloads (session.Payloads): one
// row per payload keyed by its SHA-256 in lowercase hex (size is
// length(data) in bytes, created_at Unix milliseconds), and one row per
// session referencing it (payload_refs, deleted with the session); a
// trigger deletes a payload once its last reference is deleted. A payload
// stored for no known session has no reference and stays.
const migrate1to2 = `
CREATE TABLE payloads (
	sha256     TEXT PRIMARY KEY,
	data       BYTEA NOT NULL,
	size       BIGINT NOT NULL,
	created_at BIGINT NOT NULL
);
CREATE TABLE payload_refs (
	session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	sha256     TEXT NOT NULL REFERENCES payloads(sha256) ON DELETE CASCADE,
	PRIMARY KEY (session_id, sha256)
);
CREATE INDEX payload_refs_sha256 ON payload_refs(sha256);
CREATE FUNCTION strata_payloads_unreferenced() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM payloads p WHERE p.sha256 = OLD.sha256
		AND NOT EXISTS (SELECT 1 FROM payload_refs r WHERE r.sha256 = OLD.sha256);
	RETURN NULL;
END $$;
CREATE TRIGGER payloads_unreferenced AFTER DELETE ON payload_refs
	FOR EACH ROW EXECUTE FUNCTION strata_payloads_unreferenced();
`
