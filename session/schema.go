package session

import (
	"context"
	"database/sql"
	"fmt"
)

// SchemaVersion is the schema version this package reads and writes, kept in
// the database's PRAGMA user_version. Open migrates older files up to it and
// refuses newer ones.
const SchemaVersion = 7

// migrations[v] migrates a database at version v to version v+1, inside the
// transaction Open holds. Append to it (never edit a released step) and bump
// SchemaVersion.
var migrations = []func(ctx context.Context, tx *sql.Tx) error{
	migrate0to1,
	migrate1to2,
	migrate2to3,
	migrate3to4,
	migrate4to5,
	migrate5to6,
	migrate6to7,
}

// migrate brings db to SchemaVersion in one immediate transaction, so that two
// processes opening a fresh file at once cannot both create the tables.
func migrate(ctx context.Context, db *sql.DB) error {
	if len(migrations) != SchemaVersion {
		return fmt.Errorf("schema: %d migrations for version %d", len(migrations), SchemaVersion)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("schema: begin: %w", err)
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("schema: read version: %w", err)
	}
	if v > SchemaVersion {
		return fmt.Errorf("schema version %d is newer than this strata's %d; upgrade strata", v, SchemaVersion)
	}
	if v < 0 {
		return fmt.Errorf("schema version %d is invalid", v)
	}
	if v == SchemaVersion {
		return nil
	}
	for ; v < SchemaVersion; v++ {
		if err := migrations[v](ctx, tx); err != nil {
			return fmt.Errorf("schema: migrate %d→%d: %w", v, v+1, err)
		}
	}
	// PRAGMA takes no bound parameters; SchemaVersion is a constant.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)); err != nil {
		return fmt.Errorf("schema: write version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("schema: commit: %w", err)
	}
	return nil
}

// migrate0to1 creates the first schema. Times are Unix milliseconds, token
// counts are tokens.
func migrate0to1(ctx context.Context, tx *sql.Tx) error {
	const ddl = `
CREATE TABLE sessions (
	id         TEXT PRIMARY KEY,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
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
	session_id         TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	parent_loop_id     TEXT REFERENCES loops(id) ON DELETE SET NULL,
	branched_from_loop TEXT REFERENCES loops(id) ON DELETE SET NULL,
	branched_from_turn INTEGER,
	trigger            TEXT NOT NULL,
	created_at         INTEGER NOT NULL
);
CREATE INDEX loops_session ON loops(session_id, created_at);

CREATE TABLE turns (
	loop_id            TEXT NOT NULL REFERENCES loops(id) ON DELETE CASCADE,
	turn_index         INTEGER NOT NULL,
	triggered_by       TEXT NOT NULL,
	correlation_id     TEXT NOT NULL DEFAULT '',
	status             TEXT NOT NULL CHECK (status IN ('in_progress', 'completed', 'failed')),
	stop_reason        TEXT NOT NULL DEFAULT '',
	error              TEXT NOT NULL DEFAULT '',
	input_tokens       INTEGER NOT NULL DEFAULT 0,
	output_tokens      INTEGER NOT NULL DEFAULT 0,
	reasoning_tokens   INTEGER NOT NULL DEFAULT 0,
	cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
	cache_write_tokens INTEGER NOT NULL DEFAULT 0,
	total_tokens       INTEGER NOT NULL DEFAULT 0,
	started_at         INTEGER NOT NULL,
	ended_at           INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (loop_id, turn_index)
);

-- One row per part of a history message. seq is the message's position in the
-- loop's history; a user message the loop merged (tool results followed by the
-- next prompt) has one part per turn that contributed to it, in part order.
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
`
	if _, err := tx.ExecContext(ctx, ddl); err != nil {
		return err
	}
	return nil
}

// migrate1to2 adds the writer leases (Store.Acquire): one row per leased
// session, owner the holder's id, expires_at Unix milliseconds after which
// another owner may take it.
func migrate1to2(ctx context.Context, tx *sql.Tx) error {
	const ddl = `
CREATE TABLE leases (
	session_id  TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
	owner       TEXT NOT NULL,
	acquired_at INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL
);
`
	_, err := tx.ExecContext(ctx, ddl)
	return err
}

// migrate2to3 chains loops: a loop per user prompt (docs/turn.md, rule 2),
// each continuing the loop of the conversation's previous prompt, or the
// loop a branch was taken from (Loop.PreviousLoopID). Loops stored before
// keep a NULL previous_loop_id: their history is all their own, as version
// 2 stored it (one loop per session; a branch holding a copy of its
// history), so nothing is rewritten and nothing is lost.
func migrate2to3(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `ALTER TABLE loops ADD COLUMN previous_loop_id TEXT REFERENCES loops(id) ON DELETE SET NULL`)
	return err
}

// migrate3to4 adds the keep-alive pings (Writer.AddPing, docs/keepalive.md):
// one row per ping, its session, the Unix milliseconds its answer arrived
// and its tokens, in the turns table's usage columns. A ping belongs to the
// session, not to a loop or turn: it is never part of the history. Sessions
// stored before have no row (their pings were never stored), and nothing
// else changes. The same step adds the stored tl;drs (migrateTLDRs) and
// each turn's and ping's cache writes with the 1-hour TTL
// (cache_write_1h_tokens, llm.Usage.CacheWrite1h; 0 for the turns stored
// before, whose split was not kept).
func migrate3to4(ctx context.Context, tx *sql.Tx) error {
	if err := migrateTLDRs(ctx, tx); err != nil {
		return err
	}
	const ddl = `
CREATE TABLE pings (
	session_id         TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	at                 INTEGER NOT NULL,
	input_tokens       INTEGER NOT NULL DEFAULT 0,
	output_tokens      INTEGER NOT NULL DEFAULT 0,
	reasoning_tokens   INTEGER NOT NULL DEFAULT 0,
	cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
	cache_write_tokens INTEGER NOT NULL DEFAULT 0,
	total_tokens       INTEGER NOT NULL DEFAULT 0,
	cache_write_1h_tokens INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX pings_session ON pings(session_id, at);
ALTER TABLE turns ADD COLUMN cache_write_1h_tokens INTEGER NOT NULL DEFAULT 0;
`
	_, err := tx.ExecContext(ctx, ddl)
	return err
}

// migrateTLDRs adds the stored tl;drs (Store.SaveTLDR): one row per message
// text of a session that a detached chunk showed as a model-written tl;dr,
// keyed by the text's SHA-256 (TLDRKey); tldr is empty when the request failed
// and the chunk kept the full text; created_at is Unix milliseconds.
// Nothing else changes: sessions stored before have no row (version 3 kept
// no tl;dr), so their next restore asks the model once more and stores the
// answers. A step of its own, so it can run as part of any version step.
func migrateTLDRs(ctx context.Context, tx *sql.Tx) error {
	const ddl = `
CREATE TABLE tldrs (
	session_id    TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	source_sha256 TEXT NOT NULL,
	tldr          TEXT NOT NULL,
	created_at    INTEGER NOT NULL,
	PRIMARY KEY (session_id, source_sha256)
);
`
	_, err := tx.ExecContext(ctx, ddl)
	return err
}
