package durable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/session"
	sm "github.com/strata-agent/strata/workflow"
)

// Names of the stage workflows (package workflow's state machines on
// Temporal, docs/durable.md "stage workflows") and their activities.
const (
	// StagesWorkflowName is the parent workflow: it takes the state
	// machine's transitions and runs each stage execution as a child.
	StagesWorkflowName = "strata.Stages"
	// StageWorkflowName is the child workflow of one stage execution.
	StageWorkflowName = "strata.Stage"
	// Activity type names.
	BeginStagesActivity = "strata.BeginStages"
	BeginStageActivity  = "strata.BeginStage"
	FinishStageActivity = "strata.FinishStage"
	SaveStagesActivity  = "strata.SaveStages"
	// StagesIDPrefix prefixes a stage workflow's id: "strata-stages-S"
	// runs in session S.
	StagesIDPrefix = "strata-stages-"
)

// StagesInput is the stage workflow's input: the workspace and session
// (Spec; the session's store keeps the state machine's state, as `strata
// workflow run` does) and the definition's text.
type StagesInput struct {
	Spec Spec `json:"spec"`
	// File names the definition (for messages); Source is its text.
	File   string            `json:"file,omitempty"`
	Source string            `json:"source"`
	Inputs map[string]string `json:"inputs,omitempty"`
}

// StageInput is one stage execution's input: the state machine's state
// when it starts, the stage and its parallel group ("" = top-level).
type StageInput struct {
	Spec  Spec      `json:"spec"`
	State *sm.State `json:"state"`
	Stage string    `json:"stage"`
	Group string    `json:"group,omitempty"`
}

// StageResult is one stage execution's outcome and the state after its
// Exit.
type StageResult struct {
	Outcome string    `json:"outcome"`
	State   *sm.State `json:"state"`
}

// StagesStateQuery is the parent stage workflow's query (argument: a byte
// offset) returning a Part of the JSON of its whole state: how a client
// reads a final state too large for the workflow's result (boundState).
const StagesStateQuery = "stages_state"

// StagesQuery is the parent stage workflow's query (arguments: the index
// of the first event wanted, and the byte offset of its Part) returning its
// StagesProgress.
const StagesQuery = "stages"

// StagesProgress is what StagesQuery returns: the parent's own audit
// events from the index asked on (SessionTurnStart and SessionTurnEnd
// around each entry, WorkflowExit), at most MaxEventsPerQuery and
// MaxAnswerBytes of JSON with the children (an event larger than that as a
// Part), and every stage execution's child workflow started so far, in
// order (its events: StageEventsQuery).
type StagesProgress struct {
	Events   []sm.Event   `json:"events,omitempty"`
	Children []StageChild `json:"children,omitempty"`
	// Part is a piece of the JSON of the event at the index asked for,
	// when it alone is too large (Events is then empty); More says events
	// remain after these.
	Part *Part `json:"part,omitempty"`
	More bool  `json:"more,omitempty"`
}

// StageChild names one stage execution's child workflow; Done says it
// ended.
type StageChild struct {
	ID    string `json:"id"`
	Stage string `json:"stage"`
	Group string `json:"group,omitempty"`
	Done  bool   `json:"done,omitempty"`
}

// stagesRun is one run of the parent stage workflow.
type stagesRun struct {
	in       StagesInput
	def      *sm.Definition
	st       *sm.State
	children []StageChild
	audit    []sm.Event
}

// emit adds a parent audit event, dated by workflow time.
func (r *stagesRun) emit(ctx workflow.Context, e sm.Event) {
	e.Time, e.Workflow = workflow.Now(ctx), r.st.Workflow
	r.audit = append(r.audit, e)
}

