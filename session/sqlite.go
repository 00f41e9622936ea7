package session

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// BusyTimeout is how long a connection waits for another writer's lock before
// failing with SQLITE_BUSY.
const BusyTimeout = 10 * time.Second

// SQLite is the default Store: a session database file (pure Go,
// modernc.org/sqlite) in WAL mode with synchronous=FULL, so every committed
// Step survives a crash of the process or the machine. It is safe for
// concurrent use by several goroutines, and several processes may open the
// same file (readers never block the writer nor each other; writers wait up
// to BusyTimeout for each other). Open it with Open.
type SQLite struct {
	db    *sql.DB
	path  string
	clock func() time.Time // leases' clock; nil = time.Now (tests set it)
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
// SchemaVersion (a file written by an older strata is upgraded in place). It
// fails when the file is not a SQLite database, when WAL mode
// cannot be enabled, or when the file's schema is newer than this package.
func Open(path string) (*SQLite, error) {
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
	s := &SQLite{db: db, path: path}
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
func (s *SQLite) Path() string { return s.path }

// Close closes the database; every method fails afterwards. Recorders
// writing to the store must not be used afterwards.
func (s *SQLite) Close() error {
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
	return resolved(what, id, found)
}
