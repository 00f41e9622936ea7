package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/session"
)

// The steps of a run, for drivers that keep the State themselves and run
// each stage execution elsewhere (package durable: a Temporal workflow
// taking the transitions, a child workflow per stage execution;
// docs/durable.md). Run and Resume are these steps in one process.

// Begin returns the first state of a run of d with inputs (declared names
// only; defaults filled), as Run stores it before its first stage. It
// fails like Run on bad inputs.
func Begin(d *Definition, inputs map[string]string) (*State, error) {
	in, err := d.Resolve(inputs)
	if err != nil {
		return nil, err
	}
	return &State{Workflow: d.Name, File: d.File, Source: string(d.Source), Inputs: in, Next: d.Stages[0].Name,
		Slots: map[string]Slot{}, RetriesUsed: map[string]int{}, Attempts: map[string]int{}}, nil
}

// BeginStage is the first step of one execution of stage — a top-level
// stage, or a sibling or the join of the parallel group named group — of
// the run whose state is st, for drivers that run Act elsewhere
// (docs/workflows.md, "lifecycle"): Setup, the check gate (its command
// runs here, in ws's directory) and Init, or Exit at once when the gate
// blocks (Begun.Exit, with the state after it). The events go to
// Begun.Events. st is not changed. An error means the stage did not start
// (cancelled, a template that does not render, an unknown stage).
func BeginStage(ctx context.Context, ws *strata.Workspace, st *State, stage, group string) (*Begun, error) {
	var evs []Event
	r, e, err := stageRunner(ws, nil, st, stage, group, Options{OnEvent: func(e Event) { evs = append(evs, e) }}, nil)
	if err != nil {
		return nil, err
	}
	b, err := r.begin(ctx, e, group)
	if err != nil {
		return nil, err
	}
	b.Events = evs
	return b, nil
}

// FinishStage is the last step of the execution b began (BeginStage) after
// Act ran elsewhere and handed back a: Assert (its command runs here; a
// judge runs on a fork of session s, which may be nil for a stage without
// one), StageAssertOutcome and Exit. It returns the outcome and the state
// after Exit (st, the state BeginStage was given, is not changed) and the
// events. An error means the stage did not reach Exit. forks is held
// around the judge's Session.Fork: drivers running several stages of one
// Session at once pass the same mutex (nil = a mutex of its own).
func FinishStage(ctx context.Context, ws *strata.Workspace, s *strata.Session, st *State, b *Begun, a *Acted, forks *sync.Mutex) (*Exited, []Event, error) {
	var evs []Event
	r, e, err := stageRunner(ws, s, st, b.Stage, b.Group, Options{OnEvent: func(e Event) { evs = append(evs, e) }}, forks)
	if err != nil {
		return nil, nil, err
	}
	outcome, err := r.finish(ctx, e, b.Group, b, a)
	if err != nil {
		return nil, evs, err
	}
	return &Exited{Outcome: outcome, State: r.st}, evs, nil
}

// StageOf parses st's definition and returns it with its stage named
// stage (in group; "" = top-level); an unknown stage or group is an error
// naming it.
func StageOf(st *State, stage, group string) (*Definition, *Stage, error) {
	d, err := Parse(st.File, []byte(st.Source))
	if err != nil {
		return nil, nil, fmt.Errorf("workflow %s: the state's definition: %w", st.Workflow, err)
	}
	e := d.stage(stage, group)
	if e == nil {
		return nil, nil, fmt.Errorf("workflow %s has no stage %q in group %q", d.Name, stage, group)
	}
	return d, e, nil
}

// stageRunner returns a runner of one stage execution on a copy of st,
// and the stage.
func stageRunner(ws *strata.Workspace, s *strata.Session, st *State, stage, group string, o Options, forks *sync.Mutex) (*runner, *Stage, error) {
	d, e, err := StageOf(st, stage, group)
	if err != nil {
		return nil, nil, err
	}
	b, err := json.Marshal(st)
	if err != nil {
		return nil, nil, fmt.Errorf("workflow %s: copy the state: %w", d.Name, err)
	}
	cp := &State{}
	if err := json.Unmarshal(b, cp); err != nil {
		return nil, nil, fmt.Errorf("workflow %s: copy the state: %w", d.Name, err)
	}
	for _, m := range []*map[string]int{&cp.RetriesUsed, &cp.Attempts} {
		if *m == nil {
			*m = map[string]int{}
		}
	}
	if cp.Slots == nil {
		cp.Slots = map[string]Slot{}
	}
	if forks == nil {
		forks = &sync.Mutex{}
	}
	return &runner{ws: ws, sess: s, store: ws.Store(), def: d, opts: o, st: cp, forkMu: forks}, e, nil
}

// stage returns the stage named name: top-level when group is "", else a
// sibling or the join of group (nil when there is none).
func (d *Definition) stage(name, group string) *Stage {
	if group == "" {
		e, _ := d.find(name)
		if e == nil || e.IsGroup() {
			return nil
		}
		return e
	}
	g, _ := d.find(group)
	if g == nil || !g.IsGroup() {
		return nil
	}
	for i := range g.Parallel {
		if g.Parallel[i].Name == name {
			return &g.Parallel[i]
		}
	}
	if g.Join != nil && g.Join.Name == name {
		return g.Join
	}
	return nil
}

// Advance takes the outcome of top-level entry as Run does after each
// entry: the transition to the next entry ("" at the end), the feedback of
// a retry for the stage it leads to, the group's done siblings cleared,
// the workflow's outcome once it ended. It changes st and returns the next
// entry; an entry d does not have is an error naming it.
func Advance(d *Definition, st *State, entry, outcome string) (string, error) {
	e, idx := d.find(entry)
	if e == nil {
		return "", fmt.Errorf("workflow %s: the state names stage %q, which the definition does not have", d.Name, entry)
	}
	return advance(d, st, e, idx, outcome), nil
}

// advance is Advance for the entry e at index idx (the caller holds the
// state's lock).
func advance(d *Definition, st *State, e *Stage, idx int, outcome string) string {
	next := transition(d, e, idx, outcome)
	st.Next, st.Done, st.Feedback = next, nil, ""
	if outcome == Retry {
		st.Feedback = st.Slots[e.Name].Reason
	}
	if next == "" {
		st.Outcome = OK
		if outcome == Fail {
			st.Outcome = Fail
		}
	}
	return next
}

// SaveState stores st as session id's workflow state in store: what
// LoadState and Resume read. A store that keeps no workflow states
// (session.WorkflowStates) stores nothing.
func SaveState(ctx context.Context, store session.Store, id string, st *State) error {
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("workflow %s: encode state: %w", st.Workflow, err)
	}
	return saveJSON(ctx, store, id, st.Workflow, b)
}

// saveJSON writes an encoded state, even when ctx is cancelled: an Exit
// that ran must not be lost.
func saveJSON(ctx context.Context, store session.Store, id, workflow string, b []byte) error {
	ws, ok := store.(session.WorkflowStates)
	if !ok {
		return nil
	}
	if err := ws.SaveWorkflowState(context.WithoutCancel(ctx), id, b); err != nil {
		return fmt.Errorf("workflow %s: save state: %w", workflow, err)
	}
	return nil
}
