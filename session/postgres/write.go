package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/session"
)

// WriteStep implements session.Writer: one transaction, committed before it
// returns.
func (s *Store) WriteStep(ctx context.Context, st session.Step) error {
	if err := st.Validate(); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	if err := s.writeTx(ctx, func(tx pgx.Tx) error { return applyStep(ctx, tx, st) }); err != nil {
		return fmt.Errorf("session: %s: %w", st.Describe(), err)
	}
	return nil
}

// applyStep writes st inside tx, in Step's order.
func applyStep(ctx context.Context, tx pgx.Tx, st session.Step) error {
	tag, err := tx.Exec(ctx, `UPDATE sessions SET updated_at = greatest(updated_at, $1),
		title = CASE WHEN title = '' THEN $2 ELSE title END WHERE id = $3`, ms(st.Time), text(st.Title), st.SessionID)
	if err != nil {
		return fmt.Errorf("session %s: %w", st.SessionID, err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("session %s: %w", st.SessionID, session.ErrNotFound)
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
		if _, err := tx.Exec(ctx, `INSERT INTO loops (id, session_id, previous_loop_id, trigger, created_at)
			VALUES ($1, $2, nullif($3, ''), $4, $5) ON CONFLICT (id) DO NOTHING`,
			st.LoopID, st.SessionID, l.PreviousLoopID, string(l.Trigger), ms(l.CreatedAt)); err != nil {
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
		if _, err := tx.Exec(ctx, `INSERT INTO turns (loop_id, turn_index, triggered_by, correlation_id, status, stop_reason, error,
			input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, cache_write_1h_tokens,
			total_tokens, started_at, ended_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
			t.LoopID, t.Index, string(t.TriggeredBy), t.CorrelationID, string(t.Status), string(t.StopReason), text(t.Error),
			u.Input, u.Output, u.Reasoning, u.CacheRead, u.CacheWrite, u.CacheWrite1h, u.Total, ms(t.StartedAt), ms(t.EndedAt)); err != nil {
			return fmt.Errorf("insert turn (already recorded?): %w", err)
		}
	}
	if t := st.UpdateTurn; t != nil {
		u := t.Usage
		tag, err := tx.Exec(ctx, `UPDATE turns SET status = $1, stop_reason = $2, error = $3, input_tokens = $4,
			output_tokens = $5, reasoning_tokens = $6, cache_read_tokens = $7, cache_write_tokens = $8,
			cache_write_1h_tokens = $9, total_tokens = $10, ended_at = $11
			WHERE loop_id = $12 AND turn_index = $13`,
			string(t.Status), string(t.StopReason), text(t.Error), u.Input, u.Output, u.Reasoning, u.CacheRead, u.CacheWrite,
			u.CacheWrite1h, u.Total, ms(t.EndedAt), t.LoopID, t.Index)
		if err != nil {
			return fmt.Errorf("update turn: %w", err)
		}
		if tag.RowsAffected() != 1 {
			return fmt.Errorf("update turn: %w", session.ErrNotFound)
		}
		if st.DropOutput {
			if _, err := tx.Exec(ctx, `DELETE FROM messages WHERE loop_id = $1 AND turn_index = $2 AND kind IN ('output', 'tool_results')`,
				t.LoopID, t.Index); err != nil {
				return fmt.Errorf("drop output: %w", err)
			}
		}
	}
	for _, m := range st.Insert {
		content, err := session.EncodeContent(m.Content)
		if err != nil {
			return fmt.Errorf("message %d.%d: %w", m.Seq, m.Part, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO messages (loop_id, seq, part, turn_index, role, kind, content)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, m.LoopID, m.Seq, m.Part, m.TurnIndex, string(m.Role), string(m.Kind), content); err != nil {
			return fmt.Errorf("message %d.%d: %w", m.Seq, m.Part, err)
		}
	}
	for _, m := range st.Replace {
		content, err := session.EncodeContent(m.Content)
		if err != nil {
			return fmt.Errorf("message %d.%d: %w", m.Seq, m.Part, err)
		}
		tag, err := tx.Exec(ctx, `UPDATE messages SET content = $1 WHERE loop_id = $2 AND seq = $3 AND part = $4`,
			content, m.LoopID, m.Seq, m.Part)
		if err != nil {
			return fmt.Errorf("message %d.%d: %w", m.Seq, m.Part, err)
		}
		if tag.RowsAffected() != 1 {
			return fmt.Errorf("message %d.%d: %w", m.Seq, m.Part, session.ErrNotFound)
		}
	}
	if st.ChildLoopID != "" {
		if _, err := tx.Exec(ctx, `UPDATE loops SET parent_loop_id = $1 WHERE id = $2 AND session_id = $3 AND parent_loop_id IS NULL`,
			st.LoopID, st.ChildLoopID, st.SessionID); err != nil {
			return fmt.Errorf("child loop %s: %w", st.ChildLoopID, err)
		}
	}
	return nil
}

// Branch implements session.Store: one transaction adds the loop; nothing is
// copied.
func (s *Store) Branch(ctx context.Context, sessionID, loopID string, turnIndex int, newLoopID string) error {
	if newLoopID == "" {
		return fmt.Errorf("session: branch loop %s: new loop id is empty", loopID)
	}
	return s.writeTx(ctx, func(tx pgx.Tx) error {
		sid, err := resolve(ctx, tx, "sessions", "session", sessionID)
		if err != nil {
			return fmt.Errorf("session: branch: %w", err)
		}
		lid, err := resolve(ctx, tx, "loops", "loop", loopID)
		if err != nil {
			return fmt.Errorf("session: branch: %w", err)
		}
		ls, err := queryLoops(ctx, tx, `l.id = $1`, lid)
		if err != nil || len(ls) != 1 {
			if err == nil {
				err = session.ErrNotFound
			}
			return fmt.Errorf("session: branch loop %s: %w", lid, err)
		}
		if ls[0].SessionID != sid {
			return fmt.Errorf("session: branch: loop %s belongs to session %s, not %s: %w", lid, ls[0].SessionID, sid, session.ErrNotFound)
		}
		var status session.TurnStatus
		err = tx.QueryRow(ctx, `SELECT status FROM turns WHERE loop_id = $1 AND turn_index = $2`, lid, turnIndex).Scan(&status)
		if err != nil && err != pgx.ErrNoRows {
			return fmt.Errorf("session: branch loop %s at turn %d: %w", lid, turnIndex, err)
		}
		if err := session.CheckBranchPoint(ls[0], turnIndex, status); err != nil {
			return err
		}
		now := ms(time.Now())
		if _, err := tx.Exec(ctx, `INSERT INTO loops (id, session_id, previous_loop_id, branched_from_loop, branched_from_turn, trigger, created_at)
			VALUES ($1, $2, $3, $3, $4, $5, $6)`, newLoopID, sid, lid, turnIndex, string(event.TriggerBranch), now); err != nil {
			return fmt.Errorf("session: branch loop %s into %s: %w", lid, newLoopID, err)
		}
		if _, err := tx.Exec(ctx, `UPDATE sessions SET updated_at = greatest(updated_at, $1) WHERE id = $2`, now, sid); err != nil {
			return fmt.Errorf("session: branch loop %s into %s: %w", lid, newLoopID, err)
		}
		return nil
	})
}

// AddPing implements session.Writer: one statement, inserting nothing (and
// failing with ErrNotFound) when the session does not exist.
func (s *Store) AddPing(ctx context.Context, sessionID string, p session.Ping) error {
	u := p.Usage
	tag, err := s.pool.Exec(ctx, `INSERT INTO pings (session_id, at, input_tokens, output_tokens, reasoning_tokens,
		cache_read_tokens, cache_write_tokens, cache_write_1h_tokens, total_tokens)
		SELECT id, $1, $2, $3, $4, $5, $6, $7, $8 FROM sessions WHERE id = $9`,
		ms(p.At), u.Input, u.Output, u.Reasoning, u.CacheRead, u.CacheWrite, u.CacheWrite1h, u.Total, sessionID)
	if err != nil {
		return fmt.Errorf("session: keep-alive ping of session %s: %w", sessionID, err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("session: keep-alive ping of session %s: %w", sessionID, session.ErrNotFound)
	}
	return nil
}

// SaveTLDR implements session.Store; a key already stored keeps its row.
func (s *Store) SaveTLDR(ctx context.Context, sessionID, key, tldr string) error {
	if err := session.CheckTLDR(sessionID, key); err != nil {
		return err
	}
	return s.writeTx(ctx, func(tx pgx.Tx) error {
		if err := sessionExists(ctx, tx, sessionID, "save tl;dr"); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO tldrs (session_id, source_sha256, tldr, created_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (session_id, source_sha256) DO NOTHING`, sessionID, key, text(tldr), ms(time.Now())); err != nil {
			return fmt.Errorf("save tl;dr in session %s: %w", sessionID, err)
		}
		return nil
	})
}

// TLDRs implements session.Store.
func (s *Store) TLDRs(ctx context.Context, sessionID string) (map[string]string, error) {
	out := map[string]string{}
	err := s.readTx(ctx, func(tx pgx.Tx) error {
		if err := sessionExists(ctx, tx, sessionID, "tl;drs"); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT source_sha256, tldr FROM tldrs WHERE session_id = $1`, sessionID)
		if err != nil {
			return fmt.Errorf("tl;drs of session %s: %w", sessionID, err)
		}
		var k, v string
		_, err = pgx.ForEachRow(rows, []any{&k, &v}, func() error { out[k] = v; return nil })
		if err != nil {
			return fmt.Errorf("tl;drs of session %s: %w", sessionID, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// sessionExists fails with an error wrapping ErrNotFound, prefixed by what,
// when session id (a full id) is not stored.
func sessionExists(ctx context.Context, db q, id, what string) error {
	var n int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM sessions WHERE id = $1`, id).Scan(&n); err != nil {
		return fmt.Errorf("%s of session %s: %w", what, id, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: session %s: %w", what, id, session.ErrNotFound)
	}
	return nil
}
