package durable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/tool"
	sm "github.com/strata-agent/strata/workflow"
)

// Messages of a stage execution's child workflow.
const (
	// StageEventsQuery returns the stage's StageEvents from a cursor on
	// (argument: StageCursor).
	StageEventsQuery = "stage_events"
	// PendingGrantQuery returns the grantStageTool interaction waiting for
	// a person (*workflow.GrantRequest, nil when none).
	PendingGrantQuery = "pending_grant"
	// GrantUpdate answers it (argument: Grant).
	GrantUpdate = "grant"
)

// Grant answers a stage's pending grantStageTool interaction
// (GrantUpdate): ID is the call's tool_use id.
type Grant struct {
	ID     string         `json:"id"`
	Answer sm.GrantAnswer `json:"answer"`
}

// StageBegun is the begin-stage activity's result: the stage after Setup,
// the check gate and Init, and the blueprint of its fork of the session
// (nil when the gate blocked and Exit ran).
type StageBegun struct {
	Begun     *sm.Begun  `json:"begun"`
	Blueprint *Blueprint `json:"blueprint,omitempty"`
}

// StageFinish is the finish-stage activity's input: the stage's input, how
// it began and what its Act handed back.
type StageFinish struct {
	StageInput
	Begun *sm.Begun `json:"begun"`
	Acted *sm.Acted `json:"acted"`
}

// StageFinished is the finish-stage activity's result: the outcome and the
// state after Exit, and the events of Assert and Exit.
type StageFinished struct {
	Exited *sm.Exited `json:"exited"`
	Events []sm.Event `json:"events,omitempty"`
}

// StageCursor is where a reader of a stage execution's events is: the
// index of the next audit event and of the next loop event, and the byte
// offsets of their next Parts when they come in parts.
type StageCursor struct {
	Audit       int `json:"audit"`
	Loop        int `json:"loop"`
	AuditOffset int `json:"audit_offset,omitempty"`
	LoopOffset  int `json:"loop_offset,omitempty"`
}

// StageEvents are a stage execution's events from a cursor on: its audit
// events (package workflow's: StageEntered, StageGranted, StageExited…)
// and its loop's events (messages, tool calls), at most
// MaxEventsPerQuery of each and half of MaxAnswerBytes of JSON each; an
// event larger than that comes as a Part (AuditPart, LoopPart).
type StageEvents struct {
	Stage     string        `json:"stage"`
	Audit     []sm.Event    `json:"audit,omitempty"`
	Loop      []event.Event `json:"loop,omitempty"`
	AuditPart *Part         `json:"audit_part,omitempty"`
	LoopPart  *Part         `json:"loop_part,omitempty"`
	// More says events remain after these.
	More bool `json:"more,omitempty"`
}

// stageRun is one stage execution's child workflow.
type stageRun struct {
	in      StageInput
	audit   []sm.Event
	loop    *driver
	pending *sm.GrantRequest // the grant interaction waiting for GrantUpdate
	answer  *Grant
}

// StageWorkflow is the child workflow of one stage execution, driving the
// stage's loop itself: the begin-stage activity (Setup, the check gate,
// Init on a worker, and the blueprint of the stage's fork of the session),
// then the fork's engine in this workflow — each model call a ModelCall
// activity, each tool call a ToolCall activity, with the session
// workflow's delivery guarantees (the same driver), the stage's authority
// and completion tool in workflow code — then the finish-stage activity
// (Assert, Exit). It returns the outcome and the state after Exit; an
// error (a cancellation included) means the stage did not reach Exit.
func StageWorkflow(ctx workflow.Context, in StageInput) (StageResult, error) {
	r := &stageRun{in: in}
	err := workflow.SetQueryHandler(ctx, StageEventsQuery, func(c StageCursor) (StageEvents, error) {
		var loop []event.Event
		if r.loop != nil {
			loop = r.loop.events
		}
		return stageEvents(in.Stage, r.audit, loop, c) // bounded by bytes (pages.go)
	})
	if err != nil {
		return StageResult{}, err
	}
	if err := r.grants(ctx); err != nil {
		return StageResult{}, err
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Hour,
		HeartbeatTimeout: heartbeatOf(in.Spec), WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 10 * time.Second, MaximumAttempts: 10}})
	var b StageBegun
	if err := workflow.ExecuteActivity(actx, BeginStageActivity, in).Get(ctx, &b); err != nil {
		return StageResult{}, err
	}
	if b.Begun == nil {
		return StageResult{}, fmt.Errorf("durable: stage %s: the begin-stage activity returned nothing", in.Stage)
	}
	r.audit = append(r.audit, b.Begun.Events...)
	if ex := b.Begun.Exit; ex != nil {
		return StageResult{Outcome: ex.Outcome, State: ex.State}, nil
	}
	if b.Blueprint == nil {
		return StageResult{}, fmt.Errorf("durable: stage %s: the begin-stage activity returned no blueprint", in.Stage)
	}
	acted, err := r.act(ctx, b)
	if err != nil {
		if ctx.Err() != nil {
			r.emit(ctx, sm.Event{Kind: sm.StageCancelled, Stage: in.Stage, Group: in.Group, Attempt: b.Begun.Attempt, Reason: err.Error()})
			return StageResult{}, ctx.Err()
		}
		return StageResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("durable: stage %s: %v", in.Stage, err), "stage", err)
	}
	var f StageFinished
	if err := workflow.ExecuteActivity(actx, FinishStageActivity, StageFinish{StageInput: in, Begun: b.Begun, Acted: acted}).Get(ctx, &f); err != nil {
		return StageResult{}, err
	}
	r.audit = append(r.audit, f.Events...)
	if f.Exited == nil {
		return StageResult{}, fmt.Errorf("durable: stage %s: the finish-stage activity returned no state", in.Stage)
	}
	return StageResult{Outcome: f.Exited.Outcome, State: f.Exited.State}, nil
}

