package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/tool"
)

// CompletionTool is the name of the completion channel each stage's loop
// is offered: the tool whose call hands the stage's result back and ends
// Act.
const CompletionTool = "stage_complete"

// Begun is a stage execution after Setup, the check gate and Init
// (BeginStage): what Act and Assert start from. It is plain JSON, so a
// driver can run Act elsewhere (package durable: in a Temporal workflow).
type Begun struct {
	Stage   string `json:"stage"`
	Group   string `json:"group,omitempty"`
	Attempt int    `json:"attempt"`
	// Context is the StageContext Setup populated (Assert's judge renders
	// its instructions with it).
	Context StageContext `json:"context"`
	// System is the rendered body (Act's system prompt), Prompt the
	// rendered prompt, TurnCap Act's continuation limit in rounds.
	System  string `json:"system,omitempty"`
	Prompt  string `json:"prompt,omitempty"`
	TurnCap int    `json:"turn_cap,omitempty"`
	// Exit is set when the check gate blocked the stage: Exit ran with
	// outcome fail, and Act and Assert do not run.
	Exit *Exited `json:"exit,omitempty"`
	// Events are the audit events the steps emitted (BeginStage only).
	Events []Event `json:"events,omitempty"`
}

// Acted is what Act hands to Assert: the completion tool's input (nil when
// it did not run), whether the turn cap ended Act, and the stage-local
// transcript (the fork's history).
type Acted struct {
	Completion json.RawMessage `json:"completion,omitempty"`
	CapHit     bool            `json:"cap_hit,omitempty"`
	Transcript []llm.Message   `json:"transcript,omitempty"`
}

// Exited is a stage execution after its Exit: the outcome and the state
// with the stage's slot, attempt count and retries written.
type Exited struct {
	Outcome string `json:"outcome"`
	State   *State `json:"state"`
}

// stage runs one stage execution: Setup, the check gate, Init, Act,
// Assert and Exit (docs/workflows.md, "lifecycle"). It returns the
// outcome; an error means the execution was cancelled (strict
// cancellation, an interrupt) or could not run, and Exit did not run.
func (r *runner) stage(ctx context.Context, s *Stage, group string) (string, error) {
	b, err := r.begin(ctx, s, group)
	if err != nil || b.Exit != nil {
		return outcomeOf(b), err
	}
	a, err := r.act(ctx, s, b)
	if err != nil {
		if ctx.Err() != nil {
			return r.cancelled(ctx, s, group, b.Attempt, err)
		}
		return "", fmt.Errorf("workflow %s: stage %s: %w", r.def.Name, s.Name, err)
	}
	return r.finish(ctx, s, group, b, a)
}

func outcomeOf(b *Begun) string {
	if b == nil || b.Exit == nil {
		return ""
	}
	return b.Exit.Outcome
}

// cancelled emits StageCancelled for an execution that stops before Exit
// and returns err.
func (r *runner) cancelled(ctx context.Context, s *Stage, group string, attempt int, err error) (string, error) {
	reason := err.Error()
	if c := context.Cause(ctx); c != nil {
		reason = c.Error()
	}
	r.emit(ctx, Event{Kind: StageCancelled, Stage: s.Name, Group: group, Attempt: attempt, Reason: reason})
	return "", err
}

