package session

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// The results agent.runTools gives tool calls it does not run; the Recorder
// stores the same ones, since no tool_execution_end event carries them.
const (
	notRunMaxTokens = "tool call not executed: the model's response was cut off at max_tokens"
	notRunCancelled = "tool call not executed: cancelled"
)

// NotRunMaxTokens is the tool_result text the agent loop gives the tool calls
// of a response cut off at max_tokens, which it does not run; the Recorder
// stores the same text (no tool_execution_end event carries it).
const NotRunMaxTokens = notRunMaxTokens

// writeModelStep stores step 1: the turn (in progress), its input messages
// and its assistant message.
func (r *Recorder) writeModelStep(ctx context.Context, ls *loopState, e event.Event) error {
	t := ls.turn
	tl := ls.tail
	st := r.openTurn(ls, &tl, e, TurnInProgress)
	st.Insert = append(st.Insert, tl.place(st.LoopID, t.index, KindOutput, *e.Message))
	if err := r.store.WriteStep(ctx, st); err != nil {
		return err
	}
	ls.tail, ls.ensured = tl, true
	t.written, t.inputs, t.stop = true, nil, e.StopReason
	t.calls = slices.Clone(e.Message.ToolUses())
	return nil
}

// writeToolResult stores step 2: one tool result, appended to the turn's
// tool_results message.
func (r *Recorder) writeToolResult(ctx context.Context, ls *loopState, e event.Event) error {
	t := ls.turn
	if e.ToolResult == nil {
		return fmt.Errorf("turn %d of loop %s: tool_execution_end carries no result", t.index, e.Turn.LoopID)
	}
	if !t.written {
		return fmt.Errorf("turn %d of loop %s: tool result before the assistant message was recorded", t.index, e.Turn.LoopID)
	}
	results := append(slices.Clone(t.results), *e.ToolResult)
	st := r.step(e, nil)
	tl := ls.tail
	seq, part := tl.putResults(&st, t, results)
	if t.usage != nil {
		st.UpdateTurn = t.record(st.LoopID, TurnInProgress, t.stop, "", *t.usage, time.Time{})
	}
	st.ChildLoopID = e.ChildLoopID
	if err := r.store.WriteStep(ctx, st); err != nil {
		return err
	}
	ls.tail = tl
	t.resSeq, t.resPart, t.results = seq, part, results
	return nil
}

// writeCompleted stores step 3 of a successful turn: results the loop made up
// for calls it did not run, then the turn's status, stop reason, usage and end
// time.
func (r *Recorder) writeCompleted(ctx context.Context, ls *loopState, e event.Event) error {
	t := ls.turn
	stop := e.StopReason
	if stop == "" {
		stop = t.stop
	}
	tl := ls.tail
	var st Step
	if !t.written {
		// A turn that ended without a model call (not something agent.Agent
		// does): keep its input.
		st = r.openTurn(ls, &tl, e, TurnCompleted)
	} else {
		st = r.step(e, nil)
		st.UpdateTurn = t.record(st.LoopID, TurnCompleted, stop, "", usageOf(e.Usage, t.usage), stamp(e.Time))
	}
	results, added := completeResults(t.calls, t.results, stop)
	seq, part := t.resSeq, t.resPart
	if added {
		seq, part = tl.putResults(&st, t, results)
	}
	if err := r.store.WriteStep(ctx, st); err != nil {
		return err
	}
	ls.tail, ls.ensured = tl, true
	t.resSeq, t.resPart, t.results = seq, part, results
	ls.turn = nil
	return nil
}

// writeFailed stores step 3 of a failed turn: the turn (failed) and its input
// messages, and no assistant message or tool result — anything of the turn's
// output already stored is dropped, as the loop drops it too.
func (r *Recorder) writeFailed(ctx context.Context, ls *loopState, e event.Event) error {
	t := ls.turn
	tl := ls.tail
	var st Step
	if !t.written {
		st = r.openTurn(ls, &tl, e, TurnFailed)
	} else {
		st = r.step(e, nil)
		st.UpdateTurn = t.record(st.LoopID, TurnFailed, e.StopReason, e.Error, usageOf(e.Usage, t.usage), stamp(e.Time))
		st.DropOutput = true
	}
	if err := r.store.WriteStep(ctx, st); err != nil {
		return err
	}
	if t.written {
		// The history's end moved back past the dropped parts: the loop's
		// next event reads it again.
		delete(r.loops, st.LoopID)
		return nil
	}
	ls.tail, ls.ensured = tl, true
	ls.turn = nil
	return nil
}

// step returns the Step every write for e starts with: the session's update
// time and, while the session has no title, the latest prompt's first line
// (or the first text of inputs).
func (r *Recorder) step(e event.Event, inputs []llm.Message) Step {
	title := r.title
	for i := 0; title == "" && i < len(inputs); i++ {
		title = firstLine(inputs[i].Text())
	}
	return Step{SessionID: r.sessionID, LoopID: e.Turn.LoopID, Time: stamp(e.Time), Title: title}
}

