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
// payload is referenced by the sessions that stored it: deleting a
// session's row (SQLite, PostgreSQL: nothing in strata deletes sessions)
// deletes its references, and a payload no session references any more
// with them; a payload stored for no known session stays until deleted by
// hand (docs/sessions.md, "Payloads").
type Payloads interface {
	// PutPayload stores data under key, its SHA-256 in lowercase hex, for
	// session sessionID (a full id). A key already stored keeps its bytes
	// (the same, by their hash) and gains the session's reference. An
	// empty or unknown sessionID stores the payload without a reference (a
	// workflow's payload before its session is created). A key that is not
	// data's SHA-256 is an error naming both, and nothing is stored.
	PutPayload(ctx context.Context, sessionID, key string, data []byte) error
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

// PutPayload implements Payloads. (A Memory store deletes no session, so
// it keeps no references.)
func (m *Memory) PutPayload(ctx context.Context, sessionID, key string, data []byte) error {
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
// payload, keyed by its SHA-256 in lowercase hex (size is len(data) in
// bytes, created_at Unix milliseconds), and one row per session referencing
// it (payload_refs, deleted with the session); a trigger deletes a payload
// once its last reference is deleted. A payload stored for no known
// session has no reference and stays.
func migrate6to7(ctx context.Context, tx *sql.Tx) error {
	const ddl = `
CREATE TABLE payloads (
	sha256     TEXT PRIMARY KEY,
	data       BLOB NOT NULL,
	size       INTEGER NOT NULL,
	created_at INTEGER NOT NULL
);
CREATE TABLE payload_refs (
	session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	sha256     TEXT NOT NULL REFERENCES payloads(sha256) ON DELETE CASCADE,
	PRIMARY KEY (session_id, sha256)
);
CREATE INDEX payload_refs_sha256 ON payload_refs(sha256);
CREATE TRIGGER payloads_unreferenced AFTER DELETE ON payload_refs
WHEN NOT EXISTS (SELECT 1 FROM payload_refs WHERE sha256 = old.sha256)
BEGIN
	DELETE FROM payloads WHERE sha256 = old.sha256;
END;
`
	_, err := tx.ExecContext(ctx, ddl)
	return err
}

// PutPayload implements Payloads: the payload and the session's reference
// in one transaction.
func (s *SQLite) PutPayload(ctx context.Context, sessionID, key string, data []byte) error {
	if err := CheckPayload(key, data); err != nil {
		return err
	}
	if data == nil {
		data = []byte{}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("session: put payload %s: %w", key, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO payloads (sha256, data, size, created_at) VALUES (?, ?, ?, ?)
ON CONFLICT (sha256) DO NOTHING`, key, data, len(data), ms(time.Now())); err != nil {
		return fmt.Errorf("session: put payload %s: %w", key, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO payload_refs (session_id, sha256) SELECT id, ? FROM sessions WHERE id = ?
ON CONFLICT DO NOTHING`, key, sessionID); err != nil {
		return fmt.Errorf("session: put payload %s for session %s: %w", key, sessionID, err)
	}
	if err := tx.Commit(); err != nil {
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
