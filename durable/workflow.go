package durable

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/tool"
)

// SessionInput is the session workflow's input: the spec, and on a
// continued run (continue-as-new) what the previous run carried over.
type SessionInput struct {
	Spec Spec `json:"spec"`
	// Blueprint is the worker's configuration (nil on the first run: the
	// Prepare activity reads it).
	Blueprint *Blueprint `json:"blueprint,omitempty"`
	// State is the loop state carried over (nil = the blueprint's).
	State *agent.State `json:"state,omitempty"`
	// Steering are steering messages queued but not yet taken.
	Steering []string `json:"steering,omitempty"`
	// EventBase is the index (across runs) of the run's first event; IDs is
	// how many ids the previous runs made.
	EventBase int `json:"event_base,omitempty"`
	IDs       int `json:"ids,omitempty"`
	// KeepAlive is the keep-alive stretch the previous run left (nil:
	// none): its pings go on in this run.
	KeepAlive *KeepAliveCarry `json:"keep_alive,omitempty"`
}

// driver drives agent.Engine's steps from workflow code: the engine built
// from a Blueprint, its state, and what the steps share (verdicts, tool
// traits, approvals). The session workflow and a stage's child workflow
// drive their loops with it, so both run the same model-call, tool-call
// and approval steps. Workflow code: no clock but workflow.Now, no
// random, no I/O (docs/durable.md, "determinism").
type driver struct {
	in       SessionInput
	seed     string // the id sequence's seed: the same in every replay
	bp       Blueprint
	eng      *agent.Engine
	st       *agent.State
	queue    *agent.Queue
	events   []event.Event
	allowed  map[string]bool
	traits   map[string]tool.Traits
	verdicts map[string]Verdict // by tool_use id, from the model-call activity
	used     map[string]int     // activity ids used, for repeated tool_use ids
	ids      int
	pending  *agent.ApprovalRequest
	answer   *Approval
	personOK map[string]bool // tool_use ids a person approved
	// local are tools whose calls run in workflow code, not as activities
	// (a stage's completion tool: pure validation); reg holds them.
	local map[string]tool.Tool
	reg   *tool.Registry
	// extend adds what the driver's loop sets for itself to the engine's
	// Config (a stage's authority and manifest hook), after the carried
	// callbacks.
	extend  func(*agent.Config)
	carried *carried // the worker's callbacks as activities (carry.go)
	keep    *keeper  // the session's keep-alive pings (keepalive.go); nil = none
}

// newDriver returns a driver of in's loop whose ids come from seed.
func newDriver(in SessionInput, seed string) driver {
	d := driver{in: in, seed: seed, queue: &agent.Queue{}, ids: in.IDs, verdicts: map[string]Verdict{}, used: map[string]int{},
		personOK: map[string]bool{}}
	return d
}

// sessionRun is one run of the session workflow: its driver and what the
// handlers share.
type sessionRun struct {
	driver
	recorded    int // events[:recorded] are in the worker's session store
	running     bool
	prompts     int
	ended       bool
	broken      error // why the run cannot serve prompts (a failed Prepare)
	modeChanged bool  // a mode update came: the next prompt rebuilds the engine
}

// SessionWorkflow is the session workflow (registered as
// SessionWorkflowName): it prepares the workspace on a worker, then serves
// prompts (PromptUpdate), approvals (ApproveUpdate), steering (SteerSignal)
// and queries until EndSignal, continuing as new every Spec.PromptsPerRun
// prompts or when Temporal suggests it, with its state. It returns nil
// when ended, a continue-as-new error, or the error that stopped it (a
// failed Prepare names the spec's workspace).
func SessionWorkflow(ctx workflow.Context, in SessionInput) error {
	r := &sessionRun{driver: newDriver(in, WorkflowID(in.Spec.SessionID))} // from the input, not the execution: the same in every replay
	if err := r.handlers(ctx); err != nil {
		return err
	}
	if in.Blueprint == nil {
		var bp Blueprint
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 5 * time.Minute,
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3}})
		if err := workflow.ExecuteActivity(actx, PrepareActivity, in.Spec).Get(ctx, &bp); err != nil {
			r.broken = fmt.Errorf("durable: session %s: prepare the workspace %q on a worker: %w", in.Spec.SessionID, in.Spec.Dir, err)
			return r.broken
		}
		r.bp = bp
	} else {
		r.bp = *in.Blueprint
	}
	if err := r.build(ctx); err != nil {
		r.broken = err
		return err
	}
	for _, s := range in.Steering {
		r.queue.Steer(s)
	}
	if r.keep = newKeeper(r.bp, in.KeepAlive); r.keep != nil {
		workflow.Go(ctx, r.keepAlive)
	}
	if in.Blueprint == nil && len(r.bp.NotCarried) > 0 {
		r.emit(ctx, event.Event{Kind: event.Progress, Text: fmt.Sprintf("durable session: not carried into the workflow: %v (docs/durable.md)", r.bp.NotCarried)})
	}
	perRun := in.Spec.PromptsPerRun
	if perRun <= 0 {
		perRun = DefaultPromptsPerRun
	}
	steer := workflow.GetSignalChannel(ctx, SteerSignal)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var text string
			steer.Receive(ctx, &text)
			r.queue.Steer(text)
		}
	})
	workflow.Go(ctx, func(ctx workflow.Context) {
		workflow.GetSignalChannel(ctx, EndSignal).Receive(ctx, nil)
		r.ended = true
		if r.pending != nil && r.answer == nil {
			r.answer = &Approval{ID: r.pending.Call.ID, Decision: agent.RejectOnce}
		}
	})
	err := workflow.Await(ctx, func() bool {
		return !r.running && (r.ended || r.prompts >= perRun || workflow.GetInfo(ctx).GetContinueAsNewSuggested())
	})
	if err != nil {
		return err
	}
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) && (r.keep == nil || !r.keep.pinging) }); err != nil {
		return err // a ping in flight is waited for, so its usage is stored; a pending timer is not
	}
	if r.ended {
		return nil
	}
	for {
		var text string
		if !steer.ReceiveAsync(&text) {
			break
		}
		r.queue.Steer(text)
	}
	st := *r.st
	next := SessionInput{Spec: r.in.Spec, Blueprint: &r.bp, State: &st, Steering: r.queue.TakeSteering(),
		EventBase: in.EventBase + len(r.events), IDs: r.ids, KeepAlive: r.keep.carry()}
	return workflow.NewContinueAsNewError(ctx, SessionWorkflowName, next)
}