// act is the stage's Act: one prompt of the fork's loop, driven like a
// session's prompt, with the stage's authority (its grant tokens and
// grants in this workflow's memory; a person answers through GrantUpdate
// when Spec.StageGrants is set) and its completion tool run here. The turn cap is a normal end
// (Acted.CapHit).
func (r *stageRun) act(ctx workflow.Context, b StageBegun) (*sm.Acted, error) {
	_, s, err := sm.StageOf(r.in.State, r.in.Stage, r.in.Group) // pure: the same on every replay
	if err != nil {
		return nil, err
	}
	var completion json.RawMessage
	auth := sm.NewAuthority(s)
	d := newDriver(SessionInput{Spec: r.in.Spec}, workflow.GetInfo(ctx).WorkflowExecution.ID)
	d.bp = *b.Blueprint
	d.local = map[string]tool.Tool{sm.CompletionTool: s.CompletionTool(func(in json.RawMessage) { completion = in })}
	d.extend = func(cfg *agent.Config) {
		cfg.Hooks = append(slices.Clone(cfg.Hooks), auth.ManifestHook())
		cfg.Authority = func(call llm.Block) (string, string) {
			by, ask, ev := auth.Decide(call)
			if ev != nil {
				r.emit(ctx, *ev)
			}
			if !ask {
				return by, ""
			}
			by, reason, aev := r.ask(ctx, auth, call)
			r.emit(ctx, aev)
			return by, reason
		}
	}
	if err := d.build(ctx); err != nil {
		return nil, err
	}
	r.loop = &d
	if len(d.bp.NotCarried) > 0 {
		d.emit(ctx, event.Event{Kind: event.Progress, Text: fmt.Sprintf("durable stage %s: not carried into the workflow: %v (docs/durable.md)", s.Name, d.bp.NotCarried)})
	}
	step := d.drive(ctx, d.eng.Start(context.Background(), d.st, b.Begun.Prompt, nil), func() {})
	a := &sm.Acted{Completion: completion, Transcript: d.st.History}
	switch {
	case errors.Is(step.Err, agent.ErrMaxTurns):
		a.CapHit = true
	case step.Err != nil:
		return nil, step.Err
	}
	return a, nil
}

// ask is the stage's grantStageTool interaction for call: with
// Spec.StageGrants the workflow waits (hours are fine) for a person's
// GrantUpdate, else no interactor is active and the call is blocked.
func (r *stageRun) ask(ctx workflow.Context, auth *sm.Authority, call llm.Block) (by, reason string, ev sm.Event) {
	if !r.in.Spec.StageGrants {
		reason, ev = auth.Deny(call, "no interactor is active")
		return "", reason, ev
	}
	r.pending, r.answer = &sm.GrantRequest{Workflow: r.in.State.Workflow, Stage: r.in.Stage, Call: call}, nil
	defer func() { r.pending, r.answer = nil, nil }()
	if err := workflow.Await(ctx, func() bool { return r.answer != nil }); err != nil {
		return auth.Answer(call, "", fmt.Errorf("the stage was cancelled while it waited: %w", err))
	}
	return auth.Answer(call, r.answer.Answer, nil)
}

