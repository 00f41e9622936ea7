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

// A response's tool calls are authorized in call order (asking the Approver
// one call at a time: StepApprove), then the approved ones run one at a
// time, in call order (StepRunTool; the resume rules rely on it: see
// Resume); each gets one tool_result. A call whose id is in settled is not
// authorized or run: its result is settled[id] as an is_error tool_result
// (a repeated tool_use id, a call a crash interrupted). Every call ends with
// a ToolExecutionEnd event carrying its result, also calls that did not run
// (denied, settled, cut at max_tokens, cancelled), so observers and the
// session recorder see every call resolved.

// startTools begins the tool phase of the turn under way for calls.
func (e *Engine) startTools(ctx context.Context, s *State, calls []llm.Block, stop llm.StopReason, settled map[string]string) Step {
	r := s.Run
	r.Calls = slices.Clone(calls) // the calls as they will run: transforms may rewrite their input
	r.Approved = make([]bool, len(calls))
	r.Outcomes = make([]string, len(calls))
	r.Results = make([]llm.Block, len(calls))
	r.Settled, r.Ended = settled, -1
	for i := range r.Calls {
		e.emit(event.Event{Kind: event.ToolInvocationProposed, CorrelationID: r.CorrelationID, Turn: ptr(r.Turn), ToolCall: &r.Calls[i]})
	}
	for i, call := range r.Calls {
		switch {
		case stop == llm.StopMaxTokens:
			r.Results[i], r.Outcomes[i] = llm.ToolResultBlock(call.ID, notRunMaxTokens, true), event.ToolNotRun
		case settled[call.ID] != "":
			r.Results[i], r.Outcomes[i] = llm.ToolResultBlock(call.ID, settled[call.ID], true), event.ToolNotRun
		}
	}
	r.Phase, r.Next = phaseAuthorize, 0
	return e.authorizeFrom(ctx, s)
}

// authorizeFrom authorizes the calls from Run.Next on, until one needs the
// Approver (StepApprove) or all are decided (then they run).
func (e *Engine) authorizeFrom(ctx context.Context, s *State) Step {
	r := s.Run
	for ; r.Next < len(r.Calls); r.Next++ {
		i := r.Next
		if r.Outcomes[i] != "" {
			continue // not run: cut at max_tokens, settled
		}
		if ctx.Err() != nil {
			r.Results[i], r.Outcomes[i] = llm.ToolResultBlock(r.Calls[i].ID, notRunCancelled, true), event.ToolCancelled
			continue
		}
		// Transforms (and observers) at tool_call pre run first, so the
		// approval and the guards judge the arguments that will execute
		// (docs/loop.md, rule 9).
		e.runNonGuards(ctx, &Payload{Stage: StageToolCall, Phase: PhasePre, CorrelationID: r.CorrelationID, Turn: ptr(r.Turn), ToolCall: &r.Calls[i]})
		by, reason, ask := e.gate(s, r.Calls[i])
		if ask {
			r.Asking = true
			return e.approvalStep(s)
		}
		e.decide(ctx, s, by, reason)
	}
	r.Phase, r.Next = phaseExecute, 0
	return e.executeFrom(ctx, s)
}

// gate runs steps 1 and 2 of the authority stack for one call
// (docs/loop.md, rule 9): the agent's allowed tools and Config.Denied
// (kiro's deny-without-asking rules, in every mode), then a driving state
// machine's Config.Authority when set (docs/workflows.md: it replaces the
// mode gate), else the approval mode. It returns who approved, or the reason for a denial, or ask when
// the Approver must answer.
func (e *Engine) gate(s *State, call llm.Block) (by, reason string, ask bool) {
	if e.cfg.AllowedTool != nil && !e.cfg.AllowedTool(call.Name) {
		return "", fmt.Sprintf("tool %q is not among the agent's tools", call.Name), false
	}
	if e.cfg.Denied != nil {
		if reason := e.cfg.Denied(call); reason != "" {
			return "", reason, false
		}
	}
	if e.cfg.Authority != nil {
		by, reason = e.cfg.Authority(call)
		if over := e.overCap(s); reason == "" && over != "" {
			return "", over, false
		}
		return by, reason, false
	}
	if over := e.overCap(s); over != "" {
		return "", over, false // before the mode: nobody is asked about a call that will not run
	}
	mode := func(answer string) {
		e.emit(event.Event{Kind: event.ToolCallModeInvoked, CorrelationID: s.Run.CorrelationID, Turn: ptr(s.Run.Turn), ToolCall: &call, Text: string(e.cfg.Mode) + ": " + answer})
	}
	switch {
	case e.cfg.Mode == ModeAll:
		mode("approve")
		return "mode all", "", false
	case e.cfg.Mode == ModeAllowlist && e.cfg.PreApproved != nil && e.cfg.PreApproved(call):
		mode("pre-approved")
		return "allowlist", "", false
	case s.Always[call.Name] && !e.personOnly(call):
		mode("allowed always")
		return "allowed always", "", false
	case s.Never[call.Name]:
		mode("rejected always")
		return "", fmt.Sprintf("rejected by the user (%s, earlier in this conversation)", RejectAlways), false
	case e.cfg.Approver == nil:
		mode("no approver")
		return "", fmt.Sprintf("tool %q needs approval (mode %s) and no approver is configured", call.Name, e.cfg.Mode), false
	}
	mode("ask the approver")
	return "", "", true
}

