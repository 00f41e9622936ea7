package session

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/strata-agent/strata/event"
)

// CreateSession implements Store.
func (m *Memory) CreateSession(ctx context.Context, meta SessionMeta) (Session, error) {
	if meta.ID == "" {
		meta.ID = newID()
	}
	meta.Title = firstLine(meta.Title)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.ready(ctx); err != nil {
		return Session{}, fmt.Errorf("session: create session %s: %w", meta.ID, err)
	}
	if _, ok := m.sessions[meta.ID]; ok {
		return Session{}, fmt.Errorf("session: create session %s: the id is taken", meta.ID)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	s := Session{SessionMeta: meta, CreatedAt: now, UpdatedAt: now}
	m.sessions[meta.ID] = &s
	return s, nil
}

// msTime returns t as stored: UTC, millisecond precision, the zero time kept.
func msTime(t time.Time) time.Time { return fromMS(ms(t)) }

// addLoop stores a new loop; the caller holds m.mu for writing.
func (m *Memory) addLoop(l Loop) *memLoop {
	m.created++
	l.CreatedAt = msTime(l.CreatedAt)
	ml := &memLoop{Loop: l, order: m.created, turns: map[int]Turn{}, parts: map[partKey]memPart{}}
	m.loops[l.ID] = ml
	return ml
}

// touch moves the session's UpdatedAt to t when t is later.
func (s *Session) touch(t time.Time) {
	if t = msTime(t); t.After(s.UpdatedAt) {
		s.UpdatedAt = t
	}
}

// WriteStep implements Writer: every check runs before the first change, so
// a failed Step changes nothing.
func (m *Memory) WriteStep(ctx context.Context, st Step) error {
	if err := st.validate(); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.ready(ctx); err != nil {
		return fmt.Errorf("session: %s: %w", st.what(), err)
	}
	parts, err := m.checkStep(st)
	if err != nil {
		return fmt.Errorf("session: %s: %w", st.what(), err)
	}
	s := m.sessions[st.SessionID]
	s.touch(st.Time)
	if s.Title == "" {
		s.Title = st.Title
	}
	l := m.loops[st.LoopID]
	if l == nil && st.Loop != nil {
		l = m.addLoop(Loop{ID: st.LoopID, SessionID: st.SessionID, PreviousLoopID: st.Loop.PreviousLoopID, BranchedFromTurn: -1,
			Trigger: st.Loop.Trigger, CreatedAt: st.Loop.CreatedAt})
	}
	if t := st.InsertTurn; t != nil {
		tr := *t
		tr.StartedAt, tr.EndedAt = msTime(tr.StartedAt), msTime(tr.EndedAt)
		l.turns[tr.Index] = tr
	}
	if t := st.UpdateTurn; t != nil {
		tr := l.turns[t.Index]
		tr.Status, tr.StopReason, tr.Error, tr.Usage, tr.EndedAt = t.Status, t.StopReason, t.Error, t.Usage, msTime(t.EndedAt)
		l.turns[t.Index] = tr
		if st.DropOutput {
			maps.DeleteFunc(l.parts, func(_ partKey, p memPart) bool { return isOutputOf(p, t.Index) })
		}
	}
	for k, p := range parts {
		l.parts[k] = p
	}
	if c := m.loops[st.ChildLoopID]; c != nil && c.SessionID == st.SessionID && c.ParentLoopID == "" {
		c.ParentLoopID = st.LoopID
	}
	return nil
}

// isOutputOf reports whether p is the output or tool results of turn index.
func isOutputOf(p memPart, index int) bool {
	return p.turn == index && (p.kind == KindOutput || p.kind == KindToolResults)
}

// checkStep returns why st cannot be applied, or the parts it inserts and
// replaces, encoded. The caller holds m.mu.
func (m *Memory) checkStep(st Step) (map[partKey]memPart, error) {
	if m.sessions[st.SessionID] == nil {
		return nil, fmt.Errorf("session %s: %w", st.SessionID, ErrNotFound)
	}
	l := m.loops[st.LoopID]
	switch {
	case l != nil && st.Loop != nil && l.SessionID != st.SessionID:
		return nil, fmt.Errorf("loop %s belongs to session %s", st.LoopID, l.SessionID)
	case l == nil && st.Loop == nil && (st.InsertTurn != nil || st.UpdateTurn != nil || len(st.Insert)+len(st.Replace) > 0):
		return nil, fmt.Errorf("loop %s: %w", st.LoopID, ErrNotFound)
	}
	if p := st.Loop; l == nil && p != nil && p.PreviousLoopID != "" {
		switch prev := m.loops[p.PreviousLoopID]; {
		case prev == nil:
			return nil, fmt.Errorf("loop %s: previous loop %s: %w", st.LoopID, p.PreviousLoopID, ErrNotFound)
		case prev.SessionID != st.SessionID:
			return nil, fmt.Errorf("loop %s: previous loop %s belongs to session %s", st.LoopID, p.PreviousLoopID, prev.SessionID)
		}
	}
	stored := func(k partKey) bool { return false }
	if l != nil {
		if t := st.InsertTurn; t != nil {
			if _, ok := l.turns[t.Index]; ok {
				return nil, fmt.Errorf("insert turn: turn %d is already recorded", t.Index)
			}
		}
		stored = func(k partKey) bool {
			p, ok := l.parts[k]
			return ok && !(st.DropOutput && isOutputOf(p, st.UpdateTurn.Index))
		}
	}
	if t := st.UpdateTurn; t != nil {
		if _, ok := l.turns[t.Index]; l == nil || !ok {
			return nil, fmt.Errorf("update turn: %w", ErrNotFound)
		}
	}
	parts := map[partKey]memPart{}
	for _, msg := range st.Insert {
		k := partKey{msg.Seq, msg.Part}
		if _, ok := parts[k]; ok || stored(k) {
			return nil, fmt.Errorf("message %d.%d: already stored", msg.Seq, msg.Part)
		}
		content, err := encodeBlocks(msg.Content)
		if err != nil {
			return nil, fmt.Errorf("message %d.%d: %w", msg.Seq, msg.Part, err)
		}
		parts[k] = memPart{turn: msg.TurnIndex, kind: msg.Kind, role: msg.Role, content: content}
	}
	for _, msg := range st.Replace {
		k := partKey{msg.Seq, msg.Part}
		p, ok := parts[k]
		if !ok && stored(k) {
			p, ok = l.parts[k], true
		}
		if !ok {
			return nil, fmt.Errorf("message %d.%d: %w", msg.Seq, msg.Part, ErrNotFound)
		}
		content, err := encodeBlocks(msg.Content)
		if err != nil {
			return nil, fmt.Errorf("message %d.%d: %w", msg.Seq, msg.Part, err)
		}
		p.content = content
		parts[k] = p
	}
	return parts, nil
}

// Branch implements Store: it adds the loop; nothing is copied.
func (m *Memory) Branch(ctx context.Context, sessionID, loopID string, turnIndex int, newLoopID string) error {
	if newLoopID == "" {
		return fmt.Errorf("session: branch loop %s: new loop id is empty", loopID)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.ready(ctx); err != nil {
		return fmt.Errorf("session: branch loop %s: %w", loopID, err)
	}
	sid, err := resolveIn(m.sessions, "session", sessionID)
	if err != nil {
		return fmt.Errorf("session: branch: %w", err)
	}
	lid, err := resolveIn(m.loops, "loop", loopID)
	if err != nil {
		return fmt.Errorf("session: branch: %w", err)
	}
	from := m.loops[lid]
	if from.SessionID != sid {
		return fmt.Errorf("session: branch: loop %s belongs to session %s, not %s: %w", lid, from.SessionID, sid, ErrNotFound)
	}
	if err := checkBranchPoint(lid, turnIndex, from.turns[turnIndex].Status, copiedUpTo(from.Loop)); err != nil {
		return err
	}
	if _, ok := m.loops[newLoopID]; ok {
		return fmt.Errorf("session: branch loop %s into %s: the id is taken", lid, newLoopID)
	}
	now := time.Now()
	m.addLoop(Loop{ID: newLoopID, SessionID: sid, PreviousLoopID: lid, BranchedFromLoop: lid, BranchedFromTurn: turnIndex,
		Trigger: event.TriggerBranch, CreatedAt: now})
	m.sessions[sid].touch(now)
	return nil
}

// AddPing implements Writer.
func (m *Memory) AddPing(ctx context.Context, sessionID string, p Ping) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.ready(ctx); err != nil {
		return fmt.Errorf("session: keep-alive ping of session %s: %w", sessionID, err)
	}
	if m.sessions[sessionID] == nil {
		return fmt.Errorf("session: keep-alive ping of session %s: %w", sessionID, ErrNotFound)
	}
	p.At = msTime(p.At)
	m.pings[sessionID] = append(m.pings[sessionID], p)
	return nil
}
