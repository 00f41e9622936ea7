// Package session is strata's crash-safe store of agent sessions: a SQLite
// database (pure Go, modernc.org/sqlite, WAL mode) holding sessions, the loops
// that run in them, each loop's turns (docs/turn.md: turn_id, triggered_by,
// usage, input messages, output message, tool results, started_at, ended_at)
// and the loop's message history, plus a Recorder that materializes those
// records from the agent loop's events (docs/turn.md, "recorder").
//
// The Recorder writes one transaction per completed step of a turn (model
// call, each tool result, turn end), so a process killed mid-turn loses at most
// the step it was in. History returns a loop's messages exactly as
// agent.Agent.History() holds them, for resume; Pending lists the tool calls a
// crash left without results.
//
// Times are stored as Unix milliseconds (UTC) and returned as time.Time; token
// counts are tokens. Every argument naming an existing session or loop may be a
// unique prefix of its id (like git); an unknown id returns an error wrapping
// ErrNotFound, an ambiguous prefix one wrapping ErrAmbiguous.
package session

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// ErrNotFound is wrapped by errors about a session, loop or turn id that is not
// in the store.
var ErrNotFound = errors.New("not found")

// ErrAmbiguous is wrapped by errors about an id prefix that matches more than
// one session or loop.
var ErrAmbiguous = errors.New("ambiguous id prefix")

// BusyTimeout is how long a connection waits for another writer's lock before
// failing with SQLITE_BUSY.
const BusyTimeout = 10 * time.Second

// Store is an open session database. It is safe for concurrent use by several
// goroutines; several processes may open the same file (SQLite WAL: readers
// never block the writer nor each other).
type Store struct {
	db   *sql.DB
	path string
}

// DefaultPath returns where strata keeps its session database:
// $STRATA_DATA_DIR/strata.db, else $XDG_DATA_HOME/strata/strata.db, else
// ~/.local/share/strata/strata.db. It fails only when none of those variables
// is set and the home directory is unknown.
func DefaultPath() (string, error) {
	if d := os.Getenv("STRATA_DATA_DIR"); d != "" {
		return filepath.Join(d, "strata.db"), nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "strata", "strata.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("session: default database path: %w", err)
	}
	return filepath.Join(home, ".local", "share", "strata", "strata.db"), nil
}

// Open opens (creating it and its directory when missing) the session database
// at path, turns on WAL mode, foreign keys, synchronous=FULL and a busy timeout
// of BusyTimeout on every connection, and migrates the schema to
// SchemaVersion. It fails when the file is not a SQLite database, when WAL mode
// cannot be enabled, or when the file's schema is newer than this package.
func Open(path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("session: open: empty database path")
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("session: open %s: path must not contain '?' or '#'", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("session: open %s: %w", path, err)
	}
	dsn := "file:" + path + "?_txlock=immediate" +
		fmt.Sprintf("&_pragma=busy_timeout(%d)", BusyTimeout.Milliseconds()) +
		"&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("session: open %s: %w", path, err)
	}
	s := &Store{db: db, path: path}
	ctx := context.Background()
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		db.Close()
		return nil, fmt.Errorf("session: open %s: %w", path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		db.Close()
		return nil, fmt.Errorf("session: open %s: journal_mode is %q, want wal", path, mode)
	}
	if err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("session: open %s: %w", path, err)
	}
	return s, nil
}

// Path returns the database file the store was opened on.
func (s *Store) Path() string { return s.path }

// Close closes the database. Recorders writing to the store must not be used
// afterwards.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("session: close %s: %w", s.path, err)
	}
	return nil
}

// queryer is what *sql.DB and *sql.Tx have in common.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// resolve returns the full id in table (sessions or loops) that equals id or,
// failing that, has it as its unique prefix.
func resolve(ctx context.Context, q queryer, table, what, id string) (string, error) {
	if id == "" {
		return "", fmt.Errorf("%s id is empty: %w", what, ErrNotFound)
	}
	var full string
	err := q.QueryRowContext(ctx, "SELECT id FROM "+table+" WHERE id = ?", id).Scan(&full)
	if err == nil {
		return full, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("%s %s: %w", what, id, err)
	}
	rows, err := q.QueryContext(ctx, "SELECT id FROM "+table+" WHERE substr(id, 1, length(?1)) = ?1 ORDER BY id LIMIT 2", id)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", what, id, err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return "", fmt.Errorf("%s %s: %w", what, id, err)
		}
		found = append(found, s)
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("%s %s: %w", what, id, err)
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%s %s: %w", what, id, ErrNotFound)
	case 1:
		return found[0], nil
	default:
		return "", fmt.Errorf("%s %s matches %s, %s, …: %w", what, id, found[0], found[1], ErrAmbiguous)
	}
}

// newID returns a random 16-hex-digit id (the shape of agent.NewID).
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ms converts t to Unix milliseconds; the zero time is stored as 0.
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
