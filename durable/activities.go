package durable

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/session"
)

// WorkerOptions configure how a worker opens the workspaces sessions name.
type WorkerOptions struct {
	// Options is the template of every workspace the worker opens: a
	// Spec's non-zero fields replace Dir, Agent, ProviderName, Model,
	// Layout, Mode, MaxTurns and MaxSessionTokens. Set Store (the session
	// store the Record activity writes: nil = one in-memory store per
	// workspace, lost with the worker), Trust (who may run the commands a
	// workspace's files name) and the provider's key or Provider here.
	Options strata.Options
	// IdleWorkspace is how long a workspace that no running activity uses
	// stays open on the worker (its MCP server processes running, its
	// files watched): then it is closed, and the next activity that needs
	// it opens it again (agentSpawn hooks run again; the carried hooks'
	// states travel with the workflow). 0 = DefaultIdleWorkspace; negative
	// = open until Close. A fleet whose sessions each have a workspace of
	// their own (evaluation runs) would otherwise keep every one open.
	IdleWorkspace time.Duration
}

// DefaultIdleWorkspace is WorkerOptions.IdleWorkspace's default.
const DefaultIdleWorkspace = 10 * time.Minute

// Activities are the session workflow's activities on one worker, with the
// workspaces they opened (one per distinct Spec workspace, closed when idle
// for WorkerOptions.IdleWorkspace, and by Close). Their methods are safe
// for concurrent use.
type Activities struct {
	opts    WorkerOptions
	mu      sync.Mutex
	ws      map[string]*opened
	sweeper sync.Once     // starts the idle sweep on the first workspace opened
	stop    chan struct{} // closed by Close: ends the idle sweep

	smu      sync.Mutex
	sessions map[string]*shared // sessions the stage executions on this worker share, by id

	carry carryState // the carried callbacks' hook locks and initial states (carryworker.go)
}

// opened is a workspace a worker opened for a spec, and the loop
// configuration its activities share (provider, tools, environment,
// permission checks; no bus, no approver).
type opened struct {
	once sync.Once
	ws   *strata.Workspace
	cfg  agent.Config
	err  error
	// users counts the running activities using it; last is when the
	// last of them ended (both under Activities.mu).
	users int
	last  time.Time
}

// Register registers the session workflow, the stage workflows and their
// activities on w and
// returns the activities, whose Close closes the workspaces they opened
// (call it after the worker stopped).
func Register(w worker.Registry, o WorkerOptions) *Activities {
	a := newActivities(o)
	w.RegisterWorkflowWithOptions(SessionWorkflow, workflow.RegisterOptions{Name: SessionWorkflowName})
	w.RegisterActivityWithOptions(a.Prepare, activity.RegisterOptions{Name: PrepareActivity})
	w.RegisterActivityWithOptions(a.ModelCall, activity.RegisterOptions{Name: ModelCallActivity})
	w.RegisterActivityWithOptions(a.ToolCall, activity.RegisterOptions{Name: ToolCallActivity})
	w.RegisterActivityWithOptions(a.Record, activity.RegisterOptions{Name: RecordActivity})
	w.RegisterActivityWithOptions(a.Ping, activity.RegisterOptions{Name: PingActivity})
	w.RegisterActivityWithOptions(a.Hook, activity.RegisterOptions{Name: HookActivity})
	w.RegisterActivityWithOptions(a.Gather, activity.RegisterOptions{Name: GatherActivity})
	w.RegisterActivityWithOptions(a.Turn, activity.RegisterOptions{Name: TurnActivity})
	w.RegisterActivityWithOptions(a.Summarize, activity.RegisterOptions{Name: SummarizeActivity})
	w.RegisterWorkflowWithOptions(StagesWorkflow, workflow.RegisterOptions{Name: StagesWorkflowName})
	w.RegisterWorkflowWithOptions(StageWorkflow, workflow.RegisterOptions{Name: StageWorkflowName})
	w.RegisterActivityWithOptions(a.BeginStages, activity.RegisterOptions{Name: BeginStagesActivity})
	w.RegisterActivityWithOptions(a.BeginStage, activity.RegisterOptions{Name: BeginStageActivity})
	w.RegisterActivityWithOptions(a.FinishStage, activity.RegisterOptions{Name: FinishStageActivity})
	w.RegisterActivityWithOptions(a.SaveStages, activity.RegisterOptions{Name: SaveStagesActivity})
	return a
}

// newActivities returns the activities of a worker with options o.
func newActivities(o WorkerOptions) *Activities {
	return &Activities{opts: o, ws: map[string]*opened{}, stop: make(chan struct{})}
}