// begin is Setup (the StageContext, StageEntered), the check gate and Init
// (the rendered body and prompt); a blocked gate runs Exit at once
// (Begun.Exit).
func (r *runner) begin(ctx context.Context, s *Stage, group string) (*Begun, error) {
	r.stMu.Lock()
	attempt := r.st.Attempts[s.Name] + 1
	feedback := r.st.Feedback
	if sl, ok := r.st.Slots[s.Name]; ok && sl.Outcome == Retry && group != "" {
		feedback = sl.Reason
	}
	inputs := maps.Clone(r.st.Inputs)
	r.stMu.Unlock()
	sc := StageContext{Workflow: r.def.Name, Stage: s.Name, Attempt: attempt, Inputs: inputs, State: r.slots(), Feedback: feedback}
	b := &Begun{Stage: s.Name, Group: group, Attempt: attempt, Context: sc}
	r.emit(ctx, Event{Kind: StageEntered, Stage: s.Name, Group: group, Attempt: attempt})
	if s.Check != nil {
		ok, why, err := r.checkGate(ctx, s, &sc)
		if err != nil {
			if ctx.Err() != nil {
				_, err = r.cancelled(ctx, s, group, attempt, err)
			}
			return nil, err
		}
		res := Passed
		if !ok {
			res = Blocked
		}
		r.emit(ctx, Event{Kind: StageCheckGateResult, Stage: s.Name, Group: group, Attempt: attempt, Outcome: res, Reason: why})
		if !ok {
			o := r.exit(ctx, s, group, attempt, Slot{Outcome: Fail, Attempt: attempt, Reason: "check gate: " + why})
			b.Exit = &Exited{Outcome: o, State: r.st}
			return b, nil
		}
	}
	// Init: render the body (the system prompt) and the prompt.
	var err error
	if b.System, err = render(s.body, &sc); err != nil {
		return nil, fmt.Errorf("workflow %s: stage %s: %w", r.def.Name, s.Name, err)
	}
	if b.Prompt, err = render(s.prompt, &sc); err != nil {
		return nil, fmt.Errorf("workflow %s: stage %s: %w", r.def.Name, s.Name, err)
	}
	if b.Prompt == "" {
		b.Prompt = fmt.Sprintf("Carry out stage %q as your instructions say. When it is done, call %s with its result.", s.Name, CompletionTool)
		if feedback != "" {
			b.Prompt += fmt.Sprintf("\n\nThis is attempt %d; the last one did not pass:\n%s", attempt, feedback)
		}
	}
	b.TurnCap = s.TurnCap
	if b.TurnCap == 0 {
		b.TurnCap = DefaultTurnCap
	}
	return b, nil
}

// finish is Assert on what Act handed back, StageAssertOutcome, and Exit;
// a cancellation between Assert and Exit leaves Exit out.
func (r *runner) finish(ctx context.Context, s *Stage, group string, b *Begun, a *Acted) (string, error) {
	outcome, reason, err := r.assert(ctx, s, &b.Context, a)
	if err != nil {
		if ctx.Err() != nil {
			return r.cancelled(ctx, s, group, b.Attempt, err)
		}
		return "", fmt.Errorf("workflow %s: stage %s: assert: %w", r.def.Name, s.Name, err)
	}
	r.emit(ctx, Event{Kind: StageAssertOutcome, Stage: s.Name, Group: group, Attempt: b.Attempt, Outcome: outcome, CapHit: a.CapHit,
		Reason: reason, Completion: a.Completion, Transcript: a.Transcript})
	if ctx.Err() != nil {
		// Strict cancellation between Assert and Exit: Exit does not run.
		return r.cancelled(ctx, s, group, b.Attempt, ctx.Err())
	}
	return r.exit(ctx, s, group, b.Attempt, Slot{Outcome: outcome, Attempt: b.Attempt, CapHit: a.CapHit, Completion: a.Completion, Reason: reason}), nil
}

// exit is Exit: the stage's state slot is written (saved by the caller
// together with the SM's next step) and StageExited emitted.
func (r *runner) exit(ctx context.Context, s *Stage, group string, attempt int, slot Slot) string {
	r.stMu.Lock()
	r.st.Slots[s.Name] = slot
	r.st.Attempts[s.Name] = attempt
	r.stMu.Unlock()
	r.emit(ctx, Event{Kind: StageExited, Stage: s.Name, Group: group, Attempt: attempt, Outcome: slot.Outcome, CapHit: slot.CapHit, Completion: slot.Completion, Reason: slot.Reason})
	return slot.Outcome
}