// StagesWorkflow runs a stage workflow (package workflow) on Temporal: the
// state machine's state lives in this workflow, each stage execution is a
// child workflow (StageWorkflow), the siblings of a parallel group are
// concurrent children, strictly cancelled together when one fails, and
// the state is saved to the session's store after every entry, as `strata
// workflow run` saves it. It returns the final state; a workflow whose
// outcome is fail returns it too (State.Outcome says so). The state
// returned is bounded by MaxAnswerBytes (boundState: without its Source, or
// its Slots, which StagesStateQuery answers).
func StagesWorkflow(ctx workflow.Context, in StagesInput) (*sm.State, error) {
	r := &stagesRun{in: in}
	err := workflow.SetQueryHandler(ctx, StagesQuery, func(after, offset int) (StagesProgress, error) {
		return stagesProgress(r.audit, r.children, after, offset) // bounded by bytes (pages.go)
	})
	if err == nil {
		err = workflow.SetQueryHandler(ctx, StagesStateQuery, func(offset int) (*Part, error) {
			b, err := json.Marshal(r.st)
			if err != nil {
				return nil, fmt.Errorf("durable: encode the stage workflow's state: %w", err)
			}
			return partOf(b, offset, MaxAnswerBytes-answerReserve), nil
		})
	}
	if err != nil {
		return nil, err
	}
	st, err := r.run(ctx, in)
	return boundState(st), err
}

// run is StagesWorkflow's body: it returns the final state.
func (r *stagesRun) run(ctx workflow.Context, in StagesInput) (*sm.State, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3}})
	if err := workflow.ExecuteActivity(actx, BeginStagesActivity, in).Get(ctx, &r.st); err != nil {
		return nil, fmt.Errorf("durable: stage workflow %s in session %s: begin: %w", in.File, in.Spec.SessionID, err)
	}
	for _, m := range []*map[string]int{&r.st.RetriesUsed, &r.st.Attempts} {
		if *m == nil { // empty maps are left out of the JSON
			*m = map[string]int{}
		}
	}
	if r.st.Slots == nil {
		r.st.Slots = map[string]sm.Slot{}
	}
	d, err := sm.Parse(r.st.File, []byte(r.st.Source)) // pure: the same definition on every replay
	if err != nil {
		return r.st, temporal.NewNonRetryableApplicationError(err.Error(), "definition", err)
	}
	r.def = d
	for r.st.Next != "" {
		entry := r.st.Next
		var e *sm.Stage
		for i := range d.Stages {
			if d.Stages[i].Name == entry {
				e = &d.Stages[i]
			}
		}
		if e == nil {
			return r.st, fmt.Errorf("durable: stage workflow %s: the state names stage %q, which the definition does not have", d.Name, entry)
		}
		var outcome string
		r.emit(ctx, sm.Event{Kind: sm.SessionTurnStart, Stage: e.Name})
		if e.IsGroup() {
			outcome, err = r.group(ctx, e)
		} else {
			outcome, err = r.execute(ctx, e.Name, "")
		}
		if err != nil {
			r.emit(ctx, sm.Event{Kind: sm.SessionTurnEnd, Stage: e.Name, Outcome: sm.Cancelled})
			r.emit(ctx, sm.Event{Kind: sm.WorkflowExit, Outcome: sm.Cancelled, Reason: err.Error()})
			return r.st, err
		}
		r.emit(ctx, sm.Event{Kind: sm.SessionTurnEnd, Stage: e.Name, Outcome: outcome})
		if _, err := sm.Advance(d, r.st, entry, outcome); err != nil {
			return r.st, err
		}
		if err := r.save(ctx); err != nil {
			return r.st, err
		}
	}
	r.emit(ctx, sm.Event{Kind: sm.WorkflowExit, Outcome: r.st.Outcome})
	return r.st, nil
}