// overCap is why the call being authorized does not run when it is over
// Config.MaxCallsPerResponse or MaxSubAgentsPerResponse ("" when it may):
// its position among the response's calls, and among its use_subagent
// calls, in call order.
func (e *Engine) overCap(s *State) string {
	r := s.Run
	i := r.Next
	if n := e.cfg.MaxCallsPerResponse; n > 0 && i+1 > n {
		return fmt.Sprintf("tool call not run: this response has more than %d tool calls, the limit per response "+
			"(Options.MaxToolCallsPerResponse, config key toolCallsPerResponse); make the remaining calls in your next response", n)
	}
	if n := e.cfg.MaxSubAgentsPerResponse; n > 0 && r.Calls[i].Name == SubAgentToolName {
		subs := 0
		for _, c := range r.Calls[:i+1] {
			if c.Name == SubAgentToolName {
				subs++
			}
		}
		if subs > n {
			return fmt.Sprintf("sub-agent not started: this response has more than %d use_subagent calls, the limit per response "+
				"(Options.MaxSubAgentsPerResponse, config key subAgentsPerResponse); start the others in your next response", n)
		}
	}
	return ""
}

// personOnly reports whether call needs a person's approval of its own
// (Config.PersonOnly).
func (e *Engine) personOnly(call llm.Block) bool {
	return e.cfg.PersonOnly != nil && e.cfg.PersonOnly(call)
}

// approvalStep is the StepApprove of the call being authorized.
func (e *Engine) approvalStep(s *State) Step {
	r := s.Run
	return Step{Kind: StepApprove, CorrelationID: r.CorrelationID, Turn: r.Turn,
		Approval: &ApprovalRequest{CorrelationID: r.CorrelationID, Turn: r.Turn, Call: r.Calls[r.Next], Index: r.Next}}
}

// Approved takes the answer to the StepApprove under way (an error counts
// as a rejection whose reason is its text) and goes on authorizing.
func (e *Engine) Approved(ctx context.Context, s *State, d Decision, err error) Step {
	r := s.Run
	if r == nil || r.Phase != phaseAuthorize || !r.Asking {
		return Step{Kind: StepDone, Err: fmt.Errorf("agent: Approved called with no approval under way")}
	}
	r.Asking = false
	call := r.Calls[r.Next]
	name := call.Name
	var by, reason string
	switch {
	case err != nil:
		reason = fmt.Sprintf("approval failed: %v", err)
	case d == AllowOnce || (d == AllowAlways && e.personOnly(call)): // always never covers a person-only call
		by = "user: allow once"
	case d == AllowAlways:
		if s.Always == nil {
			s.Always = map[string]bool{}
		}
		s.Always[name] = true
		by = "user: allow always"
	default:
		if d == RejectAlways {
			if s.Never == nil {
				s.Never = map[string]bool{}
			}
			s.Never[name] = true
		}
		reason = fmt.Sprintf("rejected by the user (%s)", d)
	}
	e.decide(ctx, s, by, reason)
	r.Next++
	return e.authorizeFrom(ctx, s)
}

// decide finishes authorizing the call at Run.Next: the guard hooks at
// tool_call pre (step 3; any deny wins) for a call the gate approved, then
// the ToolCallApproved or ToolCallDenied event.
func (e *Engine) decide(ctx context.Context, s *State, by, reason string) {
	r := s.Run
	i := r.Next
	if reason == "" {
		p := &Payload{Stage: StageToolCall, Phase: PhasePre, CorrelationID: r.CorrelationID, Turn: ptr(r.Turn), ToolCall: &r.Calls[i]}
		if err := e.guards(ctx, p); err != nil {
			reason = err.Error()
		}
	}
	if reason == "" {
		r.Approved[i] = true
		e.emit(event.Event{Kind: event.ToolCallApproved, CorrelationID: r.CorrelationID, Turn: ptr(r.Turn), ToolCall: &r.Calls[i], Text: by})
		return
	}
	e.emit(event.Event{Kind: event.ToolCallDenied, CorrelationID: r.CorrelationID, Turn: ptr(r.Turn), ToolCall: &r.Calls[i], Text: reason})
	r.Results[i], r.Outcomes[i] = llm.ToolResultBlock(r.Calls[i].ID, "tool call denied: "+reason, true), event.ToolDenied
}