// build makes the driver's engine from the blueprint: a fresh layout
// instance, spec-only tools (the local ones runnable), the worker's
// verdicts for the authority stack, ids from the driver's seeded sequence
// and workflow time.
func (r *driver) build(ctx workflow.Context) error {
	bp := r.bp
	layout, err := prompt.Lookup(bp.Layout)
	if err != nil {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("durable: session %s: layout %q: %v", bp.SessionID, bp.Layout, err), "config", err)
	}
	r.allowed, r.traits = map[string]bool{}, map[string]tool.Traits{}
	var tools []tool.Tool
	for _, t := range bp.Tools {
		if lt, ok := r.local[t.Spec.Name]; ok {
			tools = append(tools, lt)
		} else {
			tools = append(tools, specTool{spec: t.Spec, traits: t.Traits})
		}
		r.allowed[t.Spec.Name], r.traits[t.Spec.Name] = t.Allowed, t.Traits
	}
	bus := event.NewBus()
	bus.SubscribeSync(func(e event.Event) { r.events = append(r.events, e) })
	seed := r.seed
	r.reg = tool.NewRegistry(tools...)
	cfg := agent.Config{
		Provider: stubProvider{name: bp.Provider, api: bp.API}, Layout: layout, Tools: r.reg,
		Model: bp.Model, Params: bp.Params, Context: bp.Context, MaxTurns: bp.MaxTurns, MaxSessionTokens: bp.MaxSessionTokens,
		MaxCallsPerResponse: bp.MaxCallsPerResponse, MaxSubAgentsPerResponse: bp.MaxSubAgentsPerResponse,
		Mode: bp.Mode, ContextWindow: bp.ContextWindow, Bus: bus, Compaction: bp.Compaction.policy(),
		Now: func() time.Time { return workflow.Now(ctx) },
		NewID: func() string {
			r.ids++
			sum := sha256.Sum256([]byte(seed + "/" + strconv.Itoa(r.ids)))
			return hex.EncodeToString(sum[:8])
		},
		Approver: agent.ApproverFunc(func(context.Context, agent.ApprovalRequest) (agent.Decision, error) {
			return agent.RejectOnce, errNoInlineApproval
		}),
		PreApproved: func(call llm.Block) bool { return r.verdicts[call.ID].PreApproved }, // the worker's verdict
		Denied:      func(call llm.Block) string { return r.verdicts[call.ID].Denied },
		PersonOnly:  func(call llm.Block) bool { return r.verdicts[call.ID].Person }, // a stored "always" never covers these
	}
	if !bp.AllowedAll {
		cfg.AllowedTool = func(name string) bool { return r.allowed[name] }
	}
	st := bp.State
	switch {
	case r.st != nil: // a rebuild (a new approval mode): the conversation goes on
		st = *r.st
	case r.in.State != nil:
		st = *r.in.State
	}
	cfg.ConversationID = st.ConversationID
	r.carry(ctx, &cfg)
	if r.extend != nil {
		r.extend(&cfg)
	}
	if r.eng, err = agent.NewEngine(cfg, r.queue); err != nil {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("durable: session %s: build the engine: %v", bp.SessionID, err), "config", err)
	}
	if err := r.eng.Load(&st); err != nil {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("durable: session %s: load the loop state: %v", bp.SessionID, err), "config", err)
	}
	r.st = &st
	return nil
}

