package agent

import (
	"context"
	"fmt"
	"slices"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// ResumeOptions say what Resume does with the tool calls a crash cut off.
// The zero value gives at-most-once delivery: no call that may have run runs
// again.
type ResumeOptions struct {
	// RerunInterrupted runs every pending call again through the authority
	// stack, the one that may have been running at the crash included
	// (at-least-once: its side effects may happen twice). For a user who
	// checked, or who knows the call is safe to repeat.
	RerunInterrupted bool
	// ReadOnly reports whether a call only reads (its tool changes nothing,
	// so running it twice is harmless); such calls run again on resume even
	// without RerunInterrupted. nil counts every call as side-effecting;
	// Agent.Retryable asks the tools' own tool.Traits. It is called from
	// Resume's goroutine.
	ReadOnly func(call llm.Block) bool
}

// Texts of the tool_results Resume gives the calls it does not run again.
const (
	interruptedText = "tool call interrupted: strata stopped (it crashed or was killed) while this %s call was running or about to start, " +
		"so it may have run partly or completely; its output and exit status were lost%s. It was not run again when the session was resumed. " +
		"Check its effects before calling it again."
	notStartedText = "tool call not executed: it had not started when strata stopped (crashed or was killed) during the earlier call %s (%s) " +
		"of this response, which was not run again; as this call may depend on that one, it was not run either. Call it again if it is still needed."
)

// Resume finishes a loop a crash cut off: it resolves pending — the tool
// calls of turn turnIndex's assistant message that have no result yet (see
// session.Store.Pending), in call order — ends that turn, and continues the
// loop until the model stops. Calls that completed before the crash are
// never run again. With no pending calls it only continues when the history
// ends in tool results (the model has not answered them yet); it returns
// (nil, nil) when there is nothing to do. It fails like Prompt, ErrBusy
// included.
//
// Which pending calls run (the delivery guarantee of the package doc): the
// loop runs a response's calls one at a time in call order, so only the
// first pending call can have started. Unless o.RerunInterrupted is set:
//
//   - the first pending call, when it is not read-only (o.ReadOnly), is not
//     run again: its tool_result is an is_error result saying it was
//     interrupted and may have partly run (at-most-once);
//   - the later pending calls never started; after such an interrupted call
//     the side-effecting ones are not run either (the model may have meant
//     them to follow it) and get an is_error result saying so;
//   - read-only calls run again, and when the first pending call was
//     read-only every pending call runs, as if nothing had happened;
//   - a call that repeated an earlier tool_use id of the response is never
//     run (see Prompt).
//
// Every call that runs passes the authority stack again; every call ends
// with a ToolExecutionEnd event, as in a turn.
func (a *Agent) Resume(ctx context.Context, turnIndex int, pending []llm.Block, o ResumeOptions) (*Result, error) {
	if !a.busy.CompareAndSwap(false, true) {
		return nil, ErrBusy
	}
	defer a.busy.Store(false)
	return a.drive(ctx, a.eng.StartResume(ctx, a.st, turnIndex, pending, o))
}

// Retryable reports whether call's tool says a call may run again
// (tool.Traits.Retryable: it only reads, or is idempotent): the
// ResumeOptions.ReadOnly of a runtime that trusts its tools' traits.
func (a *Agent) Retryable(call llm.Block) bool { return a.eng.cfg.Tools.Traits(call.Name).Retryable() }

// StartResume is Agent.Resume as a step: it begins finishing the loop of s
// a crash cut off (see Agent.Resume for which pending calls run) and
// returns the first step; StepDone with a nil Result and error when there
// is nothing to do.
func (e *Engine) StartResume(ctx context.Context, s *State, turnIndex int, pending []llm.Block, o ResumeOptions) Step {
	if s.Run != nil && s.Run.Phase != phaseDone {
		return Step{Kind: StepDone, Err: ErrBusy}
	}
	s.Fresh = false // Resume finishes the current loop
	n := len(s.History)
	needsCall := n > 0 && s.History[n-1].Role == llm.RoleUser
	if len(pending) == 0 && !needsCall {
		return Step{Kind: StepDone}
	}
	r := &Run{CorrelationID: e.cfg.NewID(), Trigger: event.TriggerContinuation}
	s.Run = r
	e.emit(event.Event{Kind: event.SessionTurnStart, CorrelationID: r.CorrelationID, Text: "[resume]"})
	if len(pending) > 0 {
		r.Turn, r.Resuming = event.TurnID{LoopID: s.LoopID, Index: turnIndex}, true
		e.enter(s, StageToolCall, &r.Turn)
		return e.startTools(ctx, s, pending, llm.StopToolUse, notRerun(s.History, pending, o))
	}
	e.inbox.Taking(true)
	return e.top(ctx, s)
}

// notRerun returns the is_error results, by call id, of the pending calls
// Resume must not run (see Resume).
func notRerun(history []llm.Message, pending []llm.Block, o ResumeOptions) map[string]string {
	var calls []llm.Block // the tool_use blocks of the message the pending calls belong to
	settled := map[string]string{}
	for i := len(history) - 1; i >= 0; i-- {
		if m := history[i]; m.Role == llm.RoleAssistant {
			m.Content = slices.Clone(m.Content) // dedupeToolUses renames in place; the history stays as stored
			settled = dedupeToolUses(&m)
			calls = m.ToolUses()
			break
		}
	}
	if settled == nil {
		settled = map[string]string{}
	}
	if o.RerunInterrupted {
		return settled
	}
	var cut *llm.Block
	for i, c := range pending {
		switch {
		case settled[c.ID] != "" || (o.ReadOnly != nil && o.ReadOnly(c)):
		case i == 0:
			cut = &pending[0]
			settled[c.ID] = fmt.Sprintf(interruptedText, c.Name, position(c.ID, calls))
		case cut != nil:
			settled[c.ID] = fmt.Sprintf(notStartedText, cut.ID, cut.Name)
		}
	}
	return settled
}

// position says where call id is among the response's calls, and that the
// ones before it completed ("" when id is not among them).
func position(id string, calls []llm.Block) string {
	i := slices.IndexFunc(calls, func(c llm.Block) bool { return c.ID == id })
	switch {
	case i < 0:
		return ""
	case i == 0:
		return fmt.Sprintf(" (it was call 1 of %d in the response)", len(calls))
	}
	return fmt.Sprintf(" (it was call %d of %d in the response; the %d before it had their results)", i+1, len(calls), i)
}

// Continue returns an agent with cfg (another agent's configuration: an
// agent swap, docs/turn.md) continuing a's conversation exactly where it
// stands in memory: the same loop id, history, next turn index, previous
// loop, conversation id (cfg.ConversationID is replaced), usage, trigger of
// the next first turn, and queued steering and follow-up messages (moved:
// a keeps none). The history is replayed through cfg's layout, as Restore
// does. Nothing is read from a store, so a conversation whose current loop
// has run no turn yet — a prompt that stopped before its first model call
// leaves its user message in the history and no turn recorded — continues
// with that message, as a would have. Tools the user allowed "always" are
// not carried over: they were the old configuration's. It returns ErrBusy
// while a prompt runs on a, and fails like Restore.
func (a *Agent) Continue(cfg Config) (*Agent, error) {
	if !a.busy.CompareAndSwap(false, true) {
		return nil, ErrBusy
	}
	defer a.busy.Store(false)
	cfg.ConversationID = a.st.ConversationID
	b, err := Restore(cfg, a.st.LoopID, a.st.History, a.st.Turns)
	if err != nil {
		return nil, err
	}
	b.st.PreviousLoopID, b.st.Usage, b.st.FirstTrigger = a.st.PreviousLoopID, a.st.Usage, a.st.FirstTrigger
	b.st.TLDR = b.st.TLDR.Add(a.st.TLDR)
	b.syncUsage()
	a.queue.move(&b.queue)
	return b, nil
}