// grants registers PendingGrantQuery and GrantUpdate.
func (r *stageRun) grants(ctx workflow.Context) error {
	err := workflow.SetQueryHandler(ctx, PendingGrantQuery, func() (*sm.GrantRequest, error) {
		if r.answer != nil || r.pending == nil {
			return nil, nil
		}
		g := *r.pending
		g.Call = boundCall(g.Call, g) // within MaxAnswerBytes (pages.go)
		return &g, nil
	})
	if err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, GrantUpdate, func(ctx workflow.Context, g Grant) error {
		r.answer = &g
		return nil
	}, workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, g Grant) error {
		p := r.pending
		switch {
		case p == nil || r.answer != nil:
			return fmt.Errorf("durable: stage %s: no grant is pending (answer for %q)", r.in.Stage, g.ID)
		case g.ID != p.Call.ID:
			return fmt.Errorf("durable: stage %s: the pending grant is for tool_use %s (%s), not %q", r.in.Stage, p.Call.ID, p.Call.Name, g.ID)
		}
		switch g.Answer {
		case sm.GrantOnce, sm.GrantStage, sm.GrantDeny, sm.GrantDeferred:
			return nil
		}
		return fmt.Errorf("durable: stage %s: grant answer %q: want once, stage, denied or deferred", r.in.Stage, g.Answer)
	}})
}

// emit adds a workflow-made audit event, dated by workflow time.
func (r *stageRun) emit(ctx workflow.Context, e sm.Event) {
	e.Time = workflow.Now(ctx)
	if e.Workflow == "" {
		e.Workflow = r.in.State.Workflow
	}
	r.audit = append(r.audit, e)
}

// BeginStage is the begin-stage activity: Setup, the check gate (its
// command runs on this worker) and Init of the input's stage
// (workflow.BeginStage), and the blueprint of the stage's fork of the
// stored session (Session.ForkLoop with the stage's overrides), unless the
// gate blocked. The session is opened first, so an attempt retried because
// another worker held it does not run the gate twice.
func (a *Activities) BeginStage(ctx context.Context, in StageInput) (StageBegun, error) {
	o, release, err := a.workspace(ctx, in.Spec)
	if err != nil {
		return StageBegun{}, err
	}
	defer release()
	_, s, err := sm.StageOf(in.State, in.Stage, in.Group)
	if err != nil {
		return StageBegun{}, temporal.NewNonRetryableApplicationError(err.Error(), "stage", err)
	}
	sh, closeSession, err := a.stageSession(ctx, o, in.Spec.SessionID)
	if err != nil {
		return StageBegun{}, err
	}
	defer closeSession()
	stop := heartbeat(ctx, func() any { return in.Stage })
	defer stop()
	b, err := sm.BeginStage(ctx, o.ws, in.State, in.Stage, in.Group)
	if err != nil {
		return StageBegun{}, stageError(ctx, in.Stage, err)
	}
	if b.Exit != nil {
		return StageBegun{Begun: b}, nil
	}
	sh.forks.Lock()
	cfg, st, err := sh.s.ForkLoop(strata.ForkOptions{Overrides: b.Overrides(s, nil)})
	sh.forks.Unlock()
	if err != nil {
		return StageBegun{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("durable: stage %s: %v", in.Stage, err), "stage", err)
	}
	bp := blueprint(in.Spec.SessionID, cfg, st)
	return StageBegun{Begun: b, Blueprint: &bp}, nil
}

// FinishStage is the finish-stage activity: Assert (its command runs on
// this worker; a judge on a fork of the stored session, its model call
// inside this activity), StageAssertOutcome and Exit
// (workflow.FinishStage).
func (a *Activities) FinishStage(ctx context.Context, in StageFinish) (StageFinished, error) {
	o, release, err := a.workspace(ctx, in.Spec)
	if err != nil {
		return StageFinished{}, err
	}
	defer release()
	if in.Begun == nil || in.Acted == nil {
		return StageFinished{}, temporal.NewNonRetryableApplicationError("durable: finish stage "+in.Stage+" without its begin or its act", "input", nil)
	}
	_, s, err := sm.StageOf(in.State, in.Stage, in.Group)
	if err != nil {
		return StageFinished{}, temporal.NewNonRetryableApplicationError(err.Error(), "stage", err)
	}
	stop := heartbeat(ctx, func() any { return in.Stage })
	defer stop()
	var sess *strata.Session
	var sh *shared
	if s.Assert != nil && s.Assert.Judge != "" {
		var closeSession func()
		if sh, closeSession, err = a.stageSession(ctx, o, in.Spec.SessionID); err != nil {
			return StageFinished{}, err
		}
		defer closeSession()
		sess = sh.s
	}
	var forks *sync.Mutex
	if sh != nil {
		forks = &sh.forks
	}
	ex, evs, err := sm.FinishStage(ctx, o.ws, sess, in.State, in.Begun, in.Acted, forks)
	if err != nil {
		return StageFinished{}, stageError(ctx, in.Stage, err)
	}
	return StageFinished{Exited: ex, Events: evs}, nil
}

// stageError is err of a stage step as the activity returns it: a
// cancellation, else not retryable.
func stageError(ctx context.Context, stage string, err error) error {
	if ctx.Err() != nil {
		return temporal.NewCanceledError(fmt.Sprintf("durable: stage %s was cancelled", stage))
	}
	return temporal.NewNonRetryableApplicationError(err.Error(), "stage", err)
}
