package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// Recorder materializes turn records from one session's agent-loop events
// (docs/turn.md, "recorder") and writes them to a Store, one Step (an atomic
// Writer.WriteStep) per completed step:
//
//  1. the turn's assistant message_end (the model call completed): the turn
//     record (in_progress), the turn's input messages and the assistant
//     message;
//  2. each tool_execution_end: that tool's result, appended to the turn's
//     tool_results message (a crash after 2 of 3 tools keeps 2);
//  3. turn_end: the turn marked completed with its usage and end time, or
//     failed when the event carries an Error — a failed turn keeps its input
//     messages (the loop keeps them too) but no assistant message or tool
//     result.
//
// A cache_keepalive event (a keep-alive ping, docs/keepalive.md) is stored
// as the session's Ping (Pinger.AddPing; an error for a store that is not a Pinger), never as a turn or a message; it
// may arrive between any two events of a loop.
//
// A process killed mid-turn thus loses at most the step it was in, and
// Store.History of a loop equals agent.Agent.History() as of the last
// completed step (including the loop's merging of a prompt into a preceding
// user message). Tool calls the loop answers without running them (response
// cut at max_tokens, cancelled context) get no tool_execution_end event; the
// Recorder adds the same is_error results the loop does at turn_end.
//
// Feed it every event of the session's loops, in emission order and
// synchronously (event.Bus.SubscribeSync), so each step is stored (on disk,
// for SQLite) before the loop takes the next one. Events of several loops
// (sub-agents) may interleave. Safe for concurrent use, though events must
// arrive in order.
//
// The Recorder is where the event→record rules live, for every Store: it
// reads a loop's stored tail once (Writer.ReadLoop) and from then on knows
// where each message part goes, so the Store only applies Steps.
type Recorder struct {
	store     Core
	sessionID string

	mu    sync.Mutex
	loops map[string]*loopState
	title string // first line of the latest prompt, for an untitled session
	err   error
}

// loopState mirrors the tail of a loop's stored history, so that the Recorder
// can place a new message (or merge it into the last user message) without
// reading the store, plus the turn in progress.
type loopState struct {
	ensured bool   // the loop is stored and belongs to the session
	prev    string // the loop a new loop continues (event.Event.PreviousLoopID), stored with it
	tail
	turn *turnState
}

// tail is the end of a loop's stored history.
type tail struct {
	nextSeq   int         // seq of the next new history message
	lastRole  llm.Role    // role of the message at nextSeq-1; "" when empty
	lastParts int         // parts stored at nextSeq-1
	last      []llm.Block // content of the message at nextSeq-1
}

type turnState struct {
	index   int
	trigger event.Trigger
	corr    string
	started time.Time
	inputs  []llm.Message // buffered until the model step is written
	written bool          // step 1 stored (the turn record exists)
	calls   []llm.Block   // tool_use blocks of the stored assistant message
	resSeq  int           // seq/part of the tool_results part; resSeq -1 when none
	resPart int
	results []llm.Block
	usage   *llm.Usage // from provider_response, written with the tool results
	stop    llm.StopReason
}

// NewRecorder returns a recorder writing the events of session sessionID (a
// full id, as returned by CreateSession) to store. Observe fails if the
// session does not exist.
func NewRecorder(store Core, sessionID string) *Recorder {
	return &Recorder{store: store, sessionID: sessionID, loops: map[string]*loopState{}}
}

// Observer returns an event.Observer for event.Bus.SubscribeSync that passes
// each event to Observe and keeps the first error for Err. Its writes use a
// context that is never cancelled: the turn_end of a turn the user cancelled
// must still be stored.
func (r *Recorder) Observer() event.Observer {
	return func(e event.Event) { _ = r.Observe(context.Background(), e) }
}

