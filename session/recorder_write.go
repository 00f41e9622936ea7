package session

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// The results agent.runTools gives tool calls it does not run; the Recorder
// stores the same ones, since no tool_execution_end event carries them.
const (
	notRunMaxTokens = "tool call not executed: the model's response was cut off at max_tokens"
	notRunCancelled = "tool call not executed: cancelled"
)

// writeModelStep commits step 1: the turn row (in progress), the turn's input
// messages and its assistant message.
func (r *Recorder) writeModelStep(ctx context.Context, ls *loopState, e event.Event) error {
	t := ls.turn
	loopID := e.Turn.LoopID
	tx, err := r.store.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("turn %d of loop %s: %w", t.index, loopID, err)
	}
	defer tx.Rollback()
	tl := ls.tail
	if err := r.openTurn(ctx, tx, ls, &tl, loopID, e, TurnInProgress); err != nil {
		return err
	}
	if _, _, err := insertPart(ctx, tx, &tl, loopID, t.index, KindOutput, *e.Message); err != nil {
		return fmt.Errorf("turn %d of loop %s: assistant message: %w", t.index, loopID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("turn %d of loop %s: commit: %w", t.index, loopID, err)
	}
	ls.tail, ls.ensured = tl, true
	t.written, t.inputs, t.stop = true, nil, e.StopReason
	t.calls = slices.Clone(e.Message.ToolUses())
	return nil
}

// writeToolResult commits step 2: one tool result, appended to the turn's
// tool_results message.
func (r *Recorder) writeToolResult(ctx context.Context, ls *loopState, e event.Event) error {
	t := ls.turn
	loopID := e.Turn.LoopID
	if e.ToolResult == nil {
		return fmt.Errorf("turn %d of loop %s: tool_execution_end carries no result", t.index, loopID)
	}
	if !t.written {
		return fmt.Errorf("turn %d of loop %s: tool result before the assistant message was recorded", t.index, loopID)
	}
	results := append(slices.Clone(t.results), *e.ToolResult)
	tx, err := r.store.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("turn %d of loop %s: %w", t.index, loopID, err)
	}
	defer tx.Rollback()
	if err := r.touch(ctx, tx, e, nil); err != nil {
		return err
	}
	tl := ls.tail
	seq, part, err := putResults(ctx, tx, &tl, loopID, t, results)
	if err != nil {
		return err
	}
	if t.usage != nil {
		if err := setTurn(ctx, tx, loopID, t.index, TurnInProgress, t.stop, "", *t.usage, 0); err != nil {
			return err
		}
	}
	if e.ChildLoopID != "" {
		if _, err := tx.ExecContext(ctx, `UPDATE loops SET parent_loop_id = ? WHERE id = ? AND session_id = ? AND parent_loop_id IS NULL`,
			loopID, e.ChildLoopID, r.sessionID); err != nil {
			return fmt.Errorf("turn %d of loop %s: child loop %s: %w", t.index, loopID, e.ChildLoopID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("turn %d of loop %s: commit: %w", t.index, loopID, err)
	}
	ls.tail = tl
	t.resSeq, t.resPart, t.results = seq, part, results
	return nil
}

// writeCompleted commits step 3 of a successful turn: results the loop made up
// for calls it did not run, then the turn's status, stop reason, usage and end
// time.
func (r *Recorder) writeCompleted(ctx context.Context, ls *loopState, e event.Event) error {
	t := ls.turn
	loopID := e.Turn.LoopID
	stop := e.StopReason
	if stop == "" {
		stop = t.stop
	}
	usage := usageOf(e.Usage, t.usage)
	tx, err := r.store.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("turn %d of loop %s: %w", t.index, loopID, err)
	}
	defer tx.Rollback()
	tl := ls.tail
	if !t.written {
		// A turn that ended without a model call (not something agent.Agent
		// does): keep its input.
		if err := r.openTurn(ctx, tx, ls, &tl, loopID, e, TurnCompleted); err != nil {
			return err
		}
	} else if err := r.touch(ctx, tx, e, nil); err != nil {
		return err
	}
	results, added := completeResults(t.calls, t.results, stop)
	seq, part := t.resSeq, t.resPart
	if added {
		if seq, part, err = putResults(ctx, tx, &tl, loopID, t, results); err != nil {
			return err
		}
	}
	if err := setTurn(ctx, tx, loopID, t.index, TurnCompleted, stop, "", usage, ms(stamp(e.Time))); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("turn %d of loop %s: commit: %w", t.index, loopID, err)
	}
	ls.tail, ls.ensured = tl, true
	t.resSeq, t.resPart, t.results = seq, part, results
	ls.turn = nil
	return nil
}

