package durable

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/tool"
)

// Timeouts and retry bounds of the activities (docs/durable.md, "delivery
// guarantees").
const (
	// ModelCallTimeout bounds one model-call attempt; ModelCallAttempts is
	// how many attempts a retryable provider error gets.
	ModelCallTimeout  = 10 * time.Minute
	ModelCallAttempts = 5
	// ToolTimeout bounds one tool-call attempt unless Spec.ToolTimeout
	// says otherwise; ToolHeartbeat is the heartbeat timeout: a worker that
	// stops heartbeating that long is taken as lost.
	ToolTimeout   = time.Hour
	ToolHeartbeat = 20 * time.Second
	// ReadOnlyAttempts is how many attempts a read-only or idempotent tool
	// call gets; side-effecting calls get exactly one.
	ReadOnlyAttempts = 3
	// MaxRetryDelay caps a provider's Retry-After (llm.DefaultMaxRetryDelay).
	MaxRetryDelay = llm.DefaultMaxRetryDelay
)

// ModelCallInput is the model-call activity's input.
type ModelCallInput struct {
	Spec    Spec         `json:"spec"`
	Request *llm.Request `json:"request"`
	// CorrelationID and Turn are the request's, for the delta hooks the
	// worker runs (agent.Payload).
	CorrelationID string       `json:"correlation_id,omitempty"`
	Turn          event.TurnID `json:"turn"`
}

// ModelCallOutput is the model-call activity's result: the response, the
// stream deltas as they arrived (replayed into the engine so the event log
// matches an in-process run's) and the worker's verdict per tool_use id.
type ModelCallOutput struct {
	Response *llm.Response      `json:"response"`
	Deltas   []llm.Delta        `json:"deltas,omitempty"`
	Verdicts map[string]Verdict `json:"verdicts,omitempty"`
}

// ToolCallInput is the tool-call activity's input: one tool_use block and
// the turn it belongs to.
type ToolCallInput struct {
	Spec          Spec         `json:"spec"`
	CorrelationID string       `json:"correlation_id"`
	Turn          event.TurnID `json:"turn"`
	Call          llm.Block    `json:"call"`
	// PersonApproved says a person approved this call (the tool's
	// tool.Env.PersonApproved).
	PersonApproved bool `json:"person_approved,omitempty"`
}

// RecordInput is the record activity's input: the events of whole turns
// (and of a prompt's end) that the session recorder reads.
type RecordInput struct {
	Spec   Spec          `json:"spec"`
	Events []event.Event `json:"events"`
}

// prompt is PromptUpdate's handler: it drives one prompt through the
// engine's steps, each model call and tool call an activity, each approval
// awaited, then records the prompt's events on a worker.
func (r *sessionRun) prompt(ctx workflow.Context, text string) (PromptResult, error) {
	return r.promptWith(ctx, PromptInput{Text: text})
}

// promptWith is PromptWithUpdate's handler: prompt with attachments.
func (r *sessionRun) promptWith(ctx workflow.Context, in PromptInput) (PromptResult, error) {
	r.running = true
	defer func() { r.running = false }()
	r.prompts++
	if err := workflow.Await(ctx, func() bool { return r.eng != nil || r.broken != nil }); err != nil {
		return PromptResult{}, err
	}
	if r.broken != nil {
		return PromptResult{}, r.broken
	}
	r.carried.ctx = ctx // the carried callbacks block this prompt's coroutine (carry.go)

	if r.modeChanged { // SetMode: the next prompt runs in the new mode, as in process
		r.modeChanged = false
		if err := r.build(ctx); err != nil {
			return PromptResult{}, err
		}
	}
	bg := context.Background() // the engine's context: no hooks run in workflow code
	var recErr error           // the first record that failed: the prompt goes on, and reports it
	step := r.drive(ctx, r.eng.Start(bg, r.st, in.Text, in.Attachments), func() {
		if err := r.record(ctx, r.turnsEnded()); err != nil && recErr == nil {
			recErr = err
		}
	})
	res := PromptResult{Result: step.Result, Error: stepError(step.Err)}
	if err := r.record(ctx, len(r.events)); err != nil && recErr == nil {
		recErr = err
	}
	if err := r.keep.takeRecErr(); err != nil && recErr == nil {
		recErr = err
	}
	if recErr != nil && res.Error == nil {
		res.Error = &agent.StepError{Text: recErr.Error()}
	}
	return boundResult(res, r.st.History), nil
}

// drive carries out the engine's steps from step on until the loop ends
// and returns the StepDone: each model call and each tool call an
// activity (a local tool's call in workflow code), each approval awaited;
// after is called after every step.
func (r *driver) drive(ctx workflow.Context, step agent.Step, after func()) agent.Step {
	bg := context.Background()
	for step.Kind != agent.StepDone {
		switch step.Kind {
		case agent.StepSend:
			step = r.send(ctx, step)
		case agent.StepApprove:
			step = r.approve(ctx, step)
		case agent.StepRunTool:
			step = r.eng.ToolDone(bg, r.st, r.runTool(ctx, step))
		}
		after()
	}
	return step
}

