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

var _ Store = (*SQLite)(nil)

// CreateSession implements Store.
func (s *SQLite) CreateSession(ctx context.Context, meta SessionMeta) (Session, error) {
	if meta.ID == "" {
		meta.ID = newID()
	}
	meta.Title = firstLine(meta.Title)
	now := time.Now().UTC().Truncate(time.Millisecond)
	_, err := s.db.ExecContext(ctx, `INSERT INTO sessions
		(id, created_at, updated_at, title, cwd, agent_file, provider, model, layout)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		meta.ID, ms(now), ms(now), meta.Title, meta.Cwd, meta.AgentFile, meta.Provider, meta.Model, meta.Layout)
	if err != nil {
		return Session{}, fmt.Errorf("session: create session %s: %w", meta.ID, err)
	}
	return Session{SessionMeta: meta, CreatedAt: now, UpdatedAt: now}, nil
}

// ListSessions implements Store.
func (s *SQLite) ListSessions(ctx context.Context, opts ListOptions) ([]SessionSummary, error) {
	limit := opts.Limit
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := s.db.QueryContext(ctx, `
		SELECT s.id, s.title, s.cwd, s.created_at, s.updated_at, count(DISTINCT l.id), count(t.turn_index),
			coalesce(sum(t.input_tokens), 0), coalesce(sum(t.output_tokens), 0),
			coalesce(sum(t.reasoning_tokens), 0), coalesce(sum(t.cache_read_tokens), 0),
			coalesce(sum(t.cache_write_tokens), 0), coalesce(sum(t.total_tokens), 0),
			coalesce(p.n, 0), coalesce(p.input, 0), coalesce(p.output, 0), coalesce(p.reasoning, 0),
			coalesce(p.cache_read, 0), coalesce(p.cache_write, 0), coalesce(p.total, 0),
			coalesce(sum(t.cache_write_1h_tokens), 0), coalesce(p.cache_write_1h, 0)
		FROM sessions s
		LEFT JOIN loops l ON l.session_id = s.id
		LEFT JOIN turns t ON t.loop_id = l.id
		LEFT JOIN (SELECT session_id, count(*) AS n, sum(input_tokens) AS input, sum(output_tokens) AS output,
				sum(reasoning_tokens) AS reasoning, sum(cache_read_tokens) AS cache_read,
				sum(cache_write_tokens) AS cache_write, sum(total_tokens) AS total,
				sum(cache_write_1h_tokens) AS cache_write_1h
			FROM pings GROUP BY session_id) p ON p.session_id = s.id
		WHERE ?1 = '' OR s.cwd = ?1
		GROUP BY s.id
		ORDER BY s.updated_at DESC, s.created_at DESC, s.id
		LIMIT ?2`, opts.Cwd, limit)
	if err != nil {
		return nil, fmt.Errorf("session: list sessions: %w", err)
	}
	defer rows.Close()
	var out []SessionSummary
	for rows.Next() {
		var x SessionSummary
		var c, u int64
		pu := &x.Pings.Usage
		if err := rows.Scan(&x.ID, &x.Title, &x.Cwd, &c, &u, &x.Loops, &x.Turns, &x.Usage.Input, &x.Usage.Output,
			&x.Usage.Reasoning, &x.Usage.CacheRead, &x.Usage.CacheWrite, &x.Usage.Total,
			&x.Pings.Count, &pu.Input, &pu.Output, &pu.Reasoning, &pu.CacheRead, &pu.CacheWrite, &pu.Total,
			&x.Usage.CacheWrite1h, &pu.CacheWrite1h); err != nil {
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

// LoadSession implements Store.
func (s *SQLite) LoadSession(ctx context.Context, id string) (*SessionDetail, error) {
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
	if d.Loops, err = queryLoops(ctx, q, `l.session_id = ?`, id); err != nil {
		return nil, err
	}
	if d.Turns, err = queryTurns(ctx, q, `l.session_id = ?`, id); err != nil {
		return nil, err
	}
	if d.Messages, err = queryMessages(ctx, q, `l.session_id = ?`, id); err != nil {
		return nil, err
	}
	if d.Pings, err = queryPings(ctx, q, id); err != nil {
		return nil, err
	}
	return d, nil
}

// queryPings reads the keep-alive pings of session id, in the order stored.
func queryPings(ctx context.Context, q queryer, id string) ([]Ping, error) {
	rows, err := q.QueryContext(ctx, `SELECT at, input_tokens, output_tokens, reasoning_tokens, cache_read_tokens,
		cache_write_tokens, total_tokens, cache_write_1h_tokens FROM pings WHERE session_id = ? ORDER BY rowid`, id)
	if err != nil {
		return nil, fmt.Errorf("pings: %w", err)
	}
	defer rows.Close()
	var out []Ping
	for rows.Next() {
		var p Ping
		var at int64
		u := &p.Usage
		if err := rows.Scan(&at, &u.Input, &u.Output, &u.Reasoning, &u.CacheRead, &u.CacheWrite, &u.Total, &u.CacheWrite1h); err != nil {
			return nil, fmt.Errorf("pings: %w", err)
		}
		p.At = fromMS(at)
		out = append(out, p)
	}
	return out, rows.Err()
}

// queryLoops reads the loops (alias l) matching where, by creation.
func queryLoops(ctx context.Context, q queryer, where string, args ...any) ([]Loop, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, session_id, coalesce(parent_loop_id, ''), coalesce(previous_loop_id, ''),
		coalesce(branched_from_loop, ''), coalesce(branched_from_turn, -1), trigger, created_at
		FROM loops l WHERE `+where+` ORDER BY created_at, rowid`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Loop
	for rows.Next() {
		var l Loop
		var created int64
		if err := rows.Scan(&l.ID, &l.SessionID, &l.ParentLoopID, &l.PreviousLoopID, &l.BranchedFromLoop, &l.BranchedFromTurn,
			&l.Trigger, &created); err != nil {
			return nil, err
		}
		l.CreatedAt = fromMS(created)
		out = append(out, l)
	}
	return out, rows.Err()
}

// queryTurns reads the turns of the loops (alias l) matching where, by loop
// creation then turn index.
func queryTurns(ctx context.Context, q queryer, where string, args ...any) ([]Turn, error) {
	rows, err := q.QueryContext(ctx, `SELECT t.loop_id, turn_index, triggered_by, correlation_id, status, stop_reason, error,
		input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, total_tokens, started_at, ended_at,
		cache_write_1h_tokens
		FROM turns t JOIN loops l ON l.id = t.loop_id WHERE `+where+`
		ORDER BY l.created_at, l.rowid, t.turn_index`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Turn
	for rows.Next() {
		var t Turn
		var st, en int64
		if err := rows.Scan(&t.LoopID, &t.Index, &t.TriggeredBy, &t.CorrelationID, &t.Status, &t.StopReason, &t.Error,
			&t.Usage.Input, &t.Usage.Output, &t.Usage.Reasoning, &t.Usage.CacheRead, &t.Usage.CacheWrite, &t.Usage.Total,
			&st, &en, &t.Usage.CacheWrite1h); err != nil {
			return nil, err
		}
		t.StartedAt, t.EndedAt = fromMS(st), fromMS(en)
		out = append(out, t)
	}
	return out, rows.Err()
}

// queryMessages reads the message parts of the loops (alias l) matching
// where, by loop creation, then Seq, then Part.
func queryMessages(ctx context.Context, q queryer, where string, args ...any) ([]Message, error) {
	rows, err := q.QueryContext(ctx, `SELECT m.loop_id, seq, part, turn_index, kind, role, content
		FROM messages m JOIN loops l ON l.id = m.loop_id WHERE `+where+`
		ORDER BY l.created_at, l.rowid, m.seq, m.part`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Message
	for rows.Next() {
		var m Message
		var content string
		if err := rows.Scan(&m.LoopID, &m.Seq, &m.Part, &m.TurnIndex, &m.Kind, &m.Role, &content); err != nil {
			return nil, err
		}
		if m.Content, err = decodeBlocks(content); err != nil {
			return nil, fmt.Errorf("loop %s message %d.%d: %w", m.LoopID, m.Seq, m.Part, err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// ReadLoop implements Writer.
func (s *SQLite) ReadLoop(ctx context.Context, loopID string) (*LoopRecord, error) {
	r, err := s.readChain(ctx, loopID, false)
	if err != nil {
		return nil, fmt.Errorf("session: read loop %s: %w", loopID, err)
	}
	return r, nil
}

// loopSession returns the session loop id belongs to; an error wrapping
// ErrNotFound when there is no such loop.
func loopSession(ctx context.Context, q queryer, id string) (string, error) {
	var sid string
	err := q.QueryRowContext(ctx, `SELECT session_id FROM loops WHERE id = ?`, id).Scan(&sid)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return sid, err
}

// readChain reads loop loopID (a unique prefix when prefix is set) with the
// loops it continues, in one read transaction (one snapshot: never half a
// Step): the loops, turns and parts of its session, arranged by recordOf.
func (s *SQLite) readChain(ctx context.Context, loopID string, prefix bool) (*LoopRecord, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	full := loopID
	if prefix {
		if full, err = resolve(ctx, tx, "loops", "loop", loopID); err != nil {
			return nil, err
		}
	}
	sid, err := loopSession(ctx, tx, full)
	if err != nil {
		return nil, fmt.Errorf("loop %s: %w", full, err)
	}
	ls, err := queryLoops(ctx, tx, `l.session_id = ?`, sid)
	if err != nil {
		return nil, err
	}
	loops := map[string]Loop{}
	for _, l := range ls {
		loops[l.ID] = l
	}
	chain, err := chainOf(loops, full)
	if err != nil {
		return nil, err
	}
	where, args := `l.id = ?`, []any{full}
	if len(chain) > 1 {
		where, args = `l.session_id = ?`, []any{sid}
	}
	turns, err := queryTurns(ctx, tx, where, args...)
	if err != nil {
		return nil, err
	}
	parts, err := queryMessages(ctx, tx, where, args...)
	if err != nil {
		return nil, err
	}
	return recordOf(chain, loops, turns, parts), nil
}

// History implements Store.
func (s *SQLite) History(ctx context.Context, loopID string) ([]llm.Message, error) {
	r, err := s.readChain(ctx, loopID, true)
	if err != nil {
		return nil, fmt.Errorf("session: history: %w", err)
	}
	return r.History(), nil
}

// Pending implements Store.
func (s *SQLite) Pending(ctx context.Context, loopID string) ([]llm.Block, error) {
	r, err := s.readChain(ctx, loopID, true)
	if err != nil {
		return nil, fmt.Errorf("session: pending tool calls: %w", err)
	}
	return pendingOf(r.History()), nil
}

// LatestLoop implements Store.
func (s *SQLite) LatestLoop(ctx context.Context, sessionID string) (string, error) {
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

// NextTurnIndex implements Store.
func (s *SQLite) NextTurnIndex(ctx context.Context, loopID string) (int, error) {
	full, err := resolve(ctx, s.db, "loops", "loop", loopID)
	if err != nil {
		return 0, fmt.Errorf("session: next turn index: %w", err)
	}
	var n int
	err = s.db.QueryRowContext(ctx, `SELECT max(
			coalesce((SELECT max(turn_index) FROM turns WHERE loop_id = ?1), -1),
			coalesce((SELECT max(turn_index) FROM messages WHERE loop_id = ?1), -1)) + 1`, full).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("session: next turn index of loop %s: %w", full, err)
	}
	return n, nil
}