// writeFailed commits step 3 of a failed turn: the turn row (failed) and its
// input messages, and no assistant message or tool result — anything of the
// turn's output already committed is deleted, as the loop drops it too.
func (r *Recorder) writeFailed(ctx context.Context, ls *loopState, e event.Event) error {
	t := ls.turn
	loopID := e.Turn.LoopID
	tx, err := r.store.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("turn %d of loop %s: %w", t.index, loopID, err)
	}
	defer tx.Rollback()
	tl := ls.tail
	if !t.written {
		if err := r.openTurn(ctx, tx, ls, &tl, loopID, e, TurnFailed); err != nil {
			return err
		}
	} else {
		if err := r.touch(ctx, tx, e, nil); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE loop_id = ? AND turn_index = ? AND kind IN ('output', 'tool_results')`,
			loopID, t.index); err != nil {
			return fmt.Errorf("turn %d of loop %s: drop output: %w", t.index, loopID, err)
		}
		if err := setTurn(ctx, tx, loopID, t.index, TurnFailed, e.StopReason, e.Error, usageOf(e.Usage, t.usage), ms(stamp(e.Time))); err != nil {
			return err
		}
		if err := tl.load(ctx, tx, loopID); err != nil {
			return fmt.Errorf("turn %d of loop %s: %w", t.index, loopID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("turn %d of loop %s: commit: %w", t.index, loopID, err)
	}
	ls.tail, ls.ensured = tl, true
	ls.turn = nil
	return nil
}

// openTurn writes, inside tx, what every first write of a turn needs: the
// session's update time (and title), the loop row, the turn row with status
// (ended when status is not in progress) and the buffered input messages.
func (r *Recorder) openTurn(ctx context.Context, tx *sql.Tx, ls *loopState, tl *tail, loopID string, e event.Event, status TurnStatus) error {
	t := ls.turn
	if err := r.touch(ctx, tx, e, t.inputs); err != nil {
		return err
	}
	if !ls.ensured {
		if _, err := tx.ExecContext(ctx, `INSERT INTO loops (id, session_id, trigger, created_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (id) DO NOTHING`, loopID, r.sessionID, string(t.trigger), ms(t.started)); err != nil {
			return fmt.Errorf("loop %s: %w", loopID, err)
		}
		var owner string
		if err := tx.QueryRowContext(ctx, `SELECT session_id FROM loops WHERE id = ?`, loopID).Scan(&owner); err != nil {
			return fmt.Errorf("loop %s: %w", loopID, err)
		}
		if owner != r.sessionID {
			return fmt.Errorf("loop %s belongs to session %s", loopID, owner)
		}
	}
	var ended int64
	var usage llm.Usage
	if status != TurnInProgress {
		ended, usage = ms(stamp(e.Time)), usageOf(e.Usage, t.usage)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO turns (loop_id, turn_index, triggered_by, correlation_id, status, stop_reason, error,
		input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, total_tokens, started_at, ended_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		loopID, t.index, string(t.trigger), t.corr, string(status), string(e.StopReason), e.Error,
		usage.Input, usage.Output, usage.Reasoning, usage.CacheRead, usage.CacheWrite, usage.Total, ms(t.started), ended)
	if err != nil {
		return fmt.Errorf("turn %d of loop %s (already recorded?): %w", t.index, loopID, err)
	}
	for _, in := range t.inputs {
		if _, _, err := insertPart(ctx, tx, tl, loopID, t.index, KindInput, in); err != nil {
			return fmt.Errorf("turn %d of loop %s: input message: %w", t.index, loopID, err)
		}
	}
	return nil
}

// touch bumps the session's updated_at to the event's time and, while the
// session has no title, sets it from the latest prompt (or the first text of
// inputs). It fails when the session does not exist.
func (r *Recorder) touch(ctx context.Context, tx *sql.Tx, e event.Event, inputs []llm.Message) error {
	title := r.title
	for i := 0; title == "" && i < len(inputs); i++ {
		title = firstLine(inputs[i].Text())
	}
	res, err := tx.ExecContext(ctx, `UPDATE sessions SET updated_at = max(updated_at, ?),
		title = CASE WHEN title = '' THEN ? ELSE title END WHERE id = ?`, ms(stamp(e.Time)), title, r.sessionID)
	if err != nil {
		return fmt.Errorf("session %s: %w", r.sessionID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("session %s: %w", r.sessionID, ErrNotFound)
	}
	return nil
}

// insertPart stores m at the end of the history described by tl, mirroring
// agent.Agent.appendUser: a user message that follows a user message is merged
// into it (as a new part holding only the blocks not already stored — the
// loop's input event carries the merged message). It advances tl.
func insertPart(ctx context.Context, tx *sql.Tx, tl *tail, loopID string, turn int, kind MessageKind, m llm.Message) (seq, part int, err error) {
	blocks := m.Content
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
	content, err := encodeBlocks(blocks)
	if err != nil {
		return 0, 0, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO messages (loop_id, seq, part, turn_index, role, kind, content)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, loopID, seq, part, turn, string(m.Role), string(kind), content); err != nil {
		return 0, 0, fmt.Errorf("message %d.%d: %w", seq, part, err)
	}
	return seq, part, nil
}

// putResults stores results as the turn's tool_results part: a new user
// message the first time, an update of that part afterwards.
func putResults(ctx context.Context, tx *sql.Tx, tl *tail, loopID string, t *turnState, results []llm.Block) (seq, part int, err error) {
	if t.resSeq < 0 {
		seq, part, err = insertPart(ctx, tx, tl, loopID, t.index, KindToolResults, llm.Message{Role: llm.RoleUser, Content: results})
		if err != nil {
			return 0, 0, fmt.Errorf("turn %d of loop %s: tool results: %w", t.index, loopID, err)
		}
		return seq, part, nil
	}
	content, err := encodeBlocks(results)
	if err != nil {
		return 0, 0, fmt.Errorf("turn %d of loop %s: tool results: %w", t.index, loopID, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE messages SET content = ? WHERE loop_id = ? AND seq = ? AND part = ?`,
		content, loopID, t.resSeq, t.resPart); err != nil {
		return 0, 0, fmt.Errorf("turn %d of loop %s: tool results: %w", t.index, loopID, err)
	}
	if t.resSeq == tl.nextSeq-1 && t.resPart == tl.lastParts-1 && len(tl.last) >= len(t.results) {
		// The results are the last part of the last message: keep the tail
		// in step.
		tl.last = append(slices.Clip(tl.last[:len(tl.last)-len(t.results)]), results...)
	}
	return t.resSeq, t.resPart, nil
}

// setTurn updates a turn row's status, stop reason, error, usage and end time
// (0 = not ended).
func setTurn(ctx context.Context, tx *sql.Tx, loopID string, index int, status TurnStatus, stop llm.StopReason, errText string, u llm.Usage, ended int64) error {
	_, err := tx.ExecContext(ctx, `UPDATE turns SET status = ?, stop_reason = ?, error = ?, input_tokens = ?, output_tokens = ?,
		reasoning_tokens = ?, cache_read_tokens = ?, cache_write_tokens = ?, total_tokens = ?, ended_at = ?
		WHERE loop_id = ? AND turn_index = ?`,
		string(status), string(stop), errText, u.Input, u.Output, u.Reasoning, u.CacheRead, u.CacheWrite, u.Total, ended, loopID, index)
	if err != nil {
		return fmt.Errorf("turn %d of loop %s: %w", index, loopID, err)
	}
	return nil
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
