package session

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"
)

// A blob is one JSON document a store keeps per owner (a loop's
// checkpoint, a session's workflow state), replaced by each save: the
// optional Checkpoints and WorkflowStates interfaces share this code.

// blobKind names one kind of blob: its SQLite table, the table's owner
// column and the table that column references, and how errors name it
// ("checkpoint", "loop").
type blobKind struct {
	table, keyCol, ownerTable string
	what, owner               string
}

var (
	checkpointBlobs = blobKind{table: "checkpoints", keyCol: "loop_id", ownerTable: "loops", what: "checkpoint", owner: "loop"}
	workflowBlobs   = blobKind{table: "workflow_states", keyCol: "session_id", ownerTable: "sessions", what: "workflow state", owner: "session"}
)

// saveBlob stores data as key's blob of kind k; exists reports whether the
// owner is known.
func (m *Memory) saveBlob(ctx context.Context, k blobKind, key string, data []byte, exists func() bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.ready(ctx); err != nil {
		return fmt.Errorf("save %s of %s %s: %w", k.what, k.owner, key, err)
	}
	if !exists() {
		return fmt.Errorf("save %s: %s %s: %w", k.what, k.owner, key, ErrNotFound)
	}
	if m.blobs == nil {
		m.blobs = map[blobKind]map[string][]byte{}
	}
	if m.blobs[k] == nil {
		m.blobs[k] = map[string][]byte{}
	}
	m.blobs[k][key] = slices.Clone(data)
	return nil
}

// blob returns key's blob of kind k, ErrNotFound when none is stored.
func (m *Memory) blob(ctx context.Context, k blobKind, key string) ([]byte, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if err := m.ready(ctx); err != nil {
		return nil, fmt.Errorf("%s of %s %s: %w", k.what, k.owner, key, err)
	}
	b, ok := m.blobs[k][key]
	if !ok {
		return nil, fmt.Errorf("%s of %s %s: %w", k.what, k.owner, key, ErrNotFound)
	}
	return slices.Clone(b), nil
}

// saveBlob upserts key's row of k's table (state, updated_at in Unix ms);
// ErrNotFound when the owner row does not exist. Table and column names are
// the constants above, never input.
func (s *SQLite) saveBlob(ctx context.Context, k blobKind, key string, data []byte) error {
	res, err := s.db.ExecContext(ctx, `INSERT INTO `+k.table+` (`+k.keyCol+`, state, updated_at)
SELECT id, ?2, ?3 FROM `+k.ownerTable+` WHERE id = ?1
ON CONFLICT (`+k.keyCol+`) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`, key, data, ms(time.Now()))
	if err != nil {
		return fmt.Errorf("save %s of %s %s: %w", k.what, k.owner, key, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("save %s: %s %s: %w", k.what, k.owner, key, ErrNotFound)
	}
	return nil
}

// blob returns key's blob of kind k, ErrNotFound when none is stored.
func (s *SQLite) blob(ctx context.Context, k blobKind, key string) ([]byte, error) {
	var b []byte
	err := s.db.QueryRowContext(ctx, "SELECT state FROM "+k.table+" WHERE "+k.keyCol+" = ?", key).Scan(&b)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("%s of %s %s: %w", k.what, k.owner, key, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("%s of %s %s: %w", k.what, k.owner, key, err)
	}
	return b, nil
}
