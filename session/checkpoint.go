package session

import (
	"context"
	"database/sql"
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
	return m.saveBlob(ctx, checkpointBlobs, loopID, state, func() bool { _, ok := m.loops[loopID]; return ok })
}

// Checkpoint implements Checkpoints.
func (m *Memory) Checkpoint(ctx context.Context, loopID string) ([]byte, error) {
	return m.blob(ctx, checkpointBlobs, loopID)
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
	return s.saveBlob(ctx, checkpointBlobs, loopID, state)
}

// Checkpoint implements Checkpoints.
func (s *SQLite) Checkpoint(ctx context.Context, loopID string) ([]byte, error) {
	return s.blob(ctx, checkpointBlobs, loopID)
}