// execute runs one execution of stage as a child workflow and takes its
// slot, attempt count and retries into the state.
func (r *stagesRun) execute(ctx workflow.Context, stage, group string) (string, error) {
	id := fmt.Sprintf("%s/%s/%d", stagesID(r.in.Spec.SessionID), stage, len(r.children)+1) // from the input: the same on every replay
	r.children = append(r.children, StageChild{ID: id, Stage: stage, Group: group})
	i := len(r.children) - 1
	defer func() { r.children[i].Done = true }()
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: id, WaitForCancellation: true,
		ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL})
	var res StageResult
	err := workflow.ExecuteChildWorkflow(cctx, StageWorkflowName, StageInput{Spec: r.in.Spec, State: r.st, Stage: stage, Group: group}).Get(ctx, &res)
	if err != nil {
		return "", err
	}
	if res.State == nil {
		return "", fmt.Errorf("durable: stage %s returned no state", stage)
	}
	r.st.Slots[stage] = res.State.Slots[stage]
	r.st.Attempts[stage] = res.State.Attempts[stage]
	if n, ok := res.State.RetriesUsed[stage]; ok {
		r.st.RetriesUsed[stage] = n
	}
	return res.Outcome, nil
}

// member runs a sibling or the join of group until its outcome is ok or
// fail (a retry runs it again at once) and records it among the group's
// done stages, as the in-process runner does.
func (r *stagesRun) member(ctx workflow.Context, stage, group string) (string, error) {
	for {
		o, err := r.execute(ctx, stage, group)
		if err != nil {
			return "", err
		}
		if o == sm.Retry {
			continue
		}
		r.st.Done = append(r.st.Done, stage)
		return o, r.save(ctx)
	}
}

// group runs a parallel group: its siblings as concurrent children, all
// cancelled when one fails (strict cancellation), then the join. Siblings
// a resumed state lists as done keep their outcome.
func (r *stagesRun) group(ctx workflow.Context, g *sm.Stage) (string, error) {
	outcome := sm.OK
	for _, sib := range g.Parallel {
		if slices.Contains(r.st.Done, sib.Name) && r.st.Slots[sib.Name].Outcome == sm.Fail {
			outcome = sm.Fail
		}
	}
	gctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	running := 0
	var firstErr error
	for _, sib := range g.Parallel {
		if slices.Contains(r.st.Done, sib.Name) || outcome == sm.Fail {
			continue
		}
		running++
		workflow.Go(gctx, func(c workflow.Context) {
			defer func() { running-- }()
			o, err := r.member(c, sib.Name, g.Name)
			switch {
			case err != nil && gctx.Err() == nil:
				firstErr = err
				cancel()
			case err == nil && o == sm.Fail:
				outcome = sm.Fail
				cancel()
			}
		})
	}
	if err := workflow.Await(ctx, func() bool { return running == 0 }); err != nil {
		return "", err
	}
	if firstErr != nil {
		return "", firstErr
	}
	if outcome == sm.OK && g.Join != nil {
		if slices.Contains(r.st.Done, g.Join.Name) {
			return r.st.Slots[g.Join.Name].Outcome, nil
		}
		return r.member(ctx, g.Join.Name, g.Name)
	}
	return outcome, nil
}

// save stores the state in the session's store on a worker.
func (r *stagesRun) save(ctx workflow.Context) error {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 10}})
	if ctx.Err() != nil {
		actx, _ = workflow.NewDisconnectedContext(actx)
	}
	return workflow.ExecuteActivity(actx, SaveStagesActivity, StageInput{Spec: r.in.Spec, State: r.st}).Get(actx, nil)
}

// heartbeatOf is the heartbeat timeout spec asks for.
func heartbeatOf(spec Spec) time.Duration {
	if spec.ToolHeartbeat > 0 {
		return spec.ToolHeartbeat
	}
	return ToolHeartbeat
}

