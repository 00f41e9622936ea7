package session

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Payloads is the optional interface of stores that keep content-addressed
// payloads: what a durable session's claim-check codec moves out of
// Temporal's history when it is over the threshold (docs/durable.md,
// "Claim check"). Workers that share the store share the payloads. A
// payload is not owned by a session: nothing deletes it (docs/sessions.md,
// "Payloads").
type Payloads interface {
	// PutPayload stores data under key, its SHA-256 in lowercase hex. A
	// key already stored keeps its row (the same bytes, by its hash). A key
	// that is not data's SHA-256 is an error naming both, and nothing is
	// stored.
	PutPayload(ctx context.Context, key string, data []byte) error
	// Payload returns the bytes stored under key, or an error wrapping
	// ErrNotFound naming the key.
	Payload(ctx context.Context, key string) ([]byte, error)
}

var (
	_ Payloads = (*Memory)(nil)
	_ Payloads = (*SQLite)(nil)
)

// PayloadKey returns the key Payloads stores data under: its SHA-256 in
// lowercase hex.
func PayloadKey(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// CheckPayload returns the error PutPayload gives when key is not data's
// SHA-256 (shared by every implementation).
func CheckPayload(key string, data []byte) error {
	if got := PayloadKey(data); got != key {
		return fmt.Errorf("session: put payload %q: the %d bytes have SHA-256 %s; the key must be the data's SHA-256 (lowercase hex)", key, len(data), got)
	}
	return nil
}

// PutPayload implements Payloads.
func (m *Memory) PutPayload(ctx context.Context, key string, data []byte) error {
	if err := CheckPayload(key, data); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.ready(ctx); err != nil {
		return fmt.Errorf("session: put payload %s: %w", key, err)
	}
	if m.payloads == nil {
		m.payloads = map[string][]byte{}
	}
	if _, ok := m.payloads[key]; !ok {
		m.payloads[key] = slices.Clone(data)
	}
	return nil
}

// Payload implements Payloads.
func (m *Memory) Payload(ctx context.Context, key string) ([]byte, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if err := m.ready(ctx); err != nil {
		return nil, fmt.Errorf("session: payload %s: %w", key, err)
	}
	b, ok := m.payloads[key]
	if !ok {
		return nil, fmt.Errorf("session: payload %s: %w", key, ErrNotFound)
	}
	return slices.Clone(b), nil
}

// migrate6to7 adds the content-addressed payloads (Payloads): one row per
// payload, keyed by its SHA-256 in lowercase hex; size is len(data) in
// bytes, created_at Unix milliseconds. No foreign key: a payload belongs to
// no one session (a fork's requests share its parent's).
func migrate6to7(ctx context.Context, tx *sql.Tx) error {
	const ddl = `
CREATE TABLE payloads (
	sha256     TEXT PRIMARY KEY,
	data       BLOB NOT NULL,
	size       INTEGER NOT NULL,
	created_at INTEGER NOT NULL
);
`
	_, err := tx.ExecContext(ctx, ddl)
	return err
}

// PutPayload implements Payloads.
func (s *SQLite) PutPayload(ctx context.Context, key string, data []byte) error {
	if err := CheckPayload(key, data); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO payloads (sha256, data, size, created_at) VALUES (?, ?, ?, ?)
ON CONFLICT (sha256) DO NOTHING`, key, data, len(data), ms(time.Now()))
	if err != nil {
		return fmt.Errorf("session: put payload %s: %w", key, err)
	}
	return nil
}

// Payload implements Payloads.
func (s *SQLite) Payload(ctx context.Context, key string) ([]byte, error) {
	var b []byte
	err := s.db.QueryRowContext(ctx, "SELECT data FROM payloads WHERE sha256 = ?", key).Scan(&b)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("session: payload %s: %w", key, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("session: payload %s: %w", key, err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}
