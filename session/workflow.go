package session

import (
	"context"
	"database/sql"
)

// WorkflowStates is an optional Store interface: the durable state of the
// workflow a session runs (package workflow: its progress and the state
// slots its stages' Exit wrote, JSON), so a workflow killed mid-stage
// resumes from its last completed stage (docs/workflows.md, "resume").
// One state per session; a save replaces the one before.
type WorkflowStates interface {
	// SaveWorkflowState stores state as session sessionID's workflow
	// state. It fails with ErrNotFound when the session is unknown.
	SaveWorkflowState(ctx context.Context, sessionID string, state []byte) error
	// WorkflowState returns session sessionID's workflow state, or an
	// error wrapping ErrNotFound when none is stored.
	WorkflowState(ctx context.Context, sessionID string) ([]byte, error)
}

var (
	_ WorkflowStates = (*Memory)(nil)
	_ WorkflowStates = (*SQLite)(nil)
)

// SaveWorkflowState implements WorkflowStates.
func (m *Memory) SaveWorkflowState(ctx context.Context, sessionID string, state []byte) error {
	return m.saveBlob(ctx, workflowBlobs, sessionID, state, func() bool { _, ok := m.sessions[sessionID]; return ok })
}

// WorkflowState implements WorkflowStates.
func (m *Memory) WorkflowState(ctx context.Context, sessionID string) ([]byte, error) {
	return m.blob(ctx, workflowBlobs, sessionID)
}

// migrate5to6 adds the workflow states table (WorkflowStates): one row per
// session running a workflow, its state as JSON; updated_at is Unix
// milliseconds.
func migrate5to6(ctx context.Context, tx *sql.Tx) error {
	const ddl = `
CREATE TABLE workflow_states (
	session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
	state      BLOB NOT NULL,
	updated_at INTEGER NOT NULL
);
`
	_, err := tx.ExecContext(ctx, ddl)
	return err
}

// SaveWorkflowState implements WorkflowStates.
func (s *SQLite) SaveWorkflowState(ctx context.Context, sessionID string, state []byte) error {
	return s.saveBlob(ctx, workflowBlobs, sessionID, state)
}

// WorkflowState implements WorkflowStates.
func (s *SQLite) WorkflowState(ctx context.Context, sessionID string) ([]byte, error) {
	return s.blob(ctx, workflowBlobs, sessionID)
}