// errNoInlineApproval: the engine never calls the placeholder Approver of
// a workflow (it answers StepApprove with ApproveUpdate).
var errNoInlineApproval = errors.New("durable: approvals arrive as the approve update, not through an Approver")

// handlers registers the run's updates and queries.
func (r *sessionRun) handlers(ctx workflow.Context) error {
	id := r.in.Spec.SessionID
	idle := func() error {
		switch {
		case r.ended:
			return fmt.Errorf("durable: session %s has ended: start it again to prompt it", id)
		case r.running:
			return fmt.Errorf("durable: session %s: %w", id, agent.ErrBusy)
		}
		return nil
	}
	err := workflow.SetUpdateHandlerWithOptions(ctx, PromptUpdate, r.prompt, workflow.UpdateHandlerOptions{
		Validator: func(ctx workflow.Context, text string) error { return idle() }})
	if err != nil {
		return err
	}
	err = workflow.SetUpdateHandlerWithOptions(ctx, PromptWithUpdate, r.promptWith, workflow.UpdateHandlerOptions{
		Validator: func(ctx workflow.Context, in PromptInput) error { return idle() }})
	if err != nil {
		return err
	}
	err = workflow.SetUpdateHandlerWithOptions(ctx, ModeUpdate, func(ctx workflow.Context, m agent.Mode) error {
		r.in.Spec.Mode, r.bp.Mode, r.modeChanged = m, m, true // the workers' permission checks follow the spec's mode
		return nil
	}, workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, m agent.Mode) error {
		switch m {
		case agent.ModeAsk, agent.ModeAllowlist, agent.ModeAll:
			return nil
		}
		return fmt.Errorf("durable: session %s: mode %q: want ask, allowlist or all", id, m)
	}})
	if err != nil {
		return err
	}
	err = workflow.SetUpdateHandlerWithOptions(ctx, ApproveUpdate, func(ctx workflow.Context, a Approval) error {
		r.answer = &a
		return nil
	}, workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, a Approval) error {
		p := r.pending
		switch {
		case p == nil || r.answer != nil:
			return fmt.Errorf("durable: session %s: no approval is pending (answer for %q)", id, a.ID)
		case a.ID != p.Call.ID && a.ID != p.CorrelationID:
			return fmt.Errorf("durable: session %s: the pending approval is for tool_use %s (%s), not %q", id, p.Call.ID, p.Call.Name, a.ID)
		}
		switch a.Decision {
		case agent.AllowOnce, agent.AllowAlways, agent.RejectOnce, agent.RejectAlways:
			return nil
		}
		return fmt.Errorf("durable: session %s: decision %q: want allow_once, allow_always, reject_once or reject_always", id, a.Decision)
	}})
	if err != nil {
		return err
	}
	err = workflow.SetQueryHandler(ctx, EventsQuery, func(after, offset int) (EventsPage, error) {
		return eventsPage(r.events, max(after-r.in.EventBase, 0), offset) // bounded by bytes (pages.go)
	})
	if err != nil {
		return err
	}
	err = workflow.SetQueryHandler(ctx, HistoryQuery, func(from, offset int) (HistoryPage, error) {
		switch {
		case r.broken != nil:
			return HistoryPage{}, r.broken
		case r.st == nil:
			return HistoryPage{}, nil
		}
		return historyPage(r.st.History, max(from, 0), offset)
	})
	if err != nil {
		return err
	}
	return workflow.SetQueryHandler(ctx, PendingQuery, func() (*agent.ApprovalRequest, error) {
		if r.answer != nil {
			return nil, nil
		}
		return boundPending(r.pending), nil
	})
}

// emit adds a workflow-made event to the log, dated by workflow time
// unless it has a time.
func (r *driver) emit(ctx workflow.Context, e event.Event) {
	if e.Time.IsZero() {
		e.Time = workflow.Now(ctx)
	}
	e.Seq = int64(len(r.events) + 1)
	r.events = append(r.events, e)
}

// stubProvider stands for the worker's provider in workflow code: the
// engine reads its name and wire API; requests go out through the
// model-call activity, never through Stream.
type stubProvider struct {
	name string
	api  llm.API
}

func (p stubProvider) Name() string { return p.name }
func (p stubProvider) API() llm.API { return p.api }
func (p stubProvider) Stream(context.Context, *llm.Request, func(llm.Delta)) (*llm.Response, error) {
	return nil, errors.New("durable: the workflow's provider never streams: model calls run as activities")
}

// specTool is a tool as the workflow knows it: a spec and traits. Its calls
// run as tool-call activities on a worker, never here.
type specTool struct {
	spec   llm.ToolSpec
	traits tool.Traits
}

func (t specTool) Spec() llm.ToolSpec  { return t.spec }
func (t specTool) Traits() tool.Traits { return t.traits }
func (t specTool) Run(context.Context, *tool.Env, json.RawMessage) (tool.Result, error) {
	return tool.Result{}, fmt.Errorf("durable: tool %s runs as an activity on a worker, not in workflow code", t.spec.Name)
}
