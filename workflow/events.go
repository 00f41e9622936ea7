package workflow

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// The SM's audit events (docs/workflows.md, "events"): published on the
// session's bus under these kinds (namespaced, so distinct from the loop's
// turn-stage events) and handed to Options.OnEvent.
const (
	StageEntered         event.Kind = "workflow.stage_entered"
	StageExited          event.Kind = "workflow.stage_exited"
	StageCheckGateResult event.Kind = "workflow.stage_check_gate_result"
	StageAssertOutcome   event.Kind = "workflow.stage_assert_outcome"
	StageGranted         event.Kind = "workflow.stage_granted"
	StageCancelled       event.Kind = "workflow.stage_cancelled"
	WorkflowExit         event.Kind = "workflow.workflow_exit"
	// SessionTurnStart and SessionTurnEnd bound a session turn of the SM:
	// one sequential stage execution (Setup to Exit), or one parallel
	// group (fan-out spawn to the last sibling's or the join's Exit).
	SessionTurnStart event.Kind = "workflow.session_turn_start"
	SessionTurnEnd   event.Kind = "workflow.session_turn_end"
)

// Outcomes of Assert, the check gate, grants and the workflow.
const (
	OK    = "ok"
	Retry = "retry"
	Fail  = "fail"
	// Passed and Blocked are check gate results.
	Passed  = "passed"
	Blocked = "blocked"
	// Granted and GrantDenied are grant outcomes (StageGranted).
	Granted     = "granted"
	GrantDenied = "GrantDenied"
	// Cancelled is a workflow ended by strict cancellation.
	Cancelled = "cancelled"
)

// Event is one audit event of a workflow run.
type Event struct {
	Kind     event.Kind `json:"kind"`
	Time     time.Time  `json:"time"`
	Workflow string     `json:"workflow"`
	Stage    string     `json:"stage,omitempty"`
	Group    string     `json:"group,omitempty"` // the parallel group of a sibling or join
	Attempt  int        `json:"attempt,omitempty"`
	Outcome  string     `json:"outcome,omitempty"`
	CapHit   bool       `json:"cap_hit,omitempty"` // StageAssertOutcome: Act ended at the turn cap
	Tool     string     `json:"tool,omitempty"`    // StageGranted: the tool
	Reason   string     `json:"reason,omitempty"`  // why: the assert's or gate's output, the grant's source, the cancellation
	// Completion is the stage's completion (StageAssertOutcome,
	// StageExited), the completion tool's input.
	Completion json.RawMessage `json:"completion,omitempty"`
	// Transcript is the stage-local transcript Assert received
	// (StageAssertOutcome; Go programs only).
	Transcript []llm.Message `json:"-"`
}

// String is e as one line of text: the kind without its namespace, then
// stage, group, tool, outcome, attempt, capHit, an exit's completion and
// the first line of the reason.
func (e Event) String() string {
	line := strings.TrimPrefix(string(e.Kind), "workflow.")
	for _, kv := range [][2]string{{"stage", e.Stage}, {"group", e.Group}, {"tool", e.Tool}, {"outcome", e.Outcome}} {
		if kv[1] != "" {
			line += " " + kv[0] + "=" + kv[1]
		}
	}
	if e.Attempt > 0 {
		line += " attempt=" + strconv.Itoa(e.Attempt)
	}
	if e.CapHit {
		line += " capHit"
	}
	if len(e.Completion) > 0 && e.Kind == StageExited {
		line += " " + string(e.Completion)
	}
	if e.Reason != "" {
		r, _, _ := strings.Cut(e.Reason, "\n")
		line += " (" + r + ")"
	}
	return line
}

// emit publishes e on the session's bus (when the runner has a session)
// and to Options.OnEvent.
func (r *runner) emit(ctx context.Context, e Event) {
	e.Workflow, e.Time = r.def.Name, time.Now()
	r.evMu.Lock()
	defer r.evMu.Unlock()
	if r.opts.OnEvent != nil {
		r.opts.OnEvent(e)
	}
	text := e.Reason
	if e.Tool != "" {
		text = e.Tool + ": " + text
	}
	if r.sess != nil {
		_ = r.sess.Emit(event.Event{Kind: e.Kind, Stage: e.Stage, Outcome: e.Outcome, Text: text})
	}
}