// openTurn returns the Step of a turn's first write: the session update, the
// loop (unless known to be stored), the turn with status (ended when status is
// not in progress) and the buffered input messages, placed after tl.
func (r *Recorder) openTurn(ls *loopState, tl *tail, e event.Event, status TurnStatus) Step {
	t := ls.turn
	st := r.step(e, t.inputs)
	if !ls.ensured {
		st.Loop = &Loop{ID: st.LoopID, SessionID: r.sessionID, PreviousLoopID: ls.prev, BranchedFromTurn: -1, Trigger: t.trigger, CreatedAt: t.started}
	}
	var ended time.Time
	var usage llm.Usage
	if status != TurnInProgress {
		ended, usage = stamp(e.Time), usageOf(e.Usage, t.usage)
	}
	st.InsertTurn = t.record(st.LoopID, status, e.StopReason, e.Error, usage, ended)
	for _, in := range t.inputs {
		st.Insert = append(st.Insert, tl.place(st.LoopID, t.index, KindInput, in))
	}
	return st
}

// record returns t as a stored turn with the given outcome.
func (t *turnState) record(loopID string, status TurnStatus, stop llm.StopReason, errText string, u llm.Usage, ended time.Time) *Turn {
	return &Turn{LoopID: loopID, Index: t.index, TriggeredBy: t.trigger, CorrelationID: t.corr, Status: status,
		StopReason: stop, Error: errText, Usage: u, StartedAt: t.started, EndedAt: ended}
}

// place returns m as the next part of the history tl describes, mirroring
// the loop's appendUser (agent): a user message that follows a user message is merged
// into it (as a new part holding only the blocks not already stored — the
// loop's input event carries the merged message). It advances tl.
func (tl *tail) place(loopID string, turn int, kind MessageKind, m llm.Message) Message {
	blocks := m.Content
	var seq, part int
	if m.Role == llm.RoleUser && tl.lastRole == llm.RoleUser {
		if n := len(tl.last); len(blocks) > n && sameBlocks(blocks[:n], tl.last) {
			blocks = blocks[n:]
		}
		seq, part = tl.nextSeq-1, tl.lastParts
		tl.lastParts++
		tl.last = append(slices.Clip(tl.last), blocks...)
	} else {
		seq, part = tl.nextSeq, 0
		tl.nextSeq++
		tl.lastRole, tl.lastParts, tl.last = m.Role, 1, slices.Clone(blocks)
	}
	return Message{LoopID: loopID, Seq: seq, Part: part, TurnIndex: turn, Kind: kind, Role: m.Role, Content: blocks}
}

// putResults adds results to st as the turn's tool_results part: a new user
// message the first time, a replacement of that part afterwards. It advances
// tl and returns the part's place.
func (tl *tail) putResults(st *Step, t *turnState, results []llm.Block) (seq, part int) {
	if t.resSeq < 0 {
		m := tl.place(st.LoopID, t.index, KindToolResults, llm.Message{Role: llm.RoleUser, Content: results})
		st.Insert = append(st.Insert, m)
		return m.Seq, m.Part
	}
	st.Replace = append(st.Replace, Message{LoopID: st.LoopID, Seq: t.resSeq, Part: t.resPart, TurnIndex: t.index,
		Kind: KindToolResults, Role: llm.RoleUser, Content: results})
	if t.resSeq == tl.nextSeq-1 && t.resPart == tl.lastParts-1 && len(tl.last) >= len(t.results) {
		// The results are the last part of the last message: keep the tail
		// in step.
		tl.last = append(slices.Clip(tl.last[:len(tl.last)-len(t.results)]), results...)
	}
	return t.resSeq, t.resPart
}

// completeResults returns one result per call, in call order, adding for the
// calls without one the is_error result agent.runTools gives a call it did not
// run; added reports whether any was added. Results answering no call are
// kept, at the end.
func completeResults(calls, results []llm.Block, stop llm.StopReason) (out []llm.Block, added bool) {
	byID := map[string]int{}
	for i, b := range results {
		byID[b.ID] = i
	}
	used := map[int]bool{}
	for _, c := range calls {
		if i, ok := byID[c.ID]; ok && !used[i] {
			used[i] = true
			out = append(out, results[i])
			continue
		}
		text := notRunCancelled
		if stop == llm.StopMaxTokens {
			text = notRunMaxTokens
		}
		out = append(out, llm.ToolResultBlock(c.ID, text, true))
		added = true
	}
	for i, b := range results {
		if !used[i] {
			out = append(out, b)
		}
	}
	if !added {
		return results, false
	}
	return out, true
}

// usageOf returns *a, else *b, else zero usage.
func usageOf(a, b *llm.Usage) llm.Usage {
	switch {
	case a != nil:
		return *a
	case b != nil:
		return *b
	}
	return llm.Usage{}
}

// sameBlocks reports whether a and b store as the same JSON.
func sameBlocks(a, b []llm.Block) bool {
	x, err1 := encodeBlocks(a)
	y, err2 := encodeBlocks(b)
	return err1 == nil && err2 == nil && x == y
}
