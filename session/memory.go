package session

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// Memory is a Store held in the process's memory: the same semantics as
// SQLite (id prefixes, branch, pending tool calls, history; content
// round-trips through the same JSON encoding, times are kept in milliseconds)
// without a file, and lost when the process ends. Use it in tests and in
// embedders that do not need sessions to survive the process.
//
// It is safe for concurrent use: readers share a lock, each write (one Step,
// one Branch, one new session) holds it alone, so readers see a Step wholly
// or not at all. Methods fail with an error wrapping ctx.Err() when ctx is
// done, and with one wrapping ErrClosed after Close.
type Memory struct {
	mu       sync.RWMutex
	closed   bool
	sessions map[string]*Session
	loops    map[string]*memLoop
	created  int // loops created so far; orders loops created in the same millisecond
	leases   map[string]memLease
	pings    map[string][]Ping              // by session id, in the order stored
	tldrs    map[string]map[string]string   // by session id, then key (Store.SaveTLDR)
	blobs    map[blobKind]map[string][]byte // checkpoints by loop id, workflow states by session id (blobs.go)
	payloads map[string][]byte              // by SHA-256 (Payloads)
	clock    func() time.Time               // leases' clock; nil = time.Now (tests set it)
}

// memLease is a session's writer lease (Store.Acquire).
type memLease struct {
	owner   string
	expires time.Time
}

var _ Store = (*Memory)(nil)

// memLoop is a stored loop.
type memLoop struct {
	Loop
	order int // creation order, like SQLite's rowid
	turns map[int]Turn
	parts map[partKey]memPart
}

// partKey is a message part's place in its loop's history.
type partKey struct{ seq, part int }

// memPart is a stored message part; content is its JSON, as SQLite stores it.
type memPart struct {
	turn    int
	kind    MessageKind
	role    llm.Role
	content string
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{sessions: map[string]*Session{}, loops: map[string]*memLoop{}, leases: map[string]memLease{},
		pings: map[string][]Ping{}, tldrs: map[string]map[string]string{}}
}

// Close implements Store: it drops everything stored; every method fails
// afterwards with an error wrapping ErrClosed.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed, m.sessions, m.loops, m.leases, m.pings, m.tldrs, m.blobs, m.payloads = true, nil, nil, nil, nil, nil, nil, nil
	return nil
}

// ready returns why a call cannot run: ctx is done or the store is closed.
// The caller holds m.mu.
func (m *Memory) ready(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if m.closed {
		return ErrClosed
	}
	return nil
}

// resolveIn returns the key of items that equals id or, failing that, has it
// as its unique prefix; what is "session" or "loop".
func resolveIn[V any](items map[string]V, what, id string) (string, error) {
	if id == "" {
		return "", fmt.Errorf("%s id is empty: %w", what, ErrNotFound)
	}
	if _, ok := items[id]; ok {
		return id, nil
	}
	var found []string
	for k := range items {
		if strings.HasPrefix(k, id) {
			found = append(found, k)
		}
	}
	slices.Sort(found)
	return resolved(what, id, found[:min(len(found), 2)])
}

// loop resolves loopID and returns the loop; errors start with "session:
// <what>". The caller holds m.mu.
func (m *Memory) loop(ctx context.Context, what, loopID string) (*memLoop, error) {
	if err := m.ready(ctx); err != nil {
		return nil, fmt.Errorf("session: %s of loop %s: %w", what, loopID, err)
	}
	full, err := resolveIn(m.loops, "loop", loopID)
	if err != nil {
		return nil, fmt.Errorf("session: %s: %w", what, err)
	}
	return m.loops[full], nil
}

// messages returns the loop's parts by Seq then Part.
func (l *memLoop) messages() ([]Message, error) {
	keys := slices.SortedFunc(maps.Keys(l.parts), func(a, b partKey) int {
		return cmp.Or(cmp.Compare(a.seq, b.seq), cmp.Compare(a.part, b.part))
	})
	out := make([]Message, 0, len(keys))
	for _, k := range keys {
		p := l.parts[k]
		blocks, err := decodeBlocks(p.content)
		if err != nil {
			return nil, fmt.Errorf("loop %s message %d.%d: %w", l.ID, k.seq, k.part, err)
		}
		out = append(out, Message{LoopID: l.ID, Seq: k.seq, Part: k.part, TurnIndex: p.turn, Kind: p.kind, Role: p.role, Content: blocks})
	}
	return out, nil
}

// turnList returns the loop's turns by index.
func (l *memLoop) turnList() []Turn {
	out := slices.Collect(maps.Values(l.turns))
	slices.SortFunc(out, func(a, b Turn) int { return cmp.Compare(a.Index, b.Index) })
	return out
}

// sessionLoops returns the loops of session id by creation.
func (m *Memory) sessionLoops(id string) []*memLoop {
	var out []*memLoop
	for _, l := range m.loops {
		if l.SessionID == id {
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b *memLoop) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.order, b.order))
	})
	return out
}

