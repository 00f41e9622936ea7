package workflow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/session"
)

// Interactor answers grantStageTool interactions: a stage's call of a tool
// outside its allowedTools with no token left (docs/workflows.md,
// "authority"). The CLI's is a terminal prompt; with none, every such call
// is blocked as GrantDenied.
type Interactor interface {
	GrantStageTool(ctx context.Context, req GrantRequest) (GrantAnswer, error)
}

// InteractorFunc adapts a function to Interactor.
type InteractorFunc func(ctx context.Context, req GrantRequest) (GrantAnswer, error)

// GrantStageTool implements Interactor.
func (f InteractorFunc) GrantStageTool(ctx context.Context, req GrantRequest) (GrantAnswer, error) {
	return f(ctx, req)
}

// GrantRequest is one grantStageTool interaction.
type GrantRequest struct {
	Workflow, Stage string
	Call            llm.Block // the proposed tool_use
}

// GrantAnswer is an interactor's answer.
type GrantAnswer string

// Grant answers: once grants this call, stage every call of the tool for
// the rest of the stage execution; denied and deferred block it.
const (
	GrantOnce     GrantAnswer = "once"
	GrantStage    GrantAnswer = "stage"
	GrantDeny     GrantAnswer = "denied"
	GrantDeferred GrantAnswer = "deferred"
)

// Options configure Run and Resume.
type Options struct {
	// Interactor answers grant interactions (nil = none: GrantDenied).
	Interactor Interactor
	// OnEvent receives the audit events, in order (serialised).
	OnEvent func(Event)
	// OnLoopEvent receives every event of the stages' loops (the forks'
	// buses: messages, tool calls), with the stage's name; nil = none.
	// Calls of parallel siblings are serialised.
	OnLoopEvent func(stage string, e event.Event)
}

// ErrFailed is returned (wrapped) when a workflow ends with outcome fail.
var ErrFailed = errors.New("workflow failed")

// runner is one workflow run.
type runner struct {
	ws    *strata.Workspace
	sess  *strata.Session
	store session.Store
	def   *Definition
	opts  Options

	stMu   sync.Mutex // guards st
	st     *State
	evMu   sync.Mutex  // serialises events
	forkMu *sync.Mutex // one Session.Fork of the session at a time
}

// Run runs workflow d in session s of workspace ws with inputs (declared
// names only; defaults filled), storing its state in the workspace's store
// after every stage's Exit. It returns the final state, and an error
// wrapping ErrFailed when the workflow's outcome is fail, the context's
// error when it was cancelled (state kept: Resume goes on), or the error
// that stopped it.
func Run(ctx context.Context, ws *strata.Workspace, s *strata.Session, d *Definition, inputs map[string]string, o Options) (*State, error) {
	st, err := Begin(d, inputs)
	if err != nil {
		return nil, err
	}
	r := &runner{ws: ws, sess: s, store: ws.Store(), def: d, opts: o, st: st, forkMu: &sync.Mutex{}}
	if err := r.save(ctx); err != nil {
		return st, err
	}
	return r.run(ctx)
}

// Resume goes on with the workflow stored in session s (see Run): from the
// entry after the last completed one; stages that completed are not run
// again. It fails with ErrNoState when s has none, and returns the state
// at once when the workflow already ended.
func Resume(ctx context.Context, ws *strata.Workspace, s *strata.Session, o Options) (*State, error) {
	st, err := LoadState(ctx, ws.Store(), s.ID())
	if err != nil {
		return nil, err
	}
	d, err := Parse(st.File, []byte(st.Source))
	if err != nil {
		return st, fmt.Errorf("resume: the stored definition: %w", err)
	}
	for _, m := range []*map[string]int{&st.RetriesUsed, &st.Attempts} {
		if *m == nil {
			*m = map[string]int{}
		}
	}
	if st.Slots == nil {
		st.Slots = map[string]Slot{}
	}
	r := &runner{ws: ws, sess: s, store: ws.Store(), def: d, opts: o, st: st, forkMu: &sync.Mutex{}}
	if st.Next == "" {
		return st, r.result()
	}
	return r.run(ctx)
}

// result is the error Run returns for an ended workflow.
func (r *runner) result() error {
	if r.st.Outcome == Fail {
		return fmt.Errorf("workflow %s: %w", r.def.Name, ErrFailed)
	}
	return nil
}

