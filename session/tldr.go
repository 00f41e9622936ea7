package session

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"maps"
	"time"
)

// Stored tl;drs (Store.SaveTLDR, Store.TLDRs): the model-written tl;dr of
// each long message text of a detached history chunk (--compact-tldr,
// compact.Summarizer; docs/panels.md, "tl;dr") is kept with its session, so
// a resumed loop replaying its compaction shows the same text without
// asking the model again (which would cost a request per text and could
// write another text, changing a chunk the cached prefix holds).

// TLDRKey returns the key a tl;dr is stored under: the hex SHA-256 of the
// message text it summarizes (64 lowercase hex digits).
func TLDRKey(source string) string {
	sum := sha256.Sum256([]byte(source))
	return hex.EncodeToString(sum[:])
}

// checkTLDR checks SaveTLDR's arguments.
func checkTLDR(sessionID, key string) error {
	if sessionID == "" || key == "" {
		return fmt.Errorf("session: save tl;dr: session id %q and key %q must not be empty", sessionID, key)
	}
	return nil
}

// SaveTLDR implements Store.
func (m *Memory) SaveTLDR(ctx context.Context, sessionID, key, text string) error {
	if err := checkTLDR(sessionID, key); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.ready(ctx); err != nil {
		return fmt.Errorf("save tl;dr in session %s: %w", sessionID, err)
	}
	if _, ok := m.sessions[sessionID]; !ok {
		return fmt.Errorf("save tl;dr: session %s: %w", sessionID, ErrNotFound)
	}
	if m.tldrs[sessionID] == nil {
		m.tldrs[sessionID] = map[string]string{}
	}
	if _, ok := m.tldrs[sessionID][key]; !ok {
		m.tldrs[sessionID][key] = text
	}
	return nil
}

// TLDRs implements Store.
func (m *Memory) TLDRs(ctx context.Context, sessionID string) (map[string]string, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if err := m.ready(ctx); err != nil {
		return nil, fmt.Errorf("tl;drs of session %s: %w", sessionID, err)
	}
	if _, ok := m.sessions[sessionID]; !ok {
		return nil, fmt.Errorf("tl;drs: session %s: %w", sessionID, ErrNotFound)
	}
	out := maps.Clone(m.tldrs[sessionID])
	if out == nil {
		out = map[string]string{}
	}
	return out, nil
}

// SaveTLDR implements Store: a row of the tldrs table (schema version 4);
// a key already stored keeps its row.
func (s *SQLite) SaveTLDR(ctx context.Context, sessionID, key, text string) error {
	if err := checkTLDR(sessionID, key); err != nil {
		return err
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO tldrs (session_id, source_sha256, tldr, created_at)
SELECT id, ?2, ?3, ?4 FROM sessions WHERE id = ?1
ON CONFLICT (session_id, source_sha256) DO NOTHING`, sessionID, key, text, ms(time.Now()))
	if err != nil {
		return fmt.Errorf("save tl;dr in session %s: %w", sessionID, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		var found int
		if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM sessions WHERE id = ?", sessionID).Scan(&found); err != nil {
			return fmt.Errorf("save tl;dr in session %s: %w", sessionID, err)
		}
		if found == 0 {
			return fmt.Errorf("save tl;dr: session %s: %w", sessionID, ErrNotFound)
		}
	}
	return nil
}

// TLDRs implements Store.
func (s *SQLite) TLDRs(ctx context.Context, sessionID string) (map[string]string, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("tl;drs of session %s: %w", sessionID, err)
	}
	defer tx.Rollback()
	var found int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sessions WHERE id = ?", sessionID).Scan(&found); err != nil {
		return nil, fmt.Errorf("tl;drs of session %s: %w", sessionID, err)
	}
	if found == 0 {
		return nil, fmt.Errorf("tl;drs: session %s: %w", sessionID, ErrNotFound)
	}
	rows, err := tx.QueryContext(ctx, "SELECT source_sha256, tldr FROM tldrs WHERE session_id = ?", sessionID)
	if err != nil {
		return nil, fmt.Errorf("tl;drs of session %s: %w", sessionID, err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("tl;drs of session %s: %w", sessionID, err)
		}
		out[k] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("tl;drs of session %s: %w", sessionID, err)
	}
	return out, nil
}
