package session

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"
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
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.ready(ctx); err != nil {
		return fmt.Errorf("save workflow state of session %s: %w", sessionID, err)
	}
	if _, ok := m.sessions[sessionID]; !ok {
		return fmt.Errorf("save workflow state: session %s: %w", sessionID, ErrNotFound)
	}
	if m.workflows == nil {
		m.workflows = map[string][]byte{}
	}
	m.workflows[sessionID] = slices.Clone(state)
	return nil
}

// WorkflowState implements WorkflowStates.
func (m *Memory) WorkflowState(ctx context.Context, sessionID string) ([]byte, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if err := m.ready(ctx); err != nil {
		return nil, fmt.Errorf("workflow state of session %s: %w", sessionID, err)
	}
	b, ok := m.workflows[sessionID]
	if !ok {
		return nil, fmt.Errorf("workflow state of session %s: %w", sessionID, ErrNotFound)
	}
	return slices.Clone(b), nil
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
	res, err := s.db.ExecContext(ctx, `INSERT INTO workflow_states (session_id, state, updated_at)
SELECT id, ?2, ?3 FROM sessions WHERE id = ?1
ON CONFLICT (session_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`, sessionID, state, ms(time.Now()))
	if err != nil {
		return fmt.Errorf("save workflow state of session %s: %w", sessionID, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("save workflow state: session %s: %w", sessionID, ErrNotFound)
	}
	return nil
}

// WorkflowState implements WorkflowStates.
func (s *SQLite) WorkflowState(ctx context.Context, sessionID string) ([]byte, error) {
	var b []byte
	err := s.db.QueryRowContext(ctx, "SELECT state FROM workflow_states WHERE session_id = ?", sessionID).Scan(&b)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("workflow state of session %s: %w", sessionID, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("workflow state of session %s: %w", sessionID, err)
	}
	return b, nil
}
