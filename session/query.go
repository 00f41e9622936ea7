package session

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// CreateSession stores a new session described by meta, with CreatedAt and
// UpdatedAt set to now, and returns it. It fails when meta.ID is already
// taken.
func (s *Store) CreateSession(meta SessionMeta) (Session, error) {
	if meta.ID == "" {
		meta.ID = newID()
	}
	meta.Title = firstLine(meta.Title)
	now := time.Now().UTC().Truncate(time.Millisecond)
	_, err := s.db.ExecContext(context.Background(), `INSERT INTO sessions
		(id, created_at, updated_at, title, cwd, agent_file, provider, model, layout)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		meta.ID, ms(now), ms(now), meta.Title, meta.Cwd, meta.AgentFile, meta.Provider, meta.Model, meta.Layout)
	if err != nil {
		return Session{}, fmt.Errorf("session: create session %s: %w", meta.ID, err)
	}
	return Session{SessionMeta: meta, CreatedAt: now, UpdatedAt: now}, nil
}

// ListSessions returns up to limit sessions (all when limit ≤ 0), most
// recently updated first, each with its turn count and usage summed over all
// its loops' turns.
func (s *Store) ListSessions(limit int) ([]SessionSummary, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := s.db.QueryContext(context.Background(), `
		SELECT s.id, s.title, s.created_at, s.updated_at, count(t.turn_index),
			coalesce(sum(t.input_tokens), 0), coalesce(sum(t.output_tokens), 0),
			coalesce(sum(t.reasoning_tokens), 0), coalesce(sum(t.cache_read_tokens), 0),
			coalesce(sum(t.cache_write_tokens), 0), coalesce(sum(t.total_tokens), 0)
		FROM sessions s
		LEFT JOIN loops l ON l.session_id = s.id
		LEFT JOIN turns t ON t.loop_id = l.id
		GROUP BY s.id
		ORDER BY s.updated_at DESC, s.created_at DESC, s.id
		LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("session: list sessions: %w", err)
	}
	defer rows.Close()
	var out []SessionSummary
	for rows.Next() {
		var x SessionSummary
		var c, u int64
		if err := rows.Scan(&x.ID, &x.Title, &c, &u, &x.Turns, &x.Usage.Input, &x.Usage.Output,
			&x.Usage.Reasoning, &x.Usage.CacheRead, &x.Usage.CacheWrite, &x.Usage.Total); err != nil {
			return nil, fmt.Errorf("session: list sessions: %w", err)
		}
		x.CreatedAt, x.UpdatedAt = fromMS(c), fromMS(u)
		out = append(out, x)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("session: list sessions: %w", err)
	}
	return out, nil
}

// LoadSession returns the session id (or unique id prefix) with all its loops,
// turns and stored message parts, read in one consistent snapshot.
func (s *Store) LoadSession(id string) (*SessionDetail, error) {
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("session: load session %s: %w", id, err)
	}
	defer tx.Rollback()
	full, err := resolve(ctx, tx, "sessions", "session", id)
	if err != nil {
		return nil, fmt.Errorf("session: load %w", err)
	}
	d, err := loadDetail(ctx, tx, full)
	if err != nil {
		return nil, fmt.Errorf("session: load session %s: %w", full, err)
	}
	return d, nil
}