// turnsEnded returns the index just past the last TurnEnd event: the
// events of whole turns, which the record activity stores (and skips
// whole on a retry).
func (r *sessionRun) turnsEnded() int {
	for i := len(r.events) - 1; i >= r.recorded; i-- {
		if r.events[i].Kind == event.TurnEnd {
			return i + 1
		}
	}
	return r.recorded
}

// approve answers a StepApprove as the workspace's permissions answer it
// in process (internal/permission's Allowlist.Approve): the workflow waits
// for the approve update, and a person's yes is remembered for the call's
// tool run (tool.Env.PersonApproved). An "always" answer goes to the engine,
// which keeps it in the loop state (carried over continue-as-new and into
// the stored checkpoint) and never lets it cover a call that needs a person
// (Config.PersonOnly, from the worker's verdict).
func (r *driver) approve(ctx workflow.Context, step agent.Step) agent.Step {
	bg := context.Background()
	call := step.Approval.Call
	r.pending, r.answer = step.Approval, nil
	defer func() { r.pending, r.answer = nil, nil }()
	if err := workflow.Await(ctx, func() bool { return r.answer != nil }); err != nil {
		r.answer = &Approval{Decision: agent.RejectOnce}
		return r.eng.Approved(bg, r.st, agent.RejectOnce, fmt.Errorf("the session workflow was cancelled: %w", err))
	}
	d := r.answer.Decision
	if d == agent.AllowOnce || d == agent.AllowAlways {
		r.personOK[call.ID] = true
	}
	return r.eng.Approved(bg, r.st, d, nil)
}

// send runs a StepSend as the model-call activity: retried per provider
// error class (the activity marks which errors retry and after how long).
func (r *driver) send(ctx workflow.Context, step agent.Step) agent.Step {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: ModelCallTimeout, HeartbeatTimeout: r.heartbeat(), // a lost worker is noticed as soon as in a tool call
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: MaxRetryDelay,
			MaximumAttempts: ModelCallAttempts},
	})
	var out ModelCallOutput
	bg := context.Background()
	start := workflow.Now(ctx)
	r.keep.sending()
	err := workflow.ExecuteActivity(actx, ModelCallActivity, ModelCallInput{Spec: r.in.Spec, Request: step.Request, CorrelationID: step.CorrelationID, Turn: step.Turn}).Get(ctx, &out)
	r.keep.sent(step.Request, start, err == nil && out.Response != nil)
	if err != nil {
		return r.eng.Responded(bg, r.st, nil, activityCause(err))
	}
	if out.Response == nil {
		return r.eng.Responded(bg, r.st, nil, fmt.Errorf("durable: the model-call activity returned no response"))
	}
	for id, v := range out.Verdicts {
		r.verdicts[id] = v
	}
	for _, c := range out.Response.Message.ToolUses() {
		if v, ok := out.Verdicts[c.ID]; ok && r.local[c.Name] == nil { // the worker does not know the local tools
			r.allowed[c.Name] = v.Allowed
		}
	}
	for _, d := range out.Deltas {
		if r.eng.Delta(bg, r.st, d) != nil {
			break
		}
	}
	return r.eng.Responded(bg, r.st, out.Response, nil)
}

