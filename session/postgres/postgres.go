// Package postgres is a session.Store in PostgreSQL (pgx v5): sessions
// shared by every process that reaches one database — fleets, hosted setups
// — with the same answers as the SQLite store (the session/storetest
// contract proves it; docs/sessions.md, "PostgreSQL").
//
// Open it with a DSN (postgres://user:pass@host:port/db?search_path=schema);
// the CLI does so for `--store postgres://…`, STRATA_STORE or the config
// file's store key. Open migrates the schema to SchemaVersion, one process
// at a time (an advisory lock), in the DSN's search_path schema.
//
// Times are Unix milliseconds (BIGINT), message contents the same JSON text
// the SQLite store keeps. The writer lease (Store.Acquire) is a row of the
// leases table, taken under a row lock on its session, with expiry read
// from this process's clock: hosts sharing a database must keep their
// clocks in sync (NTP) to within a small part of session.LeaseTTL.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/strata-agent/strata/session"
)

var _ session.Store = (*Store)(nil)

// Store is a session.Store in a PostgreSQL database, safe for concurrent use
// by several goroutines and several processes. Open it with Open.
type Store struct {
	pool  *pgxpool.Pool
	where string           // host/db for errors, without the password
	clock func() time.Time // leases' clock; nil = time.Now
}

// IsDSN reports whether store names a PostgreSQL database (a postgres:// or
// postgresql:// URL) rather than a SQLite file path.
func IsDSN(store string) bool {
	return strings.HasPrefix(store, "postgres://") || strings.HasPrefix(store, "postgresql://")
}

// Open connects to the database dsn names (a postgres:// URL or a libpq
// key=value string; pgx's syntax) and migrates its schema to SchemaVersion.
// It fails, naming the host and database, when the DSN does not parse, the
// server cannot be reached, or the schema is newer than this package's.
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres store: parse DSN: %w (want postgres://user:password@host:port/database)", err)
	}
	where := fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres store %s: %w", where, err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres store %s: %w", where, err)
	}
	return &Store{pool: pool, where: where}, nil
}

// SetClock makes the leases read the time from now (nil: time.Now); for
// tests.
func (s *Store) SetClock(now func() time.Time) { s.clock = now }

func (s *Store) now() time.Time {
	if s.clock != nil {
		return s.clock()
	}
	return time.Now()
}

// Close closes the connection pool; every method fails afterwards.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// q is what a pool and a transaction have in common.
type q interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// readTx runs f in a read-only repeatable-read transaction: one snapshot.
func (s *Store) readTx(ctx context.Context, f func(tx pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, f)
}

// writeTx runs f in a read-committed transaction, committed when f returns
// nil and rolled back otherwise.
func (s *Store) writeTx(ctx context.Context, f func(tx pgx.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{}, f)
}

// resolve returns the full id in table (sessions or loops) equal to id or,
// failing that, having it as its unique prefix.
func resolve(ctx context.Context, db q, table, what, id string) (string, error) {
	if id == "" {
		return "", fmt.Errorf("%s id is empty: %w", what, session.ErrNotFound)
	}
	rows, err := db.Query(ctx, `SELECT id FROM `+table+` WHERE id = $1
		UNION ALL (SELECT id FROM `+table+` WHERE starts_with(id, $1) AND id <> $1 AND NOT EXISTS (SELECT 1 FROM `+table+` WHERE id = $1) ORDER BY id LIMIT 2)`, id)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", what, id, err)
	}
	found, err := collect(rows, pgx.RowTo[string])
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", what, id, err)
	}
	return session.ResolvePrefix(what, id, found)
}

// ms converts t to Unix milliseconds; the zero time is 0.
func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fromMS converts Unix milliseconds to a UTC time; 0 is the zero time.
func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

// text makes s storable in a TEXT column, which holds neither NUL nor
// invalid UTF-8 (both replaced by U+FFFD, as encoding/json does with the
// latter in message contents).
func text(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// notFound maps pgx.ErrNoRows to session.ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return session.ErrNotFound
	}
	return err
}

// collect reads every row with f, as the SQLite store does: nil when there
// is none.
func collect[T any](rows pgx.Rows, f pgx.RowToFunc[T]) ([]T, error) {
	out, err := pgx.CollectRows(rows, f)
	if len(out) == 0 {
		out = nil
	}
	return out, err
}