// run runs entries from st.Next until the workflow ends.
func (r *runner) run(ctx context.Context) (*State, error) {
	for r.st.Next != "" {
		e, idx := r.def.find(r.st.Next)
		if e == nil {
			return r.st, fmt.Errorf("workflow %s: the state names stage %q, which the definition does not have", r.def.Name, r.st.Next)
		}
		var outcome string
		var err error
		if e.IsGroup() {
			outcome, err = r.group(ctx, e)
		} else {
			r.emit(ctx, Event{Kind: SessionTurnStart, Stage: e.Name})
			outcome, err = r.stage(ctx, e, "")
			r.emit(ctx, Event{Kind: SessionTurnEnd, Stage: e.Name, Outcome: outcomeOr(outcome, err)})
		}
		if err != nil {
			if ctx.Err() != nil {
				r.emit(ctx, Event{Kind: WorkflowExit, Outcome: Cancelled, Reason: context.Cause(ctx).Error()})
				return r.st, context.Cause(ctx)
			}
			return r.st, err
		}
		r.stMu.Lock()
		advance(r.def, r.st, e, idx, outcome)
		r.stMu.Unlock()
		if err := r.save(ctx); err != nil {
			return r.st, err
		}
	}
	r.emit(ctx, Event{Kind: WorkflowExit, Outcome: r.st.Outcome})
	return r.st, r.result()
}

func outcomeOr(outcome string, err error) string {
	if err != nil {
		return Cancelled
	}
	return outcome
}

// transition returns the entry outcome leads to after entry e (at index
// idx) of d, "" for the end.
func transition(d *Definition, e *Stage, idx int, outcome string) string {
	to := ""
	switch outcome {
	case OK:
		to = e.Next.OK
		if to == "" && idx+1 < len(d.Stages) {
			to = d.Stages[idx+1].Name
		}
	case Retry:
		to = e.Next.Retry
		if to == "" {
			to = e.Name
		}
	case Fail:
		to = e.Next.Fail
	}
	if to == End {
		to = ""
	}
	return to
}

// group runs a parallel group as one compound session turn: the siblings
// concurrently (each on its own fork), strictly cancelled together when
// one fails; then the join. A sibling's retry runs it again at once.
func (r *runner) group(ctx context.Context, g *Stage) (string, error) {
	r.emit(ctx, Event{Kind: SessionTurnStart, Stage: g.Name})
	gctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcome := OK
	var firstErr error
	// A resumed group: siblings that exited keep their outcome; one that
	// failed failed the group.
	r.stMu.Lock()
	for _, sib := range g.Parallel {
		if slices.Contains(r.st.Done, sib.Name) && r.st.Slots[sib.Name].Outcome == Fail {
			outcome = Fail
		}
	}
	r.stMu.Unlock()
	for i := range g.Parallel {
		sib := &g.Parallel[i]
		r.stMu.Lock()
		done := slices.Contains(r.st.Done, sib.Name)
		r.stMu.Unlock()
		mu.Lock()
		failed := outcome == Fail // a sibling started before may have failed already
		mu.Unlock()
		if done || failed {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, err := r.member(gctx, sib, g.Name)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil && gctx.Err() == nil:
				firstErr = err
				cancel(fmt.Errorf("sibling %s of group %s: %w", sib.Name, g.Name, err))
			case err == nil && o == Fail:
				outcome = Fail
				cancel(fmt.Errorf("strict cancellation: sibling %s of group %s failed", sib.Name, g.Name))
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		r.emit(ctx, Event{Kind: SessionTurnEnd, Stage: g.Name, Outcome: Cancelled})
		return "", context.Cause(ctx)
	}
	if firstErr != nil {
		r.emit(ctx, Event{Kind: SessionTurnEnd, Stage: g.Name, Outcome: Fail})
		return "", firstErr
	}
	r.stMu.Lock()
	joined := g.Join != nil && slices.Contains(r.st.Done, g.Join.Name)
	r.stMu.Unlock()
	switch {
	case outcome == OK && joined:
		r.stMu.Lock()
		outcome = r.st.Slots[g.Join.Name].Outcome
		r.stMu.Unlock()
	case outcome == OK && g.Join != nil:
		o, err := r.member(ctx, g.Join, g.Name)
		if err != nil {
			r.emit(ctx, Event{Kind: SessionTurnEnd, Stage: g.Name, Outcome: Cancelled})
			return "", err
		}
		outcome = o
	}
	r.emit(ctx, Event{Kind: SessionTurnEnd, Stage: g.Name, Outcome: outcome})
	return outcome, nil
}

// member runs a sibling or join until its outcome is ok or fail (a retry
// runs it again), recording it among the group's done stages.
func (r *runner) member(ctx context.Context, s *Stage, group string) (string, error) {
	for {
		o, err := r.stage(ctx, s, group)
		if err != nil {
			return "", err
		}
		if o == Retry {
			continue
		}
		r.stMu.Lock()
		r.st.Done = append(r.st.Done, s.Name)
		r.stMu.Unlock()
		return o, r.save(ctx)
	}
}