func loadDetail(ctx context.Context, q queryer, id string) (*SessionDetail, error) {
	d := &SessionDetail{}
	var c, u int64
	err := q.QueryRowContext(ctx, `SELECT id, created_at, updated_at, title, cwd, agent_file, provider, model, layout
		FROM sessions WHERE id = ?`, id).Scan(&d.ID, &c, &u, &d.Title, &d.Cwd, &d.AgentFile, &d.Provider, &d.Model, &d.Layout)
	if err != nil {
		return nil, err
	}
	d.CreatedAt, d.UpdatedAt = fromMS(c), fromMS(u)

	rows, err := q.QueryContext(ctx, `SELECT id, session_id, coalesce(parent_loop_id, ''), coalesce(branched_from_loop, ''),
		coalesce(branched_from_turn, -1), trigger, created_at FROM loops WHERE session_id = ? ORDER BY created_at, rowid`, id)
	if err != nil {
		return nil, err
	}
	order := map[string]int{}
	for rows.Next() {
		var l Loop
		var created int64
		if err := rows.Scan(&l.ID, &l.SessionID, &l.ParentLoopID, &l.BranchedFromLoop, &l.BranchedFromTurn, &l.Trigger, &created); err != nil {
			rows.Close()
			return nil, err
		}
		l.CreatedAt = fromMS(created)
		order[l.ID] = len(d.Loops)
		d.Loops = append(d.Loops, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}

	rows, err = q.QueryContext(ctx, `SELECT t.loop_id, turn_index, triggered_by, correlation_id, status, stop_reason, error,
		input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, total_tokens, started_at, ended_at
		FROM turns t JOIN loops l ON l.id = t.loop_id WHERE l.session_id = ?
		ORDER BY l.created_at, l.rowid, t.turn_index`, id)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var t Turn
		var st, en int64
		if err := rows.Scan(&t.LoopID, &t.Index, &t.TriggeredBy, &t.CorrelationID, &t.Status, &t.StopReason, &t.Error,
			&t.Usage.Input, &t.Usage.Output, &t.Usage.Reasoning, &t.Usage.CacheRead, &t.Usage.CacheWrite, &t.Usage.Total,
			&st, &en); err != nil {
			rows.Close()
			return nil, err
		}
		t.StartedAt, t.EndedAt = fromMS(st), fromMS(en)
		d.Turns = append(d.Turns, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}

	rows, err = q.QueryContext(ctx, `SELECT m.loop_id, seq, part, turn_index, kind, role, content
		FROM messages m JOIN loops l ON l.id = m.loop_id WHERE l.session_id = ?
		ORDER BY l.created_at, l.rowid, m.seq, m.part`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var m Message
		var content string
		if err := rows.Scan(&m.LoopID, &m.Seq, &m.Part, &m.TurnIndex, &m.Kind, &m.Role, &content); err != nil {
			return nil, err
		}
		if m.Content, err = decodeBlocks(content); err != nil {
			return nil, fmt.Errorf("loop %s message %d.%d: %w", m.LoopID, m.Seq, m.Part, err)
		}
		d.Messages = append(d.Messages, m)
	}
	return d, rows.Err()
}

// History returns the loop's conversation as agent.Agent.History() held it
// after the last stored step: the messages in order, with a user message the
// loop merged (tool results followed by the next prompt) rebuilt from its
// parts. A loop with no stored message returns an empty history. Content
// round-trips through JSON: tool_use inputs come back compacted (insignificant
// whitespace dropped) and invalid UTF-8 in text is replaced. loopID may be a
// unique prefix.
func (s *Store) History(loopID string) ([]llm.Message, error) {
	ctx := context.Background()
	full, err := resolve(ctx, s.db, "loops", "loop", loopID)
	if err != nil {
		return nil, fmt.Errorf("session: history: %w", err)
	}
	h, err := history(ctx, s.db, full)
	if err != nil {
		return nil, fmt.Errorf("session: history of loop %s: %w", full, err)
	}
	return h, nil
}

// historySeqs reads a loop's messages in order; seqs[i] is msgs[i]'s seq.
func historySeqs(ctx context.Context, q queryer, loopID string) (msgs []llm.Message, seqs []int, err error) {
	rows, err := q.QueryContext(ctx, `SELECT seq, role, content FROM messages WHERE loop_id = ? ORDER BY seq, part`, loopID)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var seq int
		var role llm.Role
		var content string
		if err := rows.Scan(&seq, &role, &content); err != nil {
			return nil, nil, err
		}
		blocks, err := decodeBlocks(content)
		if err != nil {
			return nil, nil, fmt.Errorf("message %d: %w", seq, err)
		}
		if n := len(msgs); n > 0 && seqs[n-1] == seq {
			msgs[n-1].Content = append(msgs[n-1].Content, blocks...)
			continue
		}
		msgs = append(msgs, llm.Message{Role: role, Content: blocks})
		seqs = append(seqs, seq)
	}
	return msgs, seqs, rows.Err()
}

func history(ctx context.Context, q queryer, loopID string) ([]llm.Message, error) {
	h, _, err := historySeqs(ctx, q, loopID)
	if h == nil && err == nil {
		h = []llm.Message{}
	}
	return h, err
}

// Pending returns the tool_use blocks of the loop's last assistant message
// that have no stored tool_result yet, in call order: the calls a crash cut
// off, which a resume runs before the next model call. It returns nil when the
// history does not end in an assistant message and its results, or when every
// call has a result. loopID may be a unique prefix.
func (s *Store) Pending(loopID string) ([]llm.Block, error) {
	ctx := context.Background()
	full, err := resolve(ctx, s.db, "loops", "loop", loopID)
	if err != nil {
		return nil, fmt.Errorf("session: pending: %w", err)
	}
	h, err := history(ctx, s.db, full)
	if err != nil {
		return nil, fmt.Errorf("session: pending tool calls of loop %s: %w", full, err)
	}
	last := -1
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role == llm.RoleAssistant {
			last = i
			break
		}
	}
	if last < 0 {
		return nil, nil
	}
	answered := map[string]bool{}
	for _, m := range h[last+1:] {
		for _, b := range m.Content {
			if b.Type == llm.BlockToolResult {
				answered[b.ID] = true
			}
		}
	}
	var out []llm.Block
	for _, c := range h[last].ToolUses() {
		if !answered[c.ID] {
			out = append(out, c)
		}
	}
	return out, nil
}

