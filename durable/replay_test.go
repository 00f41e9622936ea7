package durable

import (
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// TestReplayRecordedHistories replays every history TestRecordHistories
// recorded from a real dev server (a multi-tool session, an approval with
// steering, a session that continued as new twice, a stage workflow with
// a parallel group and one of its stage children, a session whose hooks,
// Gather and turn callbacks run as activities, a session whose worker
// pings: timers, ping and record activities) through the SDK's
// workflow replayer: the workflow code makes the same commands from the
// same history, so it is deterministic.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.history.json"))
	if err != nil || len(files) < 9 {
		t.Fatalf("want the 9 recorded histories in testdata (go test ./durable -run TestRecordHistories -record), found %d: %v", len(files), err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(SessionWorkflow, workflow.RegisterOptions{Name: SessionWorkflowName})
			r.RegisterWorkflowWithOptions(StagesWorkflow, workflow.RegisterOptions{Name: StagesWorkflowName})
			r.RegisterWorkflowWithOptions(StageWorkflow, workflow.RegisterOptions{Name: StageWorkflowName})
			if err := r.ReplayWorkflowHistoryFromJSONFile(quietLogger, f); err != nil {
				t.Fatalf("replay %s: %v", f, err)
			}
		})
	}
}

// TestReplayCatchesANonDeterministicChange: a workflow that schedules its
// activities differently from the recorded one fails the replay, so the
// replay test above can fail.
func TestReplayCatchesANonDeterministicChange(t *testing.T) {
	changed := func(ctx workflow.Context, in SessionInput) error {
		in.Spec.SessionID = "other"
		if err := workflow.Sleep(ctx, 1); err != nil { // a timer the recorded run never started
			return err
		}
		return SessionWorkflow(ctx, in)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(changed, workflow.RegisterOptions{Name: SessionWorkflowName})
	err := r.ReplayWorkflowHistoryFromJSONFile(quietLogger, filepath.Join("testdata", "multi_tool.1.history.json"))
	if err == nil || !strings.Contains(err.Error(), "TMPRL1100") { // the SDK's nondeterminism error
		t.Fatalf("replaying a changed workflow gave %v, want a nondeterminism error", err)
	}
}
