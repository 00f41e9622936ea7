package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/workflow"
)

// TestTemporalWorkerCrashInAStage: a stage of 'strata workflow run
// --temporal' runs three side-effecting execute_bash calls on two worker
// processes; the worker running the long second one is killed with
// SIGKILL mid-tool. The stage goes on on the other worker (its loop is in
// the child workflow, each call an activity): each command ran once, the
// stage's model got the second call back as interrupted, and the stage
// ended ok with its completion.
func TestTemporalWorkerCrashInAStage(t *testing.T) {
	commands := []string{
		"echo step1 $STRATA_TEST_WORKER >> log.txt",
		"echo long-start $STRATA_TEST_WORKER >> log.txt; exec sleep 300",
		"echo step3 $STRATA_TEST_WORKER >> log.txt",
	}
	r := newTemporalRig(t, func(body string, n int) replay.Reply {
		if n >= len(commands) {
			return replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock("toolu_done", workflow.CompletionTool, json.RawMessage(`{"result":"all three ran"}`))}}
		}
		in, _ := json.Marshal(map[string]string{"command": commands[n]})
		return replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock(fmt.Sprintf("toolu_%d", n+1), "execute_bash", in)}}
	})
	def := filepath.Join(t.TempDir(), "steps.yaml")
	if err := os.WriteFile(def, []byte("name: steps\nstages:\n  - name: run\n    body: You run three commands.\n    allowedTools: [execute_bash]\n    turnCap: 6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.startWorkers(t, 2)
	cl := r.start(t, "workflow", "run", def, "--format", "json")
	victim := waitForLine(t, filepath.Join(r.dir, "log.txt"), "long-start ", cl.exited, &cl.stderr)
	killed := false
	for _, w := range r.workers {
		if w.name == victim {
			w.kill(syscall.SIGKILL)
			killed = true
		}
	}
	if !killed {
		t.Fatalf("log.txt names worker %q, not one of the test's", victim)
	}
	select {
	case err := <-cl.exited:
		if err != nil {
			t.Fatalf("workflow run: %v\nstderr: %s\nworkers: %s", err, cl.stderr.String(), r.workerLogs())
		}
	case <-time.After(3 * time.Minute):
		cl.Process.Kill()
		t.Fatalf("workflow run still running 3 minutes after the kill\nstderr: %s\nworkers: %s", cl.stderr.String(), r.workerLogs())
	}
	var st workflow.State
	if err := json.Unmarshal([]byte(cl.stdout.String()), &st); err != nil {
		t.Fatalf("not a state: %v\n%s", err, cl.stdout.String())
	}
	if st.Outcome != workflow.OK || string(st.Slots["run"].Completion) != `{"result":"all three ran"}` {
		t.Errorf("state: outcome %q, slot %+v", st.Outcome, st.Slots["run"])
	}
	lines := readLines(t, filepath.Join(r.dir, "log.txt"))
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "step1 ") || !strings.HasPrefix(lines[1], "long-start "+victim) || !strings.HasPrefix(lines[2], "step3 ") ||
		strings.HasSuffix(lines[2], " "+victim) {
		t.Errorf("log.txt: %q; want each command once, the third on the surviving worker", lines)
	}
	if interrupted := r.toolResult(t, "toolu_2"); interrupted == nil || !interrupted.IsError || !strings.Contains(fullText(*interrupted), "was not run again") {
		t.Errorf("the stage's model did not get toolu_2 as an interrupted is_error result: %+v", interrupted)
	}
}

// toolResult returns the last tool_result for tool_use id the rig's model
// received (nil when none).
func (r *temporalRig) toolResult(t *testing.T, id string) *llm.Block {
	t.Helper()
	var out *llm.Block
	for _, req := range r.model.Received() {
		for _, b := range toolResults(t, req.Body) {
			if b.ID == id {
				out = &b
			}
		}
	}
	return out
}
