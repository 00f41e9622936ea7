package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/strata-agent/strata/session"
)

// State is a workflow run's durable state, stored as JSON in the session
// store (session.WorkflowStates) after every Exit: what a resume needs to
// go on from the last completed stage.
type State struct {
	// Workflow is the definition's name; File and Source the file it was
	// read from and its text (a resume parses Source again).
	Workflow string `json:"workflow"`
	File     string `json:"file,omitempty"`
	Source   string `json:"source"`
	// Inputs are the run's inputs, defaults filled.
	Inputs map[string]string `json:"inputs"`
	// Next is the top-level entry to run next ("" once the workflow ended).
	Next string `json:"next"`
	// Done are the stages of a parallel group Next that already exited
	// (a resume runs only the others).
	Done []string `json:"done,omitempty"`
	// Slots are the state slots by stage name, written at Exit.
	Slots map[string]Slot `json:"slots"`
	// RetriesUsed counts the retries each stage's Assert gave.
	RetriesUsed map[string]int `json:"retries_used,omitempty"`
	// Attempts counts each stage's executions that reached Exit.
	Attempts map[string]int `json:"attempts,omitempty"`
	// Feedback is the reason of the last retry, for the stage the retry
	// leads to (StageContext.Feedback); cleared by any other outcome.
	Feedback string `json:"feedback,omitempty"`
	// Outcome is the workflow's outcome once it ended: ok or fail.
	Outcome string `json:"outcome,omitempty"`
}

// Slot is a stage's state slot: what its Exit wrote.
type Slot struct {
	Outcome string `json:"outcome"`
	Attempt int    `json:"attempt"`
	CapHit  bool   `json:"cap_hit,omitempty"`
	// Completion is the completion tool's input (JSON), or null when Act
	// ended without it (turn cap, no call).
	Completion json.RawMessage `json:"completion,omitempty"`
	// Reason is why Assert did not give ok.
	Reason string `json:"reason,omitempty"`
}

// ErrNoState is returned by LoadState when the session has no workflow.
var ErrNoState = errors.New("workflow: the session has no workflow state")

// LoadState returns the workflow state stored for session id in store. It
// fails with ErrNoState when there is none, and when store does not keep
// workflow states.
func LoadState(ctx context.Context, store session.Store, id string) (*State, error) {
	ws, ok := store.(session.WorkflowStates)
	if !ok {
		return nil, fmt.Errorf("workflow: the session store %T keeps no workflow state: %w", store, ErrNoState)
	}
	b, err := ws.WorkflowState(ctx, id)
	if errors.Is(err, session.ErrNotFound) {
		return nil, fmt.Errorf("session %s: %w", id, ErrNoState)
	}
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("workflow state of session %s is unreadable: %w", id, err)
	}
	return &st, nil
}

// save writes the state to the store (nothing when the store keeps none).
func (r *runner) save(ctx context.Context) error {
	r.stMu.Lock()
	b, err := json.Marshal(r.st)
	r.stMu.Unlock()
	if err != nil {
		return fmt.Errorf("workflow %s: encode state: %w", r.def.Name, err)
	}
	return saveJSON(ctx, r.store, r.sess.ID(), r.def.Name, b)
}

// slots returns the state slots as template data: each completion decoded.
func (r *runner) slots() map[string]any {
	r.stMu.Lock()
	defer r.stMu.Unlock()
	out := map[string]any{}
	for name, s := range r.st.Slots {
		var v any
		if len(s.Completion) > 0 {
			_ = json.Unmarshal(s.Completion, &v)
		}
		out[name] = v
	}
	return out
}