// BeginStages parses the definition, creates the stored session when it
// does not exist, and returns the state the run starts from: the stored
// one when the session already runs this workflow (a resume), else a new
// one, saved.
func (a *Activities) BeginStages(ctx context.Context, in StagesInput) (*sm.State, error) {
	d, err := sm.Parse(in.File, []byte(in.Source))
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), "definition", err)
	}
	o, release, err := a.workspace(ctx, in.Spec)
	if err != nil {
		return nil, err
	}
	defer release()
	if err := a.ensureSession(ctx, o, in.Spec); err != nil {
		return nil, err
	}
	st, err := sm.LoadState(ctx, o.ws.Store(), in.Spec.SessionID)
	if err == nil && st.Workflow == d.Name && st.Source == in.Source {
		return st, nil
	}
	if st, err = sm.Begin(d, in.Inputs); err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), "inputs", err)
	}
	return st, sm.SaveState(ctx, o.ws.Store(), in.Spec.SessionID, st)
}

// SaveStages stores the state machine's state in the session's store.
func (a *Activities) SaveStages(ctx context.Context, in StageInput) error {
	o, release, err := a.workspace(ctx, in.Spec)
	if err != nil {
		return err
	}
	defer release()
	return sm.SaveState(ctx, o.ws.Store(), in.Spec.SessionID, in.State)
}

// shared is a stored session the stage activities running on this worker
// at the same time share (the begin-stage activity reads a fork's
// blueprint from it, a judge forks it): opening it holds the session's
// writer lease, which allows one holder, so stage activities on other
// workers retry until this worker's are done. The lease is held only for
// those activities, not while a stage's loop runs, so sibling stages run
// on any workers.
type shared struct {
	s     *strata.Session
	refs  int
	forks sync.Mutex // one Fork of s at a time, across the stages sharing it
}

// stageSession returns the worker's open Session of id (see shared) and a
// release that closes it after its last user. A session another process
// holds is a retryable error.
func (a *Activities) stageSession(ctx context.Context, o *opened, id string) (*shared, func(), error) {
	a.smu.Lock()
	defer a.smu.Unlock()
	if a.sessions == nil {
		a.sessions = map[string]*shared{}
	}
	sh := a.sessions[id]
	if sh == nil {
		s, err := o.ws.ResumeSession(ctx, id, strata.SessionOptions{})
		if errors.Is(err, session.ErrBusy) {
			return nil, nil, temporal.NewApplicationError("durable: session "+id+" is held by another worker's stages: "+err.Error(), "busy")
		}
		if err != nil {
			return nil, nil, fmt.Errorf("durable: open session %s for its stages: %w", id, err)
		}
		sh = &shared{s: s}
		a.sessions[id] = sh
	}
	sh.refs++
	var once sync.Once
	return sh, func() {
		once.Do(func() {
			a.smu.Lock()
			defer a.smu.Unlock()
			if sh.refs--; sh.refs == 0 {
				delete(a.sessions, id)
				sh.s.Close()
			}
		})
	}, nil
}

// ensureSession creates spec's stored session when the store lacks it.
func (a *Activities) ensureSession(ctx context.Context, o *opened, spec Spec) error {
	if spec.SessionID == "" {
		return temporal.NewNonRetryableApplicationError("durable: Spec.SessionID is empty: Client.Start sets it", "config", nil)
	}
	store := o.ws.Store()
	_, err := store.LoadSession(ctx, spec.SessionID)
	if errors.Is(err, session.ErrNotFound) && spec.Resume {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"durable: session %s is not in the workers' store: start a new session, or check the id and the workers' --store", spec.SessionID), "not_found", err)
	}
	if errors.Is(err, session.ErrNotFound) {
		meta := session.SessionMeta{ID: spec.SessionID, Title: spec.Title, Cwd: o.ws.Dir(), AgentFile: spec.Agent,
			Provider: o.ws.ProviderName(), Model: o.ws.Model(), Layout: o.ws.Layout()}
		if _, err := store.CreateSession(ctx, meta); err != nil {
			return fmt.Errorf("durable: create stored session %s: %w", spec.SessionID, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("durable: load stored session %s: %w", spec.SessionID, err)
	}
	return nil
}

// stagesID returns the id of session id's stage workflow.
func stagesID(id string) string { return StagesIDPrefix + id }
