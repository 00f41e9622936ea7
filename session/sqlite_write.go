package session

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/strata-agent/strata/event"
)

// WriteStep implements Writer: one immediate transaction, committed with
// synchronous=FULL before it returns.
func (s *SQLite) WriteStep(ctx context.Context, st Step) error {
	if err := st.validate(); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("session: %s: %w", st.what(), err)
	}
	defer tx.Rollback()
	if err := applyStep(ctx, tx, st); err != nil {
		return fmt.Errorf("session: %s: %w", st.what(), err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("session: %s: commit: %w", st.what(), err)
	}
	return nil
}

// applyStep writes st inside tx, in Step's order.
func applyStep(ctx context.Context, tx *sql.Tx, st Step) error {
	res, err := tx.ExecContext(ctx, `UPDATE sessions SET updated_at = max(updated_at, ?),
		title = CASE WHEN title = '' THEN ? ELSE title END WHERE id = ?`, ms(st.Time), st.Title, st.SessionID)
	if err != nil {
		return fmt.Errorf("session %s: %w", st.SessionID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("session %s: %w", st.SessionID, ErrNotFound)
	}
	if l := st.Loop; l != nil {
		if p := l.PreviousLoopID; p != "" {
			owner, err := loopSession(ctx, tx, p)
			if err != nil {
				return fmt.Errorf("loop %s: previous loop %s: %w", st.LoopID, p, err)
			}
			if owner != st.SessionID {
				return fmt.Errorf("loop %s: previous loop %s belongs to session %s", st.LoopID, p, owner)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO loops (id, session_id, previous_loop_id, trigger, created_at) VALUES (?, ?, nullif(?, ''), ?, ?)
			ON CONFLICT (id) DO NOTHING`, st.LoopID, st.SessionID, l.PreviousLoopID, string(l.Trigger), ms(l.CreatedAt)); err != nil {
			return fmt.Errorf("loop %s: %w", st.LoopID, err)
		}
		owner, err := loopSession(ctx, tx, st.LoopID)
		if err != nil {
			return fmt.Errorf("loop %s: %w", st.LoopID, err)
		}
		if owner != st.SessionID {
			return fmt.Errorf("loop %s belongs to session %s", st.LoopID, owner)
		}
	}
	if t := st.InsertTurn; t != nil {
		u := t.Usage
		if _, err := tx.ExecContext(ctx, `INSERT INTO turns (loop_id, turn_index, triggered_by, correlation_id, status, stop_reason, error,
			input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, total_tokens, started_at, ended_at,
			cache_write_1h_tokens)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			t.LoopID, t.Index, string(t.TriggeredBy), t.CorrelationID, string(t.Status), string(t.StopReason), t.Error,
			u.Input, u.Output, u.Reasoning, u.CacheRead, u.CacheWrite, u.Total, ms(t.StartedAt), ms(t.EndedAt), u.CacheWrite1h); err != nil {
			return fmt.Errorf("insert turn (already recorded?): %w", err)
		}
	}
	if t := st.UpdateTurn; t != nil {
		u := t.Usage
		res, err := tx.ExecContext(ctx, `UPDATE turns SET status = ?, stop_reason = ?, error = ?, input_tokens = ?, output_tokens = ?,
			reasoning_tokens = ?, cache_read_tokens = ?, cache_write_tokens = ?, total_tokens = ?, ended_at = ?,
			cache_write_1h_tokens = ?
			WHERE loop_id = ? AND turn_index = ?`,
			string(t.Status), string(t.StopReason), t.Error, u.Input, u.Output, u.Reasoning, u.CacheRead, u.CacheWrite, u.Total,
			ms(t.EndedAt), u.CacheWrite1h, t.LoopID, t.Index)
		if err != nil {
			return fmt.Errorf("update turn: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("update turn: %w", ErrNotFound)
		}
		if st.DropOutput {
			if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE loop_id = ? AND turn_index = ? AND kind IN ('output', 'tool_results')`,
				t.LoopID, t.Index); err != nil {
				return fmt.Errorf("drop output: %w", err)
			}
		}
	}
	for _, m := range st.Insert {
		content, err := encodeBlocks(m.Content)
		if err != nil {
			return fmt.Errorf("message %d.%d: %w", m.Seq, m.Part, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages (loop_id, seq, part, turn_index, role, kind, content)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, m.LoopID, m.Seq, m.Part, m.TurnIndex, string(m.Role), string(m.Kind), content); err != nil {
			return fmt.Errorf("message %d.%d: %w", m.Seq, m.Part, err)
		}
	}
	for _, m := range st.Replace {
		content, err := encodeBlocks(m.Content)
		if err != nil {
			return fmt.Errorf("message %d.%d: %w", m.Seq, m.Part, err)
		}
		res, err := tx.ExecContext(ctx, `UPDATE messages SET content = ? WHERE loop_id = ? AND seq = ? AND part = ?`,
			content, m.LoopID, m.Seq, m.Part)
		if err != nil {
			return fmt.Errorf("message %d.%d: %w", m.Seq, m.Part, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("message %d.%d: %w", m.Seq, m.Part, ErrNotFound)
		}
	}
	if st.ChildLoopID != "" {
		if _, err := tx.ExecContext(ctx, `UPDATE loops SET parent_loop_id = ? WHERE id = ? AND session_id = ? AND parent_loop_id IS NULL`,
			st.LoopID, st.ChildLoopID, st.SessionID); err != nil {
			return fmt.Errorf("child loop %s: %w", st.ChildLoopID, err)
		}
	}
	return nil
}

// Branch implements Store: one transaction adds the loop; nothing is copied.
func (s *SQLite) Branch(ctx context.Context, sessionID, loopID string, turnIndex int, newLoopID string) error {
	if newLoopID == "" {
		return fmt.Errorf("session: branch loop %s: new loop id is empty", loopID)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("session: branch loop %s: %w", loopID, err)
	}
	defer tx.Rollback()
	sid, err := resolve(ctx, tx, "sessions", "session", sessionID)
	if err != nil {
		return fmt.Errorf("session: branch: %w", err)
	}
	lid, err := resolve(ctx, tx, "loops", "loop", loopID)
	if err != nil {
		return fmt.Errorf("session: branch: %w", err)
	}
	ls, err := queryLoops(ctx, tx, `l.id = ?`, lid)
	if err != nil || len(ls) != 1 {
		return fmt.Errorf("session: branch loop %s: %w", lid, cmp.Or(err, ErrNotFound))
	}
	if ls[0].SessionID != sid {
		return fmt.Errorf("session: branch: loop %s belongs to session %s, not %s: %w", lid, ls[0].SessionID, sid, ErrNotFound)
	}
	var status TurnStatus
	err = tx.QueryRowContext(ctx, `SELECT status FROM turns WHERE loop_id = ? AND turn_index = ?`, lid, turnIndex).Scan(&status)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("session: branch loop %s at turn %d: %w", lid, turnIndex, err)
	}
	if err := checkBranchPoint(lid, turnIndex, status, copiedUpTo(ls[0])); err != nil {
		return err
	}
	now := ms(time.Now())
	if _, err := tx.ExecContext(ctx, `INSERT INTO loops (id, session_id, previous_loop_id, branched_from_loop, branched_from_turn, trigger, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, newLoopID, sid, lid, lid, turnIndex, string(event.TriggerBranch), now); err != nil {
		return fmt.Errorf("session: branch loop %s into %s: %w", lid, newLoopID, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET updated_at = max(updated_at, ?) WHERE id = ?`, now, sid); err != nil {
		return fmt.Errorf("session: branch loop %s into %s: %w", lid, newLoopID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("session: branch loop %s into %s: commit: %w", lid, newLoopID, err)
	}
	return nil
}

// AddPing implements Writer: one statement, inserting nothing (and failing
// with ErrNotFound) when the session does not exist.
func (s *SQLite) AddPing(ctx context.Context, sessionID string, p Ping) error {
	u := p.Usage
	res, err := s.db.ExecContext(ctx, `INSERT INTO pings (session_id, at, input_tokens, output_tokens, reasoning_tokens,
		cache_read_tokens, cache_write_tokens, total_tokens, cache_write_1h_tokens)
		SELECT id, ?, ?, ?, ?, ?, ?, ?, ? FROM sessions WHERE id = ?`,
		ms(p.At), u.Input, u.Output, u.Reasoning, u.CacheRead, u.CacheWrite, u.Total, u.CacheWrite1h, sessionID)
	if err != nil {
		return fmt.Errorf("session: keep-alive ping of session %s: %w", sessionID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("session: keep-alive ping of session %s: %w", sessionID, cmp.Or(err, ErrNotFound))
	}
	return nil
}