// Overrides are the serialisable part of the loop settings of stage s's
// Act after b (a stage s began): the rendered body as the system prompt,
// the completion tool (onDone receives each valid call's input; nil =
// none) and the turn cap as the continuation limit. Act adds the
// authority (Authority.Decide) and its manifest hook
// (Authority.ManifestHook), which keep state and stay with the driver.
func (b *Begun) Overrides(s *Stage, onDone func(json.RawMessage)) agent.Overrides {
	system := b.System
	return agent.Overrides{System: &system, Extra: []tool.Tool{s.CompletionTool(onDone)}, MaxTurns: b.TurnCap}
}

// act runs the stage's pass of the loop on a fork of the session: the
// body as the system prompt, the tool envelope, the completion tool, the
// turn cap as the continuation limit, the SM's authority.
func (r *runner) act(ctx context.Context, s *Stage, b *Begun) (*Acted, error) {
	var mu sync.Mutex
	var completion json.RawMessage
	o := b.Overrides(s, func(in json.RawMessage) {
		mu.Lock()
		completion = in
		mu.Unlock()
	})
	auth := NewAuthority(s)
	o.Hooks = []agent.Hook{auth.ManifestHook()}
	o.Authority = r.decider(ctx, auth)
	fo := strata.ForkOptions{Overrides: o}
	if f := r.opts.OnLoopEvent; f != nil {
		fo.OnEvent = func(e event.Event) {
			r.evMu.Lock()
			defer r.evMu.Unlock()
			f(s.Name, e)
		}
	}
	r.forkMu.Lock()
	fork, err := r.sess.Fork(ctx, fo)
	r.forkMu.Unlock()
	if err != nil {
		return nil, err
	}
	defer fork.Close()
	_, err = fork.Prompt(ctx, b.Prompt)
	a := &Acted{Transcript: fork.History()}
	switch {
	case errors.Is(err, agent.ErrMaxTurns):
		// The turn cap: a normal end of Act, not a cancellation; the last
		// round's tool results are in the stage-local transcript.
		a.CapHit = true
	case err != nil:
		return nil, err
	}
	mu.Lock()
	a.Completion = completion
	mu.Unlock()
	return a, nil
}

// CompletionTool returns stage s's completion tool (named CompletionTool):
// its input schema is the stage's completion schema, enforced (an invalid
// call gets an is_error result asking again); a valid call ends Act
// (traits: idempotent, ends the turn, pre-approved) and its input goes to
// onDone (nil = nowhere). Running it does no I/O: a driver may run it in
// workflow code.
func (s *Stage) CompletionTool(onDone func(json.RawMessage)) tool.Tool {
	if onDone == nil {
		onDone = func(json.RawMessage) {}
	}
	return tool.WithTraits(&completionTool{schema: s, onDone: onDone}, tool.Traits{Effect: tool.Idempotent, EndsTurn: true, PreApproved: true})
}

// completionTool is the completion channel: its input schema is the
// stage's completion schema, enforced; a valid call ends Act.
type completionTool struct {
	schema *Stage
	onDone func(json.RawMessage)
}

func (c *completionTool) Spec() llm.ToolSpec {
	sch := c.schema.Completion
	if len(sch) == 0 {
		sch = json.RawMessage(defaultCompletion)
	}
	return llm.ToolSpec{Name: CompletionTool, Description: "Hand the stage's result back and end the stage. Call it once, when the stage's work is done.", InputSchema: sch}
}

func (c *completionTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var v any
	if err := json.Unmarshal(input, &v); err != nil {
		return tool.Result{IsError: true, Content: []llm.Block{llm.TextBlock("the input is not JSON: " + err.Error())}}, nil
	}
	if err := c.schema.completion.Validate(v); err != nil {
		return tool.Result{IsError: true, Content: []llm.Block{llm.TextBlock("the result does not match the stage's completion schema: " + err.Error() + "; call " + CompletionTool + " again with a valid result")}}, nil
	}
	c.onDone(input)
	return tool.TextResult("stage result recorded"), nil
}

// lastText returns the text of the last assistant message of msgs.
func lastText(msgs []llm.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleAssistant {
			if t := strings.TrimSpace(msgs[i].Text()); t != "" {
				return t
			}
		}
	}
	return ""
}
