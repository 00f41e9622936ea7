package session_test

import (
	"errors"
	"testing"

	"github.com/strata-agent/strata/session"
)

// Both stores keep one workflow state per session (WorkflowStates): the
// latest saved replaces the one before; an unknown session or one without
// a state is ErrNotFound; a version-3 file migrated to the current version
// has the table.
func TestWorkflowStates(t *testing.T) {
	sq, _ := openTemp(t)
	for name, st := range map[string]interface {
		session.Store
		session.WorkflowStates
	}{"memory": session.NewMemory(), "sqlite": sq, "sqlite migrated from version 3": migrateDump(t, "schema3.sql", 3)} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			if err := st.SaveWorkflowState(ctx, "no-such-session", []byte(`{}`)); !errors.Is(err, session.ErrNotFound) {
				t.Errorf("state of an unknown session saved: %v; want ErrNotFound", err)
			}
			sess, err := st.CreateSession(ctx, session.SessionMeta{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.WorkflowState(ctx, sess.ID); !errors.Is(err, session.ErrNotFound) {
				t.Errorf("state of a session that has none: %v; want ErrNotFound", err)
			}
			for _, state := range []string{`{"next":"plan"}`, `{"next":"test"}`} {
				if err := st.SaveWorkflowState(ctx, sess.ID, []byte(state)); err != nil {
					t.Fatal(err)
				}
			}
			if got, err := st.WorkflowState(ctx, sess.ID); err != nil || string(got) != `{"next":"test"}` {
				t.Errorf("state %s, %v; want the latest saved", got, err)
			}
		})
	}
}