// Close closes every workspace the activities opened and ends the idle
// sweep. Call it once, after the worker stopped.
func (a *Activities) Close() error {
	a.mu.Lock()
	select {
	case <-a.stop:
	default:
		close(a.stop)
	}
	all := a.ws
	a.ws = map[string]*opened{}
	a.mu.Unlock()
	var errs []error
	for _, o := range all {
		errs = append(errs, a.closeOpened(o))
	}
	return errors.Join(errs...)
}

// closeOpened closes o's workspace and forgets what the carried callbacks
// kept of it.
func (a *Activities) closeOpened(o *opened) error {
	a.carry.forget(o)
	if o.ws == nil {
		return nil
	}
	return o.ws.Close()
}

// idle is the WorkerOptions.IdleWorkspace in force (0 = never close).
func (a *Activities) idle() time.Duration {
	switch d := a.opts.IdleWorkspace; {
	case d < 0:
		return 0
	case d == 0:
		return DefaultIdleWorkspace
	default:
		return d
	}
}

// sweep closes, every half idle period until Close, the workspaces no
// activity has used for the idle period.
func (a *Activities) sweep(idle time.Duration) {
	t := time.NewTicker(idle / 2)
	defer t.Stop()
	for {
		select {
		case <-a.stop:
			return
		case now := <-t.C:
			var idleOnes []*opened
			a.mu.Lock()
			for k, o := range a.ws {
				if o.users == 0 && !o.last.IsZero() && now.Sub(o.last) >= idle {
					delete(a.ws, k)
					idleOnes = append(idleOnes, o)
				}
			}
			a.mu.Unlock()
			for _, o := range idleOnes {
				if err := a.closeOpened(o); err != nil {
					slog.Warn("durable: closing an idle workspace", "dir", o.ws.Dir(), "err", err)
				}
			}
		}
	}
}

// workspace returns the workspace of spec, opening it on first use, and
// the release the activity calls when it no longer uses it (an idle
// workspace is closed by the sweep).
func (a *Activities) workspace(ctx context.Context, spec Spec) (*opened, func(), error) {
	if idle := a.idle(); idle > 0 {
		a.sweeper.Do(func() { go a.sweep(idle) })
	}
	a.mu.Lock()
	o := a.ws[spec.key()]
	if o == nil {
		o = &opened{}
		a.ws[spec.key()] = o
	}
	o.users++
	a.mu.Unlock()
	var once sync.Once
	release := func() {
		once.Do(func() {
			a.mu.Lock()
			o.users--
			o.last = time.Now()
			a.mu.Unlock()
		})
	}
	o.once.Do(func() {
		opts := spec.options(a.opts.Options)
		ws, err := strata.Open(context.WithoutCancel(ctx), opts)
		if err != nil {
			o.err = err
			return
		}
		cfg, err := ws.LoopConfig(opts.Mode, workerApprover{}, nil)
		if err != nil {
			ws.Close()
			o.err = err
			return
		}
		o.ws, o.cfg = ws, cfg
	})
	if o.err != nil {
		release()
		a.mu.Lock()
		if a.ws[spec.key()] == o {
			delete(a.ws, spec.key()) // the next activity opens it again (the files may have been fixed)
		}
		a.mu.Unlock()
		msg := fmt.Sprintf("durable: open workspace %q for session %s: %v", spec.Dir, spec.SessionID, o.err)
		var ce *strata.ConfigError
		if errors.As(o.err, &ce) { // a configuration error will not go away by retrying the same activity
			return nil, nil, temporal.NewNonRetryableApplicationError(msg, "config", o.err)
		}
		return nil, nil, errors.New(msg)
	}
	return o, release, nil
}

// Prepare opens the spec's workspace, creates the stored session when it
// does not exist (or resumes it), and returns the Blueprint the workflow
// builds its engine from. A session whose last turn has tool calls a
// crash cut off fails (finish it with `strata sessions resume` first).
func (a *Activities) Prepare(ctx context.Context, spec Spec) (Blueprint, error) {
	o, release, err := a.workspace(ctx, spec)
	if err != nil {
		return Blueprint{}, err
	}
	defer release()
	if err := a.ensureSession(ctx, o, spec); err != nil {
		return Blueprint{}, err
	}
	s, err := o.ws.ResumeSession(ctx, spec.SessionID, strata.SessionOptions{Mode: spec.Mode})
	if err != nil {
		return Blueprint{}, fmt.Errorf("durable: open stored session %s: %w", spec.SessionID, err)
	}
	st, pending := s.LoopState(), s.Pending()
	if err := s.Close(); err != nil {
		return Blueprint{}, fmt.Errorf("durable: close stored session %s: %w", spec.SessionID, err)
	}
	if len(pending) > 0 {
		return Blueprint{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"durable: stored session %s has %d tool calls a crash cut off (first: %s %s): finish them with `strata sessions resume %s` before running it on Temporal",
			spec.SessionID, len(pending), pending[0].Name, pending[0].ID, spec.SessionID), "pending", nil)
	}
	bp := blueprint(spec.SessionID, o.cfg, st)
	bp.KeepAlive = keepAliveOf(a.opts.Options.KeepAlive, o.ws.Offline(), o.cfg)
	if bp.HookStates, err = a.initialStates(o); err != nil {
		return Blueprint{}, temporal.NewNonRetryableApplicationError(err.Error(), "state", err)
	}
	return bp, nil
}

