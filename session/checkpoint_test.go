package session_test

import (
	"errors"
	"testing"
	"time"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/session"
)

// Both stores keep one checkpoint per loop (Checkpoints): the latest saved
// replaces the one before; an unknown loop or a loop without one is
// session.ErrNotFound. A version-3 file migrated to the current version has the
// table, and its old loops have no checkpoint (they restore by replaying the
// layout, as before).
func TestCheckpoints(t *testing.T) {
	sq, _ := openTemp(t)
	for name, st := range map[string]interface {
		session.Store
		session.Checkpoints
	}{"memory": session.NewMemory(), "sqlite": sq, "sqlite migrated from version 3": migrateDump(t, "schema3.sql", 3)} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			if _, err := st.Checkpoint(ctx, "main0000loop0001"); !errors.Is(err, session.ErrNotFound) {
				t.Errorf("checkpoint of a loop that has none: %v; want session.ErrNotFound", err)
			}
			if err := st.SaveCheckpoint(ctx, "no-such-loop", []byte(`{}`)); !errors.Is(err, session.ErrNotFound) {
				t.Errorf("checkpoint of an unknown loop saved: %v; want session.ErrNotFound", err)
			}
			sess, err := st.CreateSession(ctx, session.SessionMeta{})
			if err != nil {
				t.Fatal(err)
			}
			loop := writeLoop(t, st, sess.ID)
			for _, state := range []string{`{"turns":1}`, `{"turns":2}`} {
				if err := st.SaveCheckpoint(ctx, loop, []byte(state)); err != nil {
					t.Fatal(err)
				}
			}
			if got, err := st.Checkpoint(ctx, loop); err != nil || string(got) != `{"turns":2}` {
				t.Errorf("checkpoint %s, %v; want the latest saved", got, err)
			}
		})
	}
}

// writeLoop stores a loop with one turn in session sid and returns its id.
func writeLoop(t *testing.T, st session.Store, sid string) string {
	t.Helper()
	loop := "ckpt" + sid[:8]
	now := time.Now().UTC()
	err := st.WriteStep(t.Context(), session.Step{SessionID: sid, LoopID: loop, Time: now,
		Loop:       &session.Loop{Trigger: event.TriggerUser, CreatedAt: now},
		InsertTurn: &session.Turn{LoopID: loop, Index: 0, TriggeredBy: event.TriggerUser, Status: session.TurnInProgress, StartedAt: now}})
	if err != nil {
		t.Fatal(err)
	}
	return loop
}