// Err returns the first error Observe returned, or nil.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Observe consumes one event. Events that close a step (assistant message_end,
// tool_execution_end, turn_end) write a Step before Observe returns; the
// others only update the Recorder's memory or are ignored. ctx bounds the
// store calls. An error (an event out of order, a missing session, a store
// failure) leaves the store at the last stored step; the first one is also
// kept for Err. A failed turn_end's message is e.Error, or e.Err's when
// Error is empty.
func (r *Recorder) Observe(ctx context.Context, e event.Event) error {
	if e.Err != nil && e.Error == "" {
		e.Error = e.Err.Error() // an event that did not pass through Bus.Emit
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.observe(ctx, e)
	if err != nil {
		err = fmt.Errorf("session: record %s (seq %d) in session %s: %w", e.Kind, e.Seq, r.sessionID, err)
		if r.err == nil {
			r.err = err
		}
	}
	return err
}

func (r *Recorder) observe(ctx context.Context, e event.Event) error {
	switch e.Kind {
	case event.SessionTurnStart:
		if l := firstLine(e.Text); l != "" {
			r.title = l
		}
		return nil
	case event.CacheKeepAlive:
		if e.Usage == nil {
			return errors.New("cache_keepalive carries no usage")
		}
		p, ok := r.store.(Pinger)
		if !ok {
			return fmt.Errorf("keep-alive ping of session %s: the store (%T) keeps no pings (not a session.Pinger); turn keep-alive off", r.sessionID, r.store)
		}
		return p.AddPing(ctx, r.sessionID, Ping{At: stamp(e.Time), Usage: *e.Usage})
	case event.TurnStart, event.MessageEnd, event.ProviderResponse, event.ToolExecutionEnd, event.TurnEnd:
	default:
		return nil
	}
	if e.Turn == nil || e.Turn.LoopID == "" {
		return errors.New("event has no turn id")
	}
	ls, err := r.loop(ctx, e)
	if err != nil {
		return err
	}
	if e.Kind == event.TurnStart {
		// A previous turn that never ended (dropped events) is abandoned:
		// what it stored stays, what it buffered is lost.
		ls.turn = &turnState{index: e.Turn.Index, trigger: e.Trigger, corr: e.CorrelationID, started: stamp(e.Time), resSeq: -1}
		return nil
	}
	t, err := r.turn(ctx, ls, e)
	if err != nil {
		return err
	}
	switch e.Kind {
	case event.MessageEnd:
		if e.Message == nil {
			return fmt.Errorf("turn %d of loop %s: message_end carries no message", t.index, e.Turn.LoopID)
		}
		if t.written {
			return fmt.Errorf("turn %d of loop %s: message_end after the assistant message was recorded", t.index, e.Turn.LoopID)
		}
		if e.Message.Role == llm.RoleAssistant {
			return r.writeModelStep(ctx, ls, e)
		}
		m := *e.Message
		m.Content = append([]llm.Block(nil), m.Content...)
		t.inputs = append(t.inputs, m)
		return nil
	case event.ProviderResponse:
		if e.Usage != nil {
			u := *e.Usage
			t.usage = &u
		}
		return nil
	case event.ToolExecutionEnd:
		return r.writeToolResult(ctx, ls, e)
	default: // TurnEnd
		if e.Error != "" {
			return r.writeFailed(ctx, ls, e)
		}
		return r.writeCompleted(ctx, ls, e)
	}
}

// loop returns the state of e's loop, reading the tail of its stored
// history the first time. A loop not stored yet whose first turn_start names
// the loop it continues (PreviousLoopID: the previous prompt's loop) starts
// where that loop's history ends, so message positions go on across loops.
func (r *Recorder) loop(ctx context.Context, e event.Event) (*loopState, error) {
	loopID := e.Turn.LoopID
	if ls, ok := r.loops[loopID]; ok {
		return ls, nil
	}
	ls := &loopState{}
	rec, err := r.store.ReadLoop(ctx, loopID)
	switch {
	case err == nil:
		ls.tail.fill(rec.Parts())
	case !errors.Is(err, ErrNotFound):
		return nil, err
	case e.Kind == event.TurnStart && e.PreviousLoopID != "":
		ls.prev = e.PreviousLoopID
		if p, ok := r.loops[ls.prev]; ok {
			ls.tail = p.tail
			ls.tail.last = slices.Clip(ls.tail.last)
			break
		}
		prev, err := r.store.ReadLoop(ctx, ls.prev)
		if err != nil {
			return nil, fmt.Errorf("loop %s continues loop %s: %w", loopID, ls.prev, err)
		}
		ls.tail.fill(prev.Parts())
	}
	r.loops[loopID] = ls
	return ls, nil
}

// readLoop reads loopID's record; a loop not stored yet is an empty record.
func readLoop(ctx context.Context, w Writer, loopID string) (*LoopRecord, error) {
	rec, err := w.ReadLoop(ctx, loopID)
	if errors.Is(err, ErrNotFound) {
		return &LoopRecord{Loop: Loop{ID: loopID, BranchedFromTurn: -1}}, nil
	}
	return rec, err
}

// fill sets tl to the end of the history whose parts (by Seq, then Part)
// are given.
func (tl *tail) fill(parts []Message) {
	*tl = tail{}
	for _, m := range parts {
		if m.Seq+1 != tl.nextSeq {
			*tl = tail{nextSeq: m.Seq + 1, lastRole: m.Role}
		}
		tl.lastParts++
		tl.last = append(tl.last, m.Content...)
	}
}

// turn returns the in-memory turn e belongs to, or rebuilds an in-progress
// turn from the store (a recorder started after a crash, by a resume that
// finishes the turn's tools).
func (r *Recorder) turn(ctx context.Context, ls *loopState, e event.Event) (*turnState, error) {
	if t := ls.turn; t != nil && t.index == e.Turn.Index {
		return t, nil
	}
	if e.Kind == event.MessageEnd || e.Kind == event.ProviderResponse {
		return nil, fmt.Errorf("turn %d of loop %s: no turn_start seen", e.Turn.Index, e.Turn.LoopID)
	}
	rec, err := readLoop(ctx, r.store, e.Turn.LoopID)
	if err != nil {
		return nil, err
	}
	var t *turnState
	for _, tr := range rec.Turns {
		if tr.Index == e.Turn.Index && tr.Status == TurnInProgress {
			u := tr.Usage // the model call's usage, kept when a resume ends the turn
			t = &turnState{index: tr.Index, trigger: tr.TriggeredBy, corr: tr.CorrelationID, started: tr.StartedAt,
				written: true, resSeq: -1, usage: &u, stop: tr.StopReason}
		}
	}
	if t == nil {
		return nil, fmt.Errorf("turn %d of loop %s: no turn_start seen and no turn in progress stored", e.Turn.Index, e.Turn.LoopID)
	}
	for _, m := range rec.Messages {
		switch {
		case m.TurnIndex != t.index:
		case m.Kind == KindOutput:
			t.calls = llm.Message{Content: m.Content}.ToolUses()
		case m.Kind == KindToolResults:
			t.resSeq, t.resPart, t.results = m.Seq, m.Part, m.Content
		}
	}
	ls.turn = t
	return t, nil
}

// stamp returns t, or now when t is zero.
func stamp(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}