// runTool runs a StepRunTool as the tool-call activity, its activity id
// the tool_use id. Side-effecting tools get one attempt: an attempt lost to
// a worker crash or a timeout becomes an interrupted is_error tool_result,
// never a second run. Read-only and idempotent tools get ReadOnlyAttempts,
// each its own activity ("<id>#2", …), a second after the last, so every
// attempt is in the history (and the SDK's test environment, which does
// not retry a timed-out attempt, runs them too).
func (r *driver) runTool(ctx workflow.Context, step agent.Step) agent.ToolOutput {
	call := *step.Call
	if r.local[call.Name] != nil { // pure: run here, recorded by the history's determinism
		return agent.ToolOutput{Result: r.reg.Execute(context.Background(), &tool.Env{CallID: call.ID}, call)}
	}
	tr := r.traits[call.Name]
	attempts := 1
	if tr.Retryable() {
		attempts = ReadOnlyAttempts
	}
	timeout := ToolTimeout
	if r.in.Spec.ToolTimeout > 0 {
		timeout = r.in.Spec.ToolTimeout
	}
	heartbeat := r.heartbeat()
	in := ToolCallInput{Spec: r.in.Spec, CorrelationID: step.CorrelationID, Turn: step.Turn, Call: call, PersonApproved: r.personOK[call.ID]}
	var err error
	for i := 0; i < attempts; i++ {
		if i > 0 {
			if werr := workflow.Sleep(ctx, time.Second<<(i-1)); werr != nil {
				err = werr
				break
			}
		}
		id := call.ID
		if n := r.used[call.ID]; n > 0 {
			id += "#" + strconv.Itoa(n+1)
		}
		r.used[call.ID]++
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			ActivityID: id, StartToCloseTimeout: timeout, HeartbeatTimeout: min(heartbeat, timeout), WaitForCancellation: true,
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1},
		})
		var out agent.ToolOutput
		if err = workflow.ExecuteActivity(actx, ToolCallActivity, in).Get(ctx, &out); err == nil {
			return out
		}
		var ce *temporal.CanceledError
		if errors.As(err, &ce) || ctx.Err() != nil {
			break
		}
	}
	var why string
	var te *temporal.TimeoutError
	var ce *temporal.CanceledError
	switch {
	case errors.As(err, &ce) || ctx.Err() != nil:
		why = "the session was cancelled while it ran"
	case errors.As(err, &te):
		why = fmt.Sprintf("its worker was lost or it ran past its time (%s timeout)", te.TimeoutType())
	default:
		why = activityCause(err).Error()
	}
	text := fmt.Sprintf("tool call interrupted: %s; it may have partly run, its output is lost", why)
	if !tr.Retryable() {
		text += ", and it was not run again (a side-effecting tool runs at most once)"
	} else {
		text += fmt.Sprintf(" (%d attempts)", attempts)
	}
	return agent.ToolOutput{Result: llm.ToolResultBlock(call.ID, text, true)}
}

// heartbeat is the heartbeat timeout of model and tool calls.
func (r *driver) heartbeat() time.Duration {
	if r.in.Spec.ToolHeartbeat > 0 {
		return r.in.Spec.ToolHeartbeat
	}
	return ToolHeartbeat
}

// recordKinds are the events the session recorder reads
// (session.Recorder); the others (stream deltas above all) stay out of the
// record activity's input, which Temporal caps in size.
var recordKinds = map[event.Kind]bool{event.SessionTurnStart: true, event.CacheKeepAlive: true, event.TurnStart: true,
	event.MessageEnd: true, event.ProviderResponse: true, event.ToolExecutionEnd: true, event.TurnEnd: true}

// record writes events[recorded:upTo] to the worker's session store, after
// every turn and at the end of the prompt (the record activity is
// idempotent by loop id and turn index). It runs even when the workflow is
// being cancelled.
func (r *sessionRun) record(ctx workflow.Context, upTo int) error {
	if upTo <= r.recorded {
		return nil
	}
	var evs []event.Event
	for _, e := range r.events[r.recorded:upTo] {
		if recordKinds[e.Kind] && e.Kind != event.CacheKeepAlive { // the pinger records its pings as they happen (keepalive.go)
			evs = append(evs, e)
		}
	}
	r.recorded = upTo
	if err := r.recordEvents(ctx, evs); err != nil {
		return fmt.Errorf("durable: session %s: the prompt ran but its turns could not be stored on a worker: %w", r.bp.SessionID, err)
	}
	return nil
}

// recordEvents writes evs to the worker's session store (the record
// activity), even when the workflow is being cancelled, and returns the
// activity's error.
func (r *sessionRun) recordEvents(ctx workflow.Context, evs []event.Event) error {
	if len(evs) == 0 {
		return nil
	}
	if ctx.Err() != nil {
		ctx, _ = workflow.NewDisconnectedContext(ctx)
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 10}})
	if err := workflow.ExecuteActivity(actx, RecordActivity, RecordInput{Spec: r.in.Spec, Events: evs}).Get(ctx, nil); err != nil {
		return activityCause(err)
	}
	return nil
}

// activityCause returns the error an activity failed with, without
// Temporal's wrapping ("activity error (type …)"), as the engine reports
// it to events and results.
func activityCause(err error) error {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return errors.New(ae.Error())
	}
	if c := errors.Unwrap(err); c != nil {
		return c
	}
	return err
}

// stepKinds maps the errors a prompt may end with to agent.StepError
// kinds, so errors.Is still answers after JSON.
var stepKinds = []struct {
	kind string
	err  error
}{
	{"denied", agent.ErrDenied}, {"max_turns", agent.ErrMaxTurns}, {"token_limit", agent.ErrTokenLimit},
	{"aborted", agent.ErrAborted}, {"canceled", context.Canceled}, {"deadline", context.DeadlineExceeded},
}

// stepError is err as PromptResult carries it (nil for nil).
func stepError(err error) *agent.StepError {
	if err == nil {
		return nil
	}
	var se *agent.StepError
	if errors.As(err, &se) && se.Kind != "" {
		return &agent.StepError{Text: err.Error(), Kind: se.Kind}
	}
	out := &agent.StepError{Text: err.Error()}
	for _, k := range stepKinds {
		if errors.Is(err, k.err) {
			out.Kind = k.kind
			break
		}
	}
	return out
}