// ListSessions implements Store.
func (m *Memory) ListSessions(ctx context.Context, opts ListOptions) ([]SessionSummary, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if err := m.ready(ctx); err != nil {
		return nil, fmt.Errorf("session: list sessions: %w", err)
	}
	sums := map[string]*SessionSummary{}
	var out []SessionSummary
	for _, s := range m.sessions {
		if opts.Cwd == "" || s.Cwd == opts.Cwd {
			x := &SessionSummary{ID: s.ID, Title: s.Title, Cwd: s.Cwd, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
			for _, p := range m.pings[s.ID] {
				x.Pings = x.Pings.Add(p)
			}
			sums[s.ID] = x
		}
	}
	for _, l := range m.loops {
		if x := sums[l.SessionID]; x != nil {
			x.Loops++
			for _, t := range l.turns {
				x.Turns++
				x.Usage = x.Usage.Add(t.Usage)
			}
		}
	}
	for _, x := range sums {
		out = append(out, *x)
	}
	slices.SortFunc(out, func(a, b SessionSummary) int {
		return cmp.Or(b.UpdatedAt.Compare(a.UpdatedAt), b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	if opts.Limit > 0 && len(out) > opts.Limit {
		out = out[:opts.Limit]
	}
	return out, nil
}

// LoadSession implements Store.
func (m *Memory) LoadSession(ctx context.Context, id string) (*SessionDetail, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if err := m.ready(ctx); err != nil {
		return nil, fmt.Errorf("session: load session %s: %w", id, err)
	}
	full, err := resolveIn(m.sessions, "session", id)
	if err != nil {
		return nil, fmt.Errorf("session: load %w", err)
	}
	d := &SessionDetail{Session: *m.sessions[full], Pings: slices.Clone(m.pings[full])}
	for _, l := range m.sessionLoops(full) {
		msgs, err := l.messages()
		if err != nil {
			return nil, fmt.Errorf("session: load session %s: %w", full, err)
		}
		d.Loops = append(d.Loops, l.Loop)
		d.Turns = append(d.Turns, l.turnList()...)
		d.Messages = append(d.Messages, msgs...)
	}
	return d, nil
}

// ReadLoop implements Writer.
func (m *Memory) ReadLoop(ctx context.Context, loopID string) (*LoopRecord, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if err := m.ready(ctx); err != nil {
		return nil, fmt.Errorf("session: read loop %s: %w", loopID, err)
	}
	l := m.loops[loopID]
	if l == nil {
		return nil, fmt.Errorf("session: read loop %s: %w", loopID, ErrNotFound)
	}
	r, err := m.record(l)
	if err != nil {
		return nil, fmt.Errorf("session: read loop %s: %w", loopID, err)
	}
	return r, nil
}

// record returns l's LoopRecord with the loops it continues (recordOf). The
// caller holds m.mu.
func (m *Memory) record(l *memLoop) (*LoopRecord, error) {
	loops := map[string]Loop{}
	for _, x := range m.loops {
		if x.SessionID == l.SessionID {
			loops[x.ID] = x.Loop
		}
	}
	chain, err := chainOf(loops, l.ID)
	if err != nil {
		return nil, err
	}
	var turns []Turn
	var parts []Message
	for _, c := range chain {
		x := m.loops[c.id]
		msgs, err := x.messages()
		if err != nil {
			return nil, err
		}
		turns, parts = append(turns, x.turnList()...), append(parts, msgs...)
	}
	return recordOf(chain, loops, turns, parts), nil
}

// History implements Store.
func (m *Memory) History(ctx context.Context, loopID string) ([]llm.Message, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	l, err := m.loop(ctx, "history", loopID)
	if err != nil {
		return nil, err
	}
	r, err := m.record(l)
	if err != nil {
		return nil, fmt.Errorf("session: history of loop %s: %w", l.ID, err)
	}
	return r.History(), nil
}

// Pending implements Store.
func (m *Memory) Pending(ctx context.Context, loopID string) ([]llm.Block, error) {
	h, err := m.History(ctx, loopID)
	if err != nil {
		return nil, err
	}
	return pendingOf(h), nil
}

// LatestLoop implements Store.
func (m *Memory) LatestLoop(ctx context.Context, sessionID string) (string, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if err := m.ready(ctx); err != nil {
		return "", fmt.Errorf("session: latest loop of session %s: %w", sessionID, err)
	}
	full, err := resolveIn(m.sessions, "session", sessionID)
	if err != nil {
		return "", fmt.Errorf("session: latest loop: %w", err)
	}
	var best *memLoop
	var bestAt time.Time
	for _, l := range m.loops {
		if l.SessionID != full || l.Trigger == event.TriggerSubAgent {
			continue
		}
		at := l.CreatedAt
		for _, t := range l.turns {
			if t.StartedAt.After(at) {
				at = t.StartedAt
			}
		}
		// A tie goes to the loop created last, as in SQLite (rowid).
		if best == nil || at.After(bestAt) || (at.Equal(bestAt) && l.order > best.order) {
			best, bestAt = l, at
		}
	}
	if best == nil {
		return "", fmt.Errorf("session: session %s has no loop: %w", full, ErrNotFound)
	}
	return best.ID, nil
}

// NextTurnIndex implements Store.
func (m *Memory) NextTurnIndex(ctx context.Context, loopID string) (int, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	l, err := m.loop(ctx, "next turn index", loopID)
	if err != nil {
		return 0, err
	}
	n := -1
	for i := range l.turns {
		n = max(n, i)
	}
	for _, p := range l.parts {
		n = max(n, p.turn)
	}
	return n + 1, nil
}