// executeFrom runs the calls from Run.Next on: an approved call is handed
// to the driver (StepRunTool, after its ToolExecutionStart), the others end
// with their result; after the last the turn finishes.
func (e *Engine) executeFrom(ctx context.Context, s *State) Step {
	r := s.Run
	for ; r.Next < len(r.Calls); r.Next++ {
		i := r.Next
		if r.Approved[i] {
			e.emit(event.Event{Kind: event.ToolExecutionStart, CorrelationID: r.CorrelationID, Turn: ptr(r.Turn), ToolCall: &r.Calls[i]})
			return e.Next(s)
		}
		e.emit(event.Event{Kind: event.ToolExecutionEnd, CorrelationID: r.CorrelationID, Turn: ptr(r.Turn), ToolCall: &r.Calls[i], ToolResult: &r.Results[i], Outcome: r.Outcomes[i]})
	}
	return e.finishTurn(ctx, s)
}

// ToolDone takes the outcome of the StepRunTool under way: the tool_call
// post transforms may change the result, ToolExecutionEnd is emitted, and
// the next call runs.
func (e *Engine) ToolDone(ctx context.Context, s *State, out ToolOutput) Step {
	r := s.Run
	if r == nil || r.Phase != phaseExecute {
		return Step{Kind: StepDone, Err: fmt.Errorf("agent: ToolDone called with no tool call under way")}
	}
	i := r.Next
	call := r.Calls[i]
	result := out.Result
	result.ID = call.ID
	e.runNonGuards(ctx, &Payload{Stage: StageToolCall, Phase: PhasePost, CorrelationID: r.CorrelationID, Turn: ptr(r.Turn), ToolCall: &call, ToolResult: &result})
	o := event.ToolSucceeded
	switch {
	case ctx.Err() != nil:
		o = event.ToolCancelled
	case result.IsError:
		o = event.ToolFailed
	}
	r.Results[i] = result
	if !result.IsError && r.Ended < 0 && e.cfg.Tools.Traits(call.Name).EndsTurn {
		r.Ended = i
	}
	e.emit(event.Event{Kind: event.ToolExecutionEnd, CorrelationID: r.CorrelationID, Turn: ptr(r.Turn), ToolCall: &call, ToolResult: &result, ChildLoopID: out.ChildLoopID, Outcome: o})
	r.Next++
	return e.executeFrom(ctx, s)
}

// RunTool runs the call of a StepRunTool in this process, through the
// Config's tool registry and environment (its progress reported as
// ToolExecutionUpdate events), and returns what ToolDone takes. Drivers
// that run tools elsewhere (a durable worker) do the same there.
func (e *Engine) RunTool(ctx context.Context, st Step) ToolOutput {
	call := *st.Call
	env := *e.cfg.Env
	env.CallID = call.ID
	env.Progress = func(msg string) {
		e.emit(event.Event{Kind: event.ToolExecutionUpdate, CorrelationID: st.CorrelationID, Turn: &st.Turn, ToolCall: &call, Text: msg})
	}
	slot := &childSlot{}
	result := e.cfg.Tools.Execute(context.WithValue(ctx, childKey{}, slot), &env, call)
	return ToolOutput{Result: result, ChildLoopID: slot.get()}
}

// guards runs only the guard hooks of p's stage and phase.
func (e *Engine) guards(ctx context.Context, p *Payload) error {
	for _, h := range e.cfg.Hooks {
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

// runNonGuards runs the transform and observer hooks of p's stage and phase
// (at tool_call pre they run before the gate, whose guards then see the
// transformed call; a guard at tool_call post cannot undo a call that ran
// and is ignored).
func (e *Engine) runNonGuards(ctx context.Context, p *Payload) {
	for _, h := range e.cfg.Hooks {
		if h.Kind == HookGuard || h.Stage != p.Stage || h.Phase != p.Phase {
			continue
		}
		if _, err := h.Func(ctx, p); err != nil {
			e.emit(event.Event{Kind: event.Progress, CorrelationID: p.CorrelationID, Turn: p.Turn,
				Text: fmt.Sprintf("hook %s (%s %s %s) failed: %v", h.Name, h.Kind, p.Stage, p.Phase, err)})
		}
	}
}

// childKey carries a slot for the child loop id a sub-agent tool sets.
type childKey struct{}

type childSlot struct {
	mu sync.Mutex
	id string
}

func (s *childSlot) get() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
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
