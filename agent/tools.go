package agent

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// Texts of the tool_results the loop gives calls it does not run. They match
// what session.Recorder stores for calls without a tool_execution_end.
const (
	notRunMaxTokens = "tool call not executed: the model's response was cut off at max_tokens"
	notRunCancelled = "tool call not executed: cancelled"
)

// runTools authorizes calls in call order (asking the Approver one call at a
// time), then executes the approved ones one at a time, in call order (the
// resume rules rely on it: see Resume); it returns one tool_result per
// call. A call whose id is in settled is not authorized or run: its result
// is settled[id] as an is_error tool_result (a repeated tool_use id, a call
// a crash interrupted). Every call ends with a ToolExecutionEnd event
// carrying its result, also calls that did not run (denied, settled, cut at
// max_tokens, cancelled), so observers and the session recorder see every
// call resolved.
func (a *Agent) runTools(ctx context.Context, corr string, id event.TurnID, calls []llm.Block, stop llm.StopReason, settled map[string]string) []llm.Block {
	out := make([]llm.Block, len(calls))
	approved := make([]bool, len(calls))
	calls = slices.Clone(calls) // the calls as they will run: transforms may rewrite their input
	for i := range calls {
		a.emit(event.Event{Kind: event.ToolInvocationProposed, CorrelationID: corr, Turn: &id, ToolCall: &calls[i]})
	}
	outcomes := make([]string, len(calls))
	for i, call := range calls {
		switch {
		case stop == llm.StopMaxTokens:
			out[i], outcomes[i] = llm.ToolResultBlock(call.ID, notRunMaxTokens, true), event.ToolNotRun
		case settled[call.ID] != "":
			out[i], outcomes[i] = llm.ToolResultBlock(call.ID, settled[call.ID], true), event.ToolNotRun
		case ctx.Err() != nil:
			out[i], outcomes[i] = llm.ToolResultBlock(call.ID, notRunCancelled, true), event.ToolCancelled
		default:
			// Transforms (and observers) at tool_call pre run first, so the
			// approval and the guards judge the arguments that will execute
			// (docs/loop.md, rule 9).
			a.runNonGuards(ctx, &Payload{Stage: StageToolCall, Phase: PhasePre, CorrelationID: corr, Turn: &id, ToolCall: &calls[i]})
			ok, by, reason := a.authorize(ctx, corr, id, i, calls[i])
			if ok {
				approved[i] = true
				a.emit(event.Event{Kind: event.ToolCallApproved, CorrelationID: corr, Turn: &id, ToolCall: &calls[i], Text: by})
				continue
			}
			a.emit(event.Event{Kind: event.ToolCallDenied, CorrelationID: corr, Turn: &id, ToolCall: &calls[i], Text: reason})
			out[i], outcomes[i] = llm.ToolResultBlock(call.ID, "tool call denied: "+reason, true), event.ToolDenied
		}
	}
	for i := range calls {
		if approved[i] {
			out[i] = a.execute(ctx, corr, id, calls[i])
			continue
		}
		a.emit(event.Event{Kind: event.ToolExecutionEnd, CorrelationID: corr, Turn: &id, ToolCall: &calls[i], ToolResult: &out[i], Outcome: outcomes[i]})
	}
	return out
}

// authorize runs the authority stack for one call (docs/loop.md, rule 9): (1) the agent's
// allowed tools and Config.Denied, (2) the approval mode, (3) guard hooks at tool_call pre —
// any deny wins. It returns who approved, or the reason for the denial.
func (a *Agent) authorize(ctx context.Context, corr string, id event.TurnID, index int, call llm.Block) (ok bool, by, reason string) {
	if a.cfg.AllowedTool != nil && !a.cfg.AllowedTool(call.Name) {
		return false, "", fmt.Sprintf("tool %q is not among the agent's tools", call.Name)
	}
	if a.cfg.Denied != nil {
		if reason := a.cfg.Denied(call); reason != "" {
			return false, "", reason
		}
	}
	gate := func(answer string) {
		a.emit(event.Event{Kind: event.ToolCallModeInvoked, CorrelationID: corr, Turn: &id, ToolCall: &call, Text: string(a.cfg.Mode) + ": " + answer})
	}
	switch {
	case a.cfg.Mode == ModeAll:
		by = "mode all"
		gate("approve")
	case a.cfg.Mode == ModeAllowlist && a.cfg.PreApproved != nil && a.cfg.PreApproved(call):
		by = "allowlist"
		gate("pre-approved")
	case a.always[call.Name]:
		by = "allowed always"
		gate("allowed always")
	case a.cfg.Approver == nil:
		gate("no approver")
		return false, "", fmt.Sprintf("tool %q needs approval (mode %s) and no approver is configured", call.Name, a.cfg.Mode)
	default:
		gate("ask the approver")
		d, err := a.cfg.Approver.Approve(ctx, ApprovalRequest{CorrelationID: corr, Turn: id, Call: call, Index: index})
		if err != nil {
			return false, "", fmt.Sprintf("approval failed: %v", err)
		}
		switch d {
		case AllowOnce:
			by = "user: allow once"
		case AllowAlways:
			a.always[call.Name] = true
			by = "user: allow always"
		default:
			return false, "", fmt.Sprintf("rejected by the user (%s)", d)
		}
	}
	p := &Payload{Stage: StageToolCall, Phase: PhasePre, CorrelationID: corr, Turn: &id, ToolCall: &call}
	if err := a.guards(ctx, p); err != nil {
		return false, "", err.Error()
	}
	return true, by, ""
}