// maxDeltaBytes bounds the deltas a model-call result carries back (the
// event log's MessageUpdate events); a larger response returns none.
const maxDeltaBytes = 1 << 20

// ModelCall streams the request from the worker's provider and returns the
// response, its deltas and the worker's authority verdict per tool_use.
// The workspace's stream_response delta hooks run here on each delta as it
// arrives; the deltas returned are theirs, with markers for a hook that
// failed or a guard that cut the response off (docs/durable.md, "Carried
// callbacks").
// Provider errors are classified for Temporal's retry: 408/409/429/5xx
// (Anthropic 529 included) and network errors retry, after the provider's
// Retry-After capped at MaxRetryDelay when it sent one; other 4xx and a
// cancelled call do not.
func (a *Activities) ModelCall(ctx context.Context, in ModelCallInput) (ModelCallOutput, error) {
	if in.Request == nil {
		return ModelCallOutput{}, temporal.NewNonRetryableApplicationError("durable: model call without a request", "input", nil)
	}
	o, release, err := a.workspace(ctx, in.Spec)
	if err != nil {
		return ModelCallOutput{}, err
	}
	defer release()
	var out ModelCallOutput
	size := 0
	stop := heartbeat(ctx, func() any { return nil }) // a model may think for minutes before its first delta
	defer stop()
	sctx, span := a.chatSpan(ctx, in, o.cfg.Provider.Name())
	sctx, cut := context.WithCancel(sctx)
	defer cut()
	hooks, index := deltaHooks(o.cfg) // stream_response delta hooks run here, as the deltas arrive (carryworker.go)
	var denied *llm.Delta
	resp, err := o.cfg.Provider.Stream(sctx, in.Request, func(d llm.Delta) {
		if denied != nil {
			return
		}
		if len(hooks) > 0 {
			failed, pd, den := runDeltaHooks(sctx, hooks, index, in, d)
			out.Deltas, denied = append(out.Deltas, failed...), den
			if denied != nil {
				cut()
				return
			} else if pd == nil {
				return
			}
			d = *pd
		}
		size += len(d.Text) + len(d.ID) + len(d.Name)
		out.Deltas = append(out.Deltas, d)
	})
	endChat(span, resp, err)
	if size > maxDeltaBytes {
		out.Deltas = nil
	}
	if denied != nil { // the workflow's proxy of the guard cuts the turn off at this delta; the response is never used
		out.Deltas, out.Response = append(out.Deltas, *denied), &llm.Response{}
		return out, nil
	}
	if err != nil {
		return ModelCallOutput{}, providerError(err)
	}
	out.Response = resp
	for _, c := range resp.Message.ToolUses() {
		v := Verdict{Allowed: o.cfg.AllowedTool == nil || o.cfg.AllowedTool(c.Name), Person: o.ws.PersonOnly(c)}
		if o.cfg.Denied != nil {
			v.Denied = o.cfg.Denied(c)
		}
		if o.cfg.PreApproved != nil {
			v.PreApproved = o.cfg.PreApproved(c)
		}
		if out.Verdicts == nil {
			out.Verdicts = map[string]Verdict{}
		}
		out.Verdicts[c.ID] = v
	}
	return out, nil
}

// providerError classifies a provider's error for Temporal's retry policy.
func providerError(err error) error {
	var api *llm.APIError
	switch {
	case errors.Is(err, context.Canceled):
		return temporal.NewNonRetryableApplicationError(err.Error(), "cancelled", err)
	case errors.As(err, &api) && api.StatusCode != 0 && !api.Retryable():
		return temporal.NewNonRetryableApplicationError(err.Error(), fmt.Sprintf("http_%d", api.StatusCode), err)
	case errors.As(err, &api) && api.RetryAfter > 0:
		return temporal.NewApplicationErrorWithOptions(err.Error(), fmt.Sprintf("http_%d", api.StatusCode),
			temporal.ApplicationErrorOptions{Cause: err, NextRetryDelay: min(api.RetryAfter, MaxRetryDelay)})
	case errors.As(err, &api):
		return temporal.NewApplicationError(err.Error(), fmt.Sprintf("http_%d", api.StatusCode), err)
	}
	return temporal.NewApplicationError(err.Error(), "provider", err)
}

