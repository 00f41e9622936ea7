//go:build unix

package tool

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-agent/strata/internal/proctest"
	"github.com/strata-agent/strata/llm"
)

// waitPid polls, with a bounded deadline, until path holds a pid.
func waitPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// When the process running execute_bash dies by SIGKILL (nothing of it runs
// any more), the command's whole process group dies too, grandchildren
// included: a crashed strata leaves no tool running that a resume could
// run a second time.
func TestAttackExecuteBashGroupDiesWithStrata(t *testing.T) {
	if ws := os.Getenv("STRATA_TOOL_KILL_WS"); ws != "" { // the helper process: run, until killed
		cmd := `bash -c 'sleep 30 & echo $! > grandchild.pid; wait' & wait`
		NewRegistry(Builtins()...).Execute(context.Background(), &Env{Workdir: ws},
			llm.ToolUseBlock("toolu_k", "execute_bash", json.RawMessage(bash(cmd))))
		os.Exit(0)
	}
	ws := workspace(t, nil)
	helper := exec.Command(os.Args[0], "-test.run=^TestAttackExecuteBashGroupDiesWithStrata$")
	helper.Env = append(os.Environ(), "STRATA_TOOL_KILL_WS="+ws)
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	pid := waitPid(t, filepath.Join(ws, "grandchild.pid"))
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	helper.Wait()
	proctest.WaitGone(t, pid, "a killed command's child")
}

// Cancelling a call kills the grandchildren of its shell too (they are in
// the command's process group).
func TestExecuteBashCancelKillsGrandchild(t *testing.T) {
	ws := workspace(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan llm.Block)
	go func() {
		done <- NewRegistry(Builtins()...).Execute(ctx, &Env{Workdir: ws},
			llm.ToolUseBlock("c", "execute_bash", json.RawMessage(bash(`bash -c 'sleep 30 & echo $!' > grandchild.pid; sleep 30`))))
	}()
	pid := waitPid(t, filepath.Join(ws, "grandchild.pid"))
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	cancel()
	failed(t, <-done, "cancelled")
	proctest.WaitGone(t, pid, "a killed command's child")
}
