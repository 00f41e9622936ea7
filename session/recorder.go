package session

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// Recorder materializes turn records from one session's agent-loop events
// (docs/turn.md, "recorder") and writes them to a Store, one transaction per
// completed step:
//
//  1. the turn's assistant message_end (the model call completed): the turn
//     row (in_progress), the turn's input messages and the assistant message;
//  2. each tool_execution_end: that tool's result, appended to the turn's
//     tool_results message (a crash after 2 of 3 tools keeps 2);
//  3. turn_end: the turn marked completed with its usage and end time, or
//     failed when the event carries an Error — a failed turn keeps its input
//     messages (the loop keeps them too) but no assistant message or tool
//     result.
//
// A process killed mid-turn thus loses at most the step it was in, and
// Store.History of a loop equals agent.Agent.History() as of the last
// completed step (including the loop's merging of a prompt into a preceding
// user message). Tool calls the loop answers without running them (response
// cut at max_tokens, cancelled context) get no tool_execution_end event; the
// Recorder adds the same is_error results the loop does at turn_end.
//
// Feed it every event of the session's loops, in emission order and
// synchronously (event.Bus.SubscribeSync), so each step is on disk before the
// loop takes the next one. Events of several loops (sub-agents) may
// interleave. Safe for concurrent use, though events must arrive in order.
type Recorder struct {
	store     *Store
	sessionID string

	mu    sync.Mutex
	loops map[string]*loopState
	title string // first line of the latest prompt, for an untitled session
	err   error
}

// loopState mirrors the tail of a loop's stored history, so that the Recorder
// can place a new message (or merge it into the last user message) without
// reading the database, plus the turn in progress.
type loopState struct {
	ensured bool // the loops row exists and belongs to the session
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
	written bool          // step 1 committed (turn row exists)
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
func NewRecorder(store *Store, sessionID string) *Recorder {
	return &Recorder{store: store, sessionID: sessionID, loops: map[string]*loopState{}}
}

// Observer returns an event.Observer for event.Bus.SubscribeSync that passes
// each event to Observe and keeps the first error for Err.
func (r *Recorder) Observer() event.Observer {
	return func(e event.Event) { _ = r.Observe(e) }
}

// Err returns the first error Observe returned, or nil.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Observe consumes one event. Events that close a step (assistant message_end,
// tool_execution_end, turn_end) commit a transaction before Observe returns;
// the others only update the Recorder's memory or are ignored. An error
// (an event out of order, a missing session, a database failure) leaves the
// store at the last committed step; the first one is also kept for Err.
func (r *Recorder) Observe(e event.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.observe(e)
	if err != nil {
		err = fmt.Errorf("session: record %s (seq %d) in session %s: %w", e.Kind, e.Seq, r.sessionID, err)
		if r.err == nil {
			r.err = err
		}
	}
	return err
}

func (r *Recorder) observe(e event.Event) error {
	switch e.Kind {
	case event.SessionTurnStart:
		if l := firstLine(e.Text); l != "" {
			r.title = l
		}
		return nil
	case event.TurnStart, event.MessageEnd, event.ProviderResponse, event.ToolExecutionEnd, event.TurnEnd:
	default:
		return nil
	}
	if e.Turn == nil || e.Turn.LoopID == "" {
		return errors.New("event has no turn id")
	}
	ctx := context.Background()
	ls, err := r.loop(ctx, e.Turn.LoopID)
	if err != nil {
		return err
	}
	if e.Kind == event.TurnStart {
		// A previous turn that never ended (dropped events) is abandoned:
		// what it committed stays, what it buffered is lost.
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

// loop returns the state of loopID, reading the tail of its stored history the
// first time.
func (r *Recorder) loop(ctx context.Context, loopID string) (*loopState, error) {
	if ls, ok := r.loops[loopID]; ok {
		return ls, nil
	}
	ls := &loopState{}
	if err := ls.tail.load(ctx, r.store.db, loopID); err != nil {
		return nil, fmt.Errorf("loop %s: %w", loopID, err)
	}
	r.loops[loopID] = ls
	return ls, nil
}

// load reads the last history message of loopID (if any).
func (ls *tail) load(ctx context.Context, q queryer, loopID string) error {
	rows, err := q.QueryContext(ctx, `SELECT seq, role, content FROM messages WHERE loop_id = ?1
		AND seq = (SELECT max(seq) FROM messages WHERE loop_id = ?1) ORDER BY part`, loopID)
	if err != nil {
		return err
	}
	defer rows.Close()
	ls.nextSeq, ls.lastRole, ls.lastParts, ls.last = 0, "", 0, nil
	for rows.Next() {
		var seq int
		var role llm.Role
		var content string
		if err := rows.Scan(&seq, &role, &content); err != nil {
			return err
		}
		blocks, err := decodeBlocks(content)
		if err != nil {
			return fmt.Errorf("message %d: %w", seq, err)
		}
		ls.nextSeq, ls.lastRole = seq+1, role
		ls.lastParts++
		ls.last = append(ls.last, blocks...)
	}
	return rows.Err()
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
	t := &turnState{index: e.Turn.Index, written: true, resSeq: -1}
	var started int64
	var status string
	var u llm.Usage
	err := r.store.db.QueryRowContext(ctx, `SELECT triggered_by, correlation_id, status, stop_reason, started_at,
		input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, total_tokens
		FROM turns WHERE loop_id = ? AND turn_index = ?`, e.Turn.LoopID, e.Turn.Index).
		Scan(&t.trigger, &t.corr, &status, &t.stop, &started, &u.Input, &u.Output, &u.Reasoning, &u.CacheRead, &u.CacheWrite, &u.Total)
	t.usage = &u // the model call's usage, kept when a resume ends the turn
	if errors.Is(err, sql.ErrNoRows) || (err == nil && status != string(TurnInProgress)) {
		return nil, fmt.Errorf("turn %d of loop %s: no turn_start seen and no turn in progress stored", e.Turn.Index, e.Turn.LoopID)
	}
	if err != nil {
		return nil, fmt.Errorf("turn %d of loop %s: %w", e.Turn.Index, e.Turn.LoopID, err)
	}
	t.started = fromMS(started)
	rows, err := r.store.db.QueryContext(ctx, `SELECT seq, part, kind, content FROM messages
		WHERE loop_id = ? AND turn_index = ? AND kind IN ('output', 'tool_results') ORDER BY seq, part`, e.Turn.LoopID, e.Turn.Index)
	if err != nil {
		return nil, fmt.Errorf("turn %d of loop %s: %w", e.Turn.Index, e.Turn.LoopID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq, part int
		var kind MessageKind
		var content string
		if err := rows.Scan(&seq, &part, &kind, &content); err != nil {
			return nil, fmt.Errorf("turn %d of loop %s: %w", e.Turn.Index, e.Turn.LoopID, err)
		}
		blocks, err := decodeBlocks(content)
		if err != nil {
			return nil, fmt.Errorf("turn %d of loop %s: %w", e.Turn.Index, e.Turn.LoopID, err)
		}
		if kind == KindOutput {
			t.calls = llm.Message{Content: blocks}.ToolUses()
		} else {
			t.resSeq, t.resPart, t.results = seq, part, blocks
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("turn %d of loop %s: %w", e.Turn.Index, e.Turn.LoopID, err)
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