// workerApprover stands for the person on a worker: the workspace's
// permission checks then know approvals are asked (kiro's person-only
// calls are asked about, not refused). The workflow asks, through its
// approve update; nothing on a worker calls it.
type workerApprover struct{}

// Approve refuses: approvals are answered in the session workflow.
func (workerApprover) Approve(context.Context, agent.ApprovalRequest) (agent.Decision, error) {
	return agent.RejectOnce, errors.New("durable: approvals are answered through the session workflow's approve update, not on a worker")
}

// heartbeat heartbeats the running activity four times per heartbeat
// timeout (every 5 s without one), with detail's value, until stop.
func heartbeat(ctx context.Context, detail func() any) (stop func()) {
	every := 5 * time.Second
	if t := activity.GetInfo(ctx).HeartbeatTimeout; t > 0 {
		every = t / 4
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx, detail())
			}
		}
	}()
	return func() { close(done) }
}

// ToolCall runs one tool_use with the workspace's real registry,
// environment and tool_call hooks (kiro preToolUse/postToolUse) on this worker (the tool sees the tool_use id as
// tool.Env.CallID: its idempotency key), heartbeating every few seconds
// with its latest progress line; a cancelled workflow cancels the call.
func (a *Activities) ToolCall(ctx context.Context, in ToolCallInput) (agent.ToolOutput, error) {
	o, release, err := a.workspace(ctx, in.Spec)
	if err != nil {
		return agent.ToolOutput{}, err
	}
	defer release()
	cfg := o.cfg
	env := *cfg.Env // a person's approval of this call, given in the workflow, reaches the tool here
	env.PersonApproved = func(id string) bool { return in.PersonApproved && id == in.Call.ID }
	cfg.Env = &env
	var mu sync.Mutex
	progress := ""
	cfg.Bus = event.NewBus()
	cfg.Bus.SubscribeSync(func(e event.Event) {
		if e.Kind == event.ToolExecutionUpdate {
			mu.Lock()
			progress = e.Text
			mu.Unlock()
		}
	})
	eng, err := agent.NewEngine(cfg, nil)
	if err != nil {
		return agent.ToolOutput{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("durable: tool %s: build the engine: %v", in.Call.Name, err), "config", err)
	}
	stop := heartbeat(ctx, func() any {
		mu.Lock()
		defer mu.Unlock()
		return progress
	})
	defer stop()
	activity.RecordHeartbeat(ctx, "started")
	call := in.Call
	sctx, span := a.toolSpan(ctx, in)
	out := runToolHooked(sctx, eng, o.cfg.Hooks, in)
	if out.Result.IsError {
		span.SetAttributes(semconv.ErrorTypeKey.String("tool_error"))
	}
	span.End()
	if ctx.Err() != nil {
		return out, temporal.NewCanceledError(fmt.Sprintf("durable: tool %s (%s) was cancelled", call.Name, call.ID))
	}
	return out, nil
}

// Record writes whole turns' events to the worker's session store through a
// session.Recorder, skipping the turns the store already holds (by loop
// id and turn index), so a retried record stores each turn once.
func (a *Activities) Record(ctx context.Context, in RecordInput) error {
	o, release, err := a.workspace(ctx, in.Spec)
	if err != nil {
		return err
	}
	defer release()
	store := o.ws.Store()
	rec := session.NewRecorder(store, in.Spec.SessionID)
	next := map[string]int{}
	for _, e := range in.Events {
		if e.Turn != nil {
			n, ok := next[e.Turn.LoopID]
			if !ok {
				n, err = store.NextTurnIndex(ctx, e.Turn.LoopID)
				if errors.Is(err, session.ErrNotFound) {
					n, err = 0, nil
				}
				if err != nil {
					return fmt.Errorf("durable: session %s: read loop %s: %w", in.Spec.SessionID, e.Turn.LoopID, err)
				}
				next[e.Turn.LoopID] = n
			}
			if e.Turn.Index < n {
				continue
			}
		}
		if e.Kind == event.CacheKeepAlive {
			if done, err := storedPing(ctx, store, in.Spec.SessionID, e); err != nil {
				return fmt.Errorf("durable: session %s: read its stored pings: %w", in.Spec.SessionID, err)
			} else if done {
				continue
			}
		}
		if err := rec.Observe(ctx, e); err != nil {
			return fmt.Errorf("durable: session %s: record event %d (%s): %w", in.Spec.SessionID, e.Seq, e.Kind, err)
		}
	}
	return nil
}