// LatestLoop returns the id of the session's loop that was active last (the
// latest turn start, else the latest created), sub-agent loops excluded: the
// loop a resume continues. sessionID may be a unique prefix. A session without
// loops returns an error wrapping ErrNotFound.
func (s *Store) LatestLoop(sessionID string) (string, error) {
	ctx := context.Background()
	full, err := resolve(ctx, s.db, "sessions", "session", sessionID)
	if err != nil {
		return "", fmt.Errorf("session: latest loop: %w", err)
	}
	var id string
	err = s.db.QueryRowContext(ctx, `SELECT l.id FROM loops l LEFT JOIN turns t ON t.loop_id = l.id
		WHERE l.session_id = ? AND l.trigger <> ?
		GROUP BY l.id ORDER BY max(coalesce(max(t.started_at), 0), l.created_at) DESC, l.rowid DESC LIMIT 1`,
		full, string(event.TriggerSubAgent)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("session: session %s has no loop: %w", full, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("session: latest loop of session %s: %w", full, err)
	}
	return id, nil
}

// NextTurnIndex returns the index the loop's next turn should get: one past
// the highest turn index recorded in it or inherited by a branch (0 for an
// empty loop). A resumed or branched agent continues numbering from there so
// turn records never collide. loopID may be a unique prefix.
func (s *Store) NextTurnIndex(loopID string) (int, error) {
	ctx := context.Background()
	full, err := resolve(ctx, s.db, "loops", "loop", loopID)
	if err != nil {
		return 0, fmt.Errorf("session: next turn index: %w", err)
	}
	var n int
	err = s.db.QueryRowContext(ctx, `SELECT max(
			coalesce((SELECT max(turn_index) FROM turns WHERE loop_id = ?1), -1),
			coalesce((SELECT max(turn_index) FROM messages WHERE loop_id = ?1), -1),
			coalesce((SELECT branched_from_turn FROM loops WHERE id = ?1), -1)) + 1`, full).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("session: next turn index of loop %s: %w", full, err)
	}
	return n, nil
}

// Branch creates loop newLoopID in session sessionID whose history is loop
// loopID's history up to and including turn turnIndex's messages (its input,
// output and tool results; not a later prompt merged into the same message).
// The new loop has trigger "branch" and records where it came from; its turns
// should be numbered from turnIndex+1 (see NextTurnIndex). The branch point
// must be a completed turn of the loop or a turn the loop itself inherited
// from a branch. sessionID and loopID may be unique prefixes; newLoopID must
// be a new, non-empty id.
func (s *Store) Branch(sessionID, loopID string, turnIndex int, newLoopID string) error {
	if newLoopID == "" {
		return fmt.Errorf("session: branch loop %s: new loop id is empty", loopID)
	}
	ctx := context.Background()
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
	var owner string
	var fromTurn int
	if err := tx.QueryRowContext(ctx, `SELECT session_id, coalesce(branched_from_turn, -1) FROM loops WHERE id = ?`, lid).
		Scan(&owner, &fromTurn); err != nil {
		return fmt.Errorf("session: branch loop %s: %w", lid, err)
	}
	if owner != sid {
		return fmt.Errorf("session: branch: loop %s belongs to session %s, not %s: %w", lid, owner, sid, ErrNotFound)
	}
	if turnIndex < 0 {
		return fmt.Errorf("session: branch loop %s at turn %d: turn index is negative", lid, turnIndex)
	}
	var status string
	err = tx.QueryRowContext(ctx, `SELECT status FROM turns WHERE loop_id = ? AND turn_index = ?`, lid, turnIndex).Scan(&status)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if turnIndex > fromTurn {
			return fmt.Errorf("session: branch loop %s at turn %d: %w", lid, turnIndex, ErrNotFound)
		}
	case err != nil:
		return fmt.Errorf("session: branch loop %s at turn %d: %w", lid, turnIndex, err)
	case status != string(TurnCompleted):
		return fmt.Errorf("session: branch loop %s at turn %d: turn is %s, want completed", lid, turnIndex, status)
	}
	now := ms(time.Now())
	if _, err := tx.ExecContext(ctx, `INSERT INTO loops (id, session_id, branched_from_loop, branched_from_turn, trigger, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`, newLoopID, sid, lid, turnIndex, string(event.TriggerBranch), now); err != nil {
		return fmt.Errorf("session: branch loop %s into %s: %w", lid, newLoopID, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO messages (loop_id, seq, part, turn_index, role, kind, content)
		SELECT ?, seq, part, turn_index, role, kind, content FROM messages WHERE loop_id = ? AND turn_index <= ?`,
		newLoopID, lid, turnIndex); err != nil {
		return fmt.Errorf("session: branch loop %s into %s: copy messages: %w", lid, newLoopID, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET updated_at = max(updated_at, ?) WHERE id = ?`, now, sid); err != nil {
		return fmt.Errorf("session: branch loop %s into %s: %w", lid, newLoopID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("session: branch loop %s into %s: commit: %w", lid, newLoopID, err)
	}
	return nil
}
