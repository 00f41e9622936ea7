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

// act is what Act hands to Assert.
type act struct {
	completion json.RawMessage // nil when the completion tool did not run
	capHit     bool
	transcript []llm.Message
}

// stage runs one stage execution: Setup, the check gate, Init, Act,
// Assert and Exit (docs/workflows.md, "lifecycle"). It returns the
// outcome; an error means the execution was cancelled (strict
// cancellation, an interrupt) or could not run, and Exit did not run.
func (r *runner) stage(ctx context.Context, s *Stage, group string) (string, error) {
	// Setup: the StageContext.
	r.stMu.Lock()
	attempt := r.st.Attempts[s.Name] + 1
	feedback := r.st.Feedback
	if sl, ok := r.st.Slots[s.Name]; ok && sl.Outcome == Retry && group != "" {
		feedback = sl.Reason
	}
	inputs := maps.Clone(r.st.Inputs)
	r.stMu.Unlock()
	sc := &StageContext{Workflow: r.def.Name, Stage: s.Name, Attempt: attempt, Inputs: inputs, State: r.slots(), Feedback: feedback}
	r.emit(ctx, Event{Kind: StageEntered, Stage: s.Name, Group: group, Attempt: attempt})
	cancelled := func(err error) (string, error) {
		reason := err.Error()
		if c := context.Cause(ctx); c != nil {
			reason = c.Error()
		}
		r.emit(ctx, Event{Kind: StageCancelled, Stage: s.Name, Group: group, Attempt: attempt, Reason: reason})
		return "", err
	}
	// The check gate.
	if s.Check != nil {
		ok, why, err := r.checkGate(ctx, s, sc)
		if err != nil {
			if ctx.Err() != nil {
				return cancelled(err)
			}
			return "", err
		}
		res := Passed
		if !ok {
			res = Blocked
		}
		r.emit(ctx, Event{Kind: StageCheckGateResult, Stage: s.Name, Group: group, Attempt: attempt, Outcome: res, Reason: why})
		if !ok {
			return r.exit(ctx, s, group, attempt, Slot{Outcome: Fail, Attempt: attempt, Reason: "check gate: " + why}), nil
		}
	}
	// Init: render the body (the system prompt) and the prompt.
	body, err := render(s.body, sc)
	if err != nil {
		return "", fmt.Errorf("workflow %s: stage %s: %w", r.def.Name, s.Name, err)
	}
	text, err := render(s.prompt, sc)
	if err != nil {
		return "", fmt.Errorf("workflow %s: stage %s: %w", r.def.Name, s.Name, err)
	}
	if text == "" {
		text = fmt.Sprintf("Carry out stage %q as your instructions say. When it is done, call %s with its result.", s.Name, CompletionTool)
		if feedback != "" {
			text += fmt.Sprintf("\n\nThis is attempt %d; the last one did not pass:\n%s", attempt, feedback)
		}
	}
	// Act.
	a, err := r.act(ctx, s, body, text)
	if err != nil {
		if ctx.Err() != nil {
			return cancelled(err)
		}
		return "", fmt.Errorf("workflow %s: stage %s: %w", r.def.Name, s.Name, err)
	}
	// Assert.
	outcome, reason, err := r.assert(ctx, s, sc, a)
	if err != nil {
		if ctx.Err() != nil {
			return cancelled(err)
		}
		return "", fmt.Errorf("workflow %s: stage %s: assert: %w", r.def.Name, s.Name, err)
	}
	r.emit(ctx, Event{Kind: StageAssertOutcome, Stage: s.Name, Group: group, Attempt: attempt, Outcome: outcome, CapHit: a.capHit,
		Reason: reason, Completion: a.completion, Transcript: a.transcript})
	if ctx.Err() != nil {
		// Strict cancellation between Assert and Exit: Exit does not run.
		return cancelled(ctx.Err())
	}
	return r.exit(ctx, s, group, attempt, Slot{Outcome: outcome, Attempt: attempt, CapHit: a.capHit, Completion: a.completion, Reason: reason}), nil
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

// act runs the stage's pass of the loop on a fork of the session: the
// body as the system prompt, the tool envelope, the completion tool, the
// turn cap as the continuation limit, the SM's authority.
func (r *runner) act(ctx context.Context, s *Stage, body, text string) (*act, error) {
	var mu sync.Mutex
	var completion json.RawMessage
	done := tool.WithTraits(&completionTool{schema: s, onDone: func(in json.RawMessage) {
		mu.Lock()
		completion = in
		mu.Unlock()
	}}, tool.Traits{Effect: tool.Idempotent, EndsTurn: true, PreApproved: true})
	auth := r.newAuthority(ctx, s)
	turnCap := s.TurnCap
	if turnCap == 0 {
		turnCap = DefaultTurnCap
	}
	fo := strata.ForkOptions{Overrides: agent.Overrides{
		System:    &body,
		Extra:     []tool.Tool{done},
		Hooks:     []agent.Hook{auth.manifestHook()},
		MaxTurns:  turnCap,
		Authority: auth.decide,
	}}
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
	_, err = fork.Prompt(ctx, text)
	a := &act{transcript: fork.History()}
	switch {
	case errors.Is(err, agent.ErrMaxTurns):
		// The turn cap: a normal end of Act, not a cancellation; the last
		// round's tool results are in the stage-local transcript.
		a.capHit = true
	case err != nil:
		return nil, err
	}
	mu.Lock()
	a.completion = completion
	mu.Unlock()
	return a, nil
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
