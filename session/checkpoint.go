package session

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Checkpoints is an optional Store interface: a loop's checkpoint, the
// loop engine's state without its history (agent.Agent.Checkpoint, JSON),
// kept so a resumed loop restores its layout and compaction state in one
// step instead of replaying the layout over every stored request
// (docs/architecture.md, "restore"). A checkpoint is only an optimisation:
// the restore checks it against the stored history and replays when it
// does not fit, so a store without it, or a missing or stale checkpoint,
// loses nothing.
type Checkpoints interface {
	// SaveCheckpoint stores state as loop loopID's checkpoint, replacing
	// the one before. It fails with ErrNotFound when the loop is unknown.
	SaveCheckpoint(ctx context.Context, loopID string, state []byte) error
	// Checkpoint returns loop loopID's checkpoint, or an error wrapping
	// ErrNotFound when none is stored.
	Checkpoint(ctx context.Context, loopID string) ([]byte, error)
}

// SaveCheckpoint implements Checkpoints.
func (m *Memory) SaveCheckpoint(ctx context.Context, loopID string, state []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.ready(ctx); err != nil {
		return fmt.Errorf("save checkpoint of loop %s: %w", loopID, err)
	}
	if _, ok := m.loops[loopID]; !ok {
		return fmt.Errorf("save checkpoint: loop %s: %w", loopID, ErrNotFound)
	}
	if m.checkpoints == nil {
		m.checkpoints = map[string][]byte{}
	}
	m.checkpoints[loopID] = slices.Clone(state)
	return nil
}

// Checkpoint implements Checkpoints.
func (m *Memory) Checkpoint(ctx context.Context, loopID string) ([]byte, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if err := m.ready(ctx); err != nil {
		return nil, fmt.Errorf("checkpoint of loop %s: %w", loopID, err)
	}
	b, ok := m.checkpoints[loopID]
	if !ok {
		return nil, fmt.Errorf("checkpoint of loop %s: %w", loopID, ErrNotFound)
	}
	return slices.Clone(b), nil
}

// migrate4to5 adds the checkpoints table (Checkpoints): one row per loop,
// its engine state as JSON; updated_at is Unix milliseconds. Loops stored
// before have no row and are restored by replaying the layout, as before.
func migrate4to5(ctx context.Context, tx *sql.Tx) error {
	const ddl = `
CREATE TABLE checkpoints (
	loop_id    TEXT PRIMARY KEY REFERENCES loops(id) ON DELETE CASCADE,
	state      BLOB NOT NULL,
	updated_at INTEGER NOT NULL
);
`
	_, err := tx.ExecContext(ctx, ddl)
	return err
}

// SaveCheckpoint implements Checkpoints.
func (s *SQLite) SaveCheckpoint(ctx context.Context, loopID string, state []byte) error {
	res, err := s.db.ExecContext(ctx, `INSERT INTO checkpoints (loop_id, state, updated_at)
SELECT id, ?2, ?3 FROM loops WHERE id = ?1
ON CONFLICT (loop_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`, loopID, state, ms(time.Now()))
	if err != nil {
		return fmt.Errorf("save checkpoint of loop %s: %w", loopID, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("save checkpoint: loop %s: %w", loopID, ErrNotFound)
	}
	return nil
}

// Checkpoint implements Checkpoints.
func (s *SQLite) Checkpoint(ctx context.Context, loopID string) ([]byte, error) {
	var b []byte
	err := s.db.QueryRowContext(ctx, "SELECT state FROM checkpoints WHERE loop_id = ?", loopID).Scan(&b)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("checkpoint of loop %s: %w", loopID, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("checkpoint of loop %s: %w", loopID, err)
	}
	return b, nil
}
