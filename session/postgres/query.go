package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/session"
)

// CreateSession implements session.Store.
func (s *Store) CreateSession(ctx context.Context, meta session.SessionMeta) (session.Session, error) {
	if meta.ID == "" {
		meta.ID = session.NewSessionID()
	}
	meta.Title = text(session.TitleLine(meta.Title))
	now := time.Now().UTC().Truncate(time.Millisecond)
	_, err := s.pool.Exec(ctx, `INSERT INTO sessions (id, created_at, updated_at, title, cwd, agent_file, provider, model, layout)
		VALUES ($1, $2, $2, $3, $4, $5, $6, $7, $8)`,
		meta.ID, ms(now), meta.Title, text(meta.Cwd), text(meta.AgentFile), meta.Provider, meta.Model, meta.Layout)
	if err != nil {
		return session.Session{}, fmt.Errorf("session: create session %s: %w", meta.ID, err)
	}
	return session.Session{SessionMeta: meta, CreatedAt: now, UpdatedAt: now}, nil
}

// ListSessions implements session.Store.
func (s *Store) ListSessions(ctx context.Context, opts session.ListOptions) ([]session.SessionSummary, error) {
	var limit any // NULL: no limit
	if opts.Limit > 0 {
		limit = opts.Limit
	}
	rows, err := s.pool.Query(ctx, `
		SELECT s.id, s.title, s.cwd, s.created_at, s.updated_at, count(DISTINCT l.id), count(t.turn_index),
			coalesce(sum(t.input_tokens), 0)::bigint, coalesce(sum(t.output_tokens), 0)::bigint,
			coalesce(sum(t.reasoning_tokens), 0)::bigint, coalesce(sum(t.cache_read_tokens), 0)::bigint,
			coalesce(sum(t.cache_write_tokens), 0)::bigint, coalesce(sum(t.cache_write_1h_tokens), 0)::bigint,
			coalesce(sum(t.total_tokens), 0)::bigint,
			coalesce(max(p.n), 0), coalesce(max(p.input), 0)::bigint, coalesce(max(p.output), 0)::bigint,
			coalesce(max(p.reasoning), 0)::bigint, coalesce(max(p.cache_read), 0)::bigint,
			coalesce(max(p.cache_write), 0)::bigint, coalesce(max(p.cache_write_1h), 0)::bigint,
			coalesce(max(p.total), 0)::bigint
		FROM sessions s
		LEFT JOIN loops l ON l.session_id = s.id
		LEFT JOIN turns t ON t.loop_id = l.id
		LEFT JOIN (SELECT session_id, count(*) AS n, sum(input_tokens) AS input, sum(output_tokens) AS output,
				sum(reasoning_tokens) AS reasoning, sum(cache_read_tokens) AS cache_read,
				sum(cache_write_tokens) AS cache_write, sum(cache_write_1h_tokens) AS cache_write_1h,
				sum(total_tokens) AS total
			FROM pings GROUP BY session_id) p ON p.session_id = s.id
		WHERE $1 = '' OR s.cwd = $1
		GROUP BY s.id
		ORDER BY s.updated_at DESC, s.created_at DESC, s.id
		LIMIT $2`, opts.Cwd, limit)
	if err != nil {
		return nil, fmt.Errorf("session: list sessions: %w", err)
	}
	out, err := collect(rows, func(r pgx.CollectableRow) (session.SessionSummary, error) {
		var x session.SessionSummary
		var c, u int64
		tu, pu := &x.Usage, &x.Pings.Usage
		err := r.Scan(&x.ID, &x.Title, &x.Cwd, &c, &u, &x.Loops, &x.Turns,
			&tu.Input, &tu.Output, &tu.Reasoning, &tu.CacheRead, &tu.CacheWrite, &tu.CacheWrite1h, &tu.Total,
			&x.Pings.Count, &pu.Input, &pu.Output, &pu.Reasoning, &pu.CacheRead, &pu.CacheWrite, &pu.CacheWrite1h, &pu.Total)
		x.CreatedAt, x.UpdatedAt = fromMS(c), fromMS(u)
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("session: list sessions: %w", err)
	}
	return out, nil
}

// LoadSession implements session.Store: one snapshot.
func (s *Store) LoadSession(ctx context.Context, id string) (*session.SessionDetail, error) {
	var d *session.SessionDetail
	err := s.readTx(ctx, func(tx pgx.Tx) error {
		full, err := resolve(ctx, tx, "sessions", "session", id)
		if err != nil {
			return fmt.Errorf("load %w", err)
		}
		if d, err = loadDetail(ctx, tx, full); err != nil {
			return fmt.Errorf("load session %s: %w", full, err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	return d, nil
}

func loadDetail(ctx context.Context, db q, id string) (*session.SessionDetail, error) {
	d := &session.SessionDetail{}
	var c, u int64
	err := db.QueryRow(ctx, `SELECT id, created_at, updated_at, title, cwd, agent_file, provider, model, layout
		FROM sessions WHERE id = $1`, id).Scan(&d.ID, &c, &u, &d.Title, &d.Cwd, &d.AgentFile, &d.Provider, &d.Model, &d.Layout)
	if err != nil {
		return nil, notFound(err)
	}
	d.CreatedAt, d.UpdatedAt = fromMS(c), fromMS(u)
	if d.Loops, err = queryLoops(ctx, db, `l.session_id = $1`, id); err != nil {
		return nil, err
	}
	if d.Turns, err = queryTurns(ctx, db, `l.session_id = $1`, id); err != nil {
		return nil, err
	}
	if d.Messages, err = queryMessages(ctx, db, `l.session_id = $1`, id); err != nil {
		return nil, err
	}
	rows, err := db.Query(ctx, `SELECT at, input_tokens, output_tokens, reasoning_tokens, cache_read_tokens,
		cache_write_tokens, cache_write_1h_tokens, total_tokens FROM pings WHERE session_id = $1 ORDER BY ord`, id)
	if err != nil {
		return nil, fmt.Errorf("pings: %w", err)
	}
	d.Pings, err = collect(rows, func(r pgx.CollectableRow) (session.Ping, error) {
		var p session.Ping
		var at int64
		u := &p.Usage
		err := r.Scan(&at, &u.Input, &u.Output, &u.Reasoning, &u.CacheRead, &u.CacheWrite, &u.CacheWrite1h, &u.Total)
		p.At = fromMS(at)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("pings: %w", err)
	}
	return d, nil
}

// queryLoops reads the loops (alias l) matching where, by creation.
func queryLoops(ctx context.Context, db q, where string, args ...any) ([]session.Loop, error) {
	rows, err := db.Query(ctx, `SELECT id, session_id, coalesce(parent_loop_id, ''), coalesce(previous_loop_id, ''),
		coalesce(branched_from_loop, ''), coalesce(branched_from_turn, -1), trigger, created_at
		FROM loops l WHERE `+where+` ORDER BY created_at, ord`, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows, func(r pgx.CollectableRow) (session.Loop, error) {
		var l session.Loop
		var created int64
		err := r.Scan(&l.ID, &l.SessionID, &l.ParentLoopID, &l.PreviousLoopID, &l.BranchedFromLoop, &l.BranchedFromTurn,
			&l.Trigger, &created)
		l.CreatedAt = fromMS(created)
		return l, err
	})
}

// queryTurns reads the turns of the loops (alias l) matching where, by loop
// creation then turn index.
func queryTurns(ctx context.Context, db q, where string, args ...any) ([]session.Turn, error) {
	rows, err := db.Query(ctx, `SELECT t.loop_id, turn_index, triggered_by, correlation_id, status, stop_reason, error,
		input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, cache_write_1h_tokens,
		total_tokens, started_at, ended_at
		FROM turns t JOIN loops l ON l.id = t.loop_id WHERE `+where+`
		ORDER BY l.created_at, l.ord, t.turn_index`, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows, func(r pgx.CollectableRow) (session.Turn, error) {
		var t session.Turn
		var st, en int64
		u := &t.Usage
		err := r.Scan(&t.LoopID, &t.Index, &t.TriggeredBy, &t.CorrelationID, &t.Status, &t.StopReason, &t.Error,
			&u.Input, &u.Output, &u.Reasoning, &u.CacheRead, &u.CacheWrite, &u.CacheWrite1h, &u.Total, &st, &en)
		t.StartedAt, t.EndedAt = fromMS(st), fromMS(en)
		return t, err
	})
}

// queryMessages reads the message parts of the loops (alias l) matching
// where, by loop creation, then Seq, then Part.
func queryMessages(ctx context.Context, db q, where string, args ...any) ([]session.Message, error) {
	rows, err := db.Query(ctx, `SELECT m.loop_id, seq, part, turn_index, kind, role, content
		FROM messages m JOIN loops l ON l.id = m.loop_id WHERE `+where+`
		ORDER BY l.created_at, l.ord, m.seq, m.part`, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows, func(r pgx.CollectableRow) (session.Message, error) {
		var m session.Message
		var content string
		if err := r.Scan(&m.LoopID, &m.Seq, &m.Part, &m.TurnIndex, &m.Kind, &m.Role, &content); err != nil {
			return m, err
		}
		var err error
		if m.Content, err = session.DecodeContent(content); err != nil {
			return m, fmt.Errorf("loop %s message %d.%d: %w", m.LoopID, m.Seq, m.Part, err)
		}
		return m, nil
	})
}

// loopSession returns the session loop id belongs to; an error wrapping
// session.ErrNotFound when there is no such loop.
func loopSession(ctx context.Context, db q, id string) (string, error) {
	var sid string
	err := db.QueryRow(ctx, `SELECT session_id FROM loops WHERE id = $1`, id).Scan(&sid)
	return sid, notFound(err)
}

// ReadLoop implements session.Writer.
func (s *Store) ReadLoop(ctx context.Context, loopID string) (*session.LoopRecord, error) {
	r, err := s.readChain(ctx, loopID, false)
	if err != nil {
		return nil, fmt.Errorf("session: read loop %s: %w", loopID, err)
	}
	return r, nil
}

// readChain reads loop loopID (a unique prefix when prefix is set) with the
// loops it continues, in one snapshot.
func (s *Store) readChain(ctx context.Context, loopID string, prefix bool) (*session.LoopRecord, error) {
	var rec *session.LoopRecord
	err := s.readTx(ctx, func(tx pgx.Tx) error {
		full := loopID
		var err error
		if prefix {
			if full, err = resolve(ctx, tx, "loops", "loop", loopID); err != nil {
				return err
			}
		}
		sid, err := loopSession(ctx, tx, full)
		if err != nil {
			return fmt.Errorf("loop %s: %w", full, err)
		}
		loops, err := queryLoops(ctx, tx, `l.session_id = $1`, sid)
		if err != nil {
			return err
		}
		turns, err := queryTurns(ctx, tx, `l.session_id = $1`, sid)
		if err != nil {
			return err
		}
		parts, err := queryMessages(ctx, tx, `l.session_id = $1`, sid)
		if err != nil {
			return err
		}
		rec, err = session.BuildRecord(loops, turns, parts, full)
		return err
	})
	return rec, err
}

// History implements session.Store.
func (s *Store) History(ctx context.Context, loopID string) ([]llm.Message, error) {
	r, err := s.readChain(ctx, loopID, true)
	if err != nil {
		return nil, fmt.Errorf("session: history: %w", err)
	}
	return r.History(), nil
}

// Pending implements session.Store.
func (s *Store) Pending(ctx context.Context, loopID string) ([]llm.Block, error) {
	r, err := s.readChain(ctx, loopID, true)
	if err != nil {
		return nil, fmt.Errorf("session: pending tool calls: %w", err)
	}
	return session.PendingCalls(r.History()), nil
}

// LatestLoop implements session.Store.
func (s *Store) LatestLoop(ctx context.Context, sessionID string) (string, error) {
	full, err := resolve(ctx, s.pool, "sessions", "session", sessionID)
	if err != nil {
		return "", fmt.Errorf("session: latest loop: %w", err)
	}
	var id string
	err = s.pool.QueryRow(ctx, `SELECT l.id FROM loops l LEFT JOIN turns t ON t.loop_id = l.id
		WHERE l.session_id = $1 AND l.trigger <> $2
		GROUP BY l.id ORDER BY greatest(coalesce(max(t.started_at), 0), l.created_at) DESC, l.ord DESC LIMIT 1`,
		full, string(event.TriggerSubAgent)).Scan(&id)
	if err == pgx.ErrNoRows {
		return "", fmt.Errorf("session: session %s has no loop: %w", full, session.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("session: latest loop of session %s: %w", full, err)
	}
	return id, nil
}

// NextTurnIndex implements session.Store.
func (s *Store) NextTurnIndex(ctx context.Context, loopID string) (int, error) {
	full, err := resolve(ctx, s.pool, "loops", "loop", loopID)
	if err != nil {
		return 0, fmt.Errorf("session: next turn index: %w", err)
	}
	var n int
	err = s.pool.QueryRow(ctx, `SELECT greatest(
			coalesce((SELECT max(turn_index) FROM turns WHERE loop_id = $1), -1),
			coalesce((SELECT max(turn_index) FROM messages WHERE loop_id = $1), -1)) + 1`, full).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("session: next turn index of loop %s: %w", full, err)
	}
	return n, nil
}