// guards runs only the guard hooks of p's stage and phase.
func (a *Agent) guards(ctx context.Context, p *Payload) error {
	for _, h := range a.cfg.Hooks {
		if h.Kind != HookGuard || h.Stage != p.Stage || h.Phase != p.Phase {
			continue
		}
		v, err := h.Func(ctx, p)
		if err != nil && v.Reason == "" {
			v.Reason = err.Error()
		}
		if v.Deny || err != nil {
			return fmt.Errorf("denied by hook %s: %s", h.Name, v.Reason)
		}
	}
	return nil
}

// childKey carries a slot for the child loop id a sub-agent tool sets.
type childKey struct{}

type childSlot struct {
	mu sync.Mutex
	id string
}

// setChildLoop records the child loop id of the running tool call (see
// SubAgentTool); it is a no-op outside a loop's tool call.
func setChildLoop(ctx context.Context, id string) {
	if s, ok := ctx.Value(childKey{}).(*childSlot); ok {
		s.mu.Lock()
		s.id = id
		s.mu.Unlock()
	}
}

// execute runs one approved call (its tool_call pre transforms already ran in
// runTools): the tool runs, transform hooks at tool_call post may change the
// result; ToolExecutionStart/Update/End are emitted around it.
func (a *Agent) execute(ctx context.Context, corr string, id event.TurnID, call llm.Block) llm.Block {
	a.emit(event.Event{Kind: event.ToolExecutionStart, CorrelationID: corr, Turn: &id, ToolCall: &call})
	env := *a.cfg.Env
	env.CallID = call.ID
	env.Progress = func(msg string) {
		a.emit(event.Event{Kind: event.ToolExecutionUpdate, CorrelationID: corr, Turn: &id, ToolCall: &call, Text: msg})
	}
	slot := &childSlot{}
	result := a.cfg.Tools.Execute(context.WithValue(ctx, childKey{}, slot), &env, call)
	post := &Payload{Stage: StageToolCall, Phase: PhasePost, CorrelationID: corr, Turn: &id, ToolCall: &call, ToolResult: &result}
	a.runNonGuards(ctx, post)
	o := event.ToolSucceeded
	switch {
	case ctx.Err() != nil:
		o = event.ToolCancelled
	case result.IsError:
		o = event.ToolFailed
	}
	a.emit(event.Event{Kind: event.ToolExecutionEnd, CorrelationID: corr, Turn: &id, ToolCall: &call, ToolResult: &result, ChildLoopID: slot.id, Outcome: o})
	return result
}

// runNonGuards runs the transform and observer hooks of p's stage and phase
// (at tool_call pre they run before authorize, whose guards then see the
// transformed call; a guard at tool_call post cannot undo a call that ran and
// is ignored).
func (a *Agent) runNonGuards(ctx context.Context, p *Payload) {
	for _, h := range a.cfg.Hooks {
		if h.Kind == HookGuard || h.Stage != p.Stage || h.Phase != p.Phase {
			continue
		}
		if _, err := h.Func(ctx, p); err != nil {
			a.emit(event.Event{Kind: event.Progress, CorrelationID: p.CorrelationID, Turn: p.Turn,
				Text: fmt.Sprintf("hook %s (%s %s %s) failed: %v", h.Name, h.Kind, p.Stage, p.Phase, err)})
		}
	}
}
