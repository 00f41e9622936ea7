package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/session"
)

// storedSession runs `strata run --replay answer.sse start` in a new
// workspace with its own session database and returns the directories
// (authored streams, workspace, data), the answer stream ("Done.") and the
// new session's id.
func storedSession(t *testing.T) (streams, ws, data, answer, id string) {
	t.Helper()
	streams, ws, data = t.TempDir(), t.TempDir(), t.TempDir()
	answer = writeStream(t, streams, "answer.sse", llm.Usage{Input: 10, Output: 3}, llm.StopEndTurn, llm.TextBlock("Done."))
	r := runCLI(t, ws, []string{"STRATA_DATA_DIR=" + data}, "run", "--replay", answer, "start")
	m := sessionLine.FindStringSubmatch(r.stderr)
	if r.code != 0 || m == nil {
		t.Fatalf("first run exit %d: %s", r.code, r.stderr)
	}
	return streams, ws, data, answer, m[1]
}

// Two processes running `strata run --session X` at once: exactly one runs
// the prompt; the other exits 1 before any model call with a message naming
// the session and saying another writer holds it. The stored history is the
// first run's plus the winner's, in order: no splice.
func TestAttackTwoProcessesOnOneSession(t *testing.T) {
	_, ws, data, answer, id := storedSession(t)
	env := []string{"STRATA_DATA_DIR=" + data}

	type proc struct {
		cmd    *exec.Cmd
		stderr bytes.Buffer
	}
	var ps [2]*proc
	for i := range ps {
		p := &proc{cmd: exec.Command(binary, "run", "--session", id, "--replay", answer, "--replay-delay", "300ms", "continue")}
		p.cmd.Dir, p.cmd.Env, p.cmd.Stderr = ws, append(os.Environ(), env...), &p.stderr
		ps[i] = p
	}
	for _, p := range ps {
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	ok, busy := 0, 0
	for i, p := range ps {
		err := p.cmd.Wait()
		code := p.cmd.ProcessState.ExitCode()
		switch {
		case err == nil:
			ok++
		case code == 1 && strings.Contains(p.stderr.String(), "session "+id+" is held by another writer"):
			busy++
			if strings.Contains(p.stderr.String(), "strata: session "+id+" (loop") {
				t.Errorf("process %d started a loop before refusing:\n%s", i, p.stderr.String())
			}
		default:
			t.Errorf("process %d: exit %d (%v)\n%s", i, code, err, p.stderr.String())
		}
	}
	if ok != 1 || busy != 1 {
		t.Fatalf("%d runs succeeded and %d were refused as busy; want 1 and 1", ok, busy)
	}

	st, err := session.Open(filepath.Join(data, "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	loop, err := st.LatestLoop(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	h, err := st.History(t.Context(), loop)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, msg := range h {
		got = append(got, string(msg.Role)+":"+msg.Text())
	}
	want := "user:start assistant:Done. user:continue assistant:Done."
	if strings.Join(got, " ") != want {
		t.Errorf("stored history %q, want %q", strings.Join(got, " "), want)
	}
}

// A step the session database refuses to store (a trigger aborts every new
// message after the first run's) fails `run --session` with exit 1 and a
// message naming the session, instead of a warning after a successful run;
// the tool the unrecorded model call asked for does not run.
func TestAttackRunFailsWhenAStepIsNotStored(t *testing.T) {
	streams, ws, data, answer, id := storedSession(t)
	env := []string{"STRATA_DATA_DIR=" + data}
	db, err := sql.Open("sqlite", filepath.Join(data, "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`CREATE TRIGGER refuse BEFORE INSERT ON messages WHEN NEW.seq >= 3 BEGIN SELECT RAISE(ABORT, 'injected: disk full'); END`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	call := writeStream(t, streams, "call.sse", llm.Usage{Input: 10, Output: 3}, llm.StopToolUse,
		llm.ToolUseBlock("toolu_w1", "execute_bash", json.RawMessage(`{"command":"echo ran >> ran.txt"}`)))
	r := runCLI(t, ws, env, "run", "--session", id, "--replay", call+","+answer, "--approve", "all", "continue")
	if r.code != 1 || !strings.Contains(r.stderr, "session "+id) || !strings.Contains(r.stderr, "injected: disk full") ||
		strings.Contains(r.stderr, "warning") {
		t.Fatalf("exit %d; want 1 with an error naming session %s and the store's failure\nstderr: %s", r.code, id, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran.txt")); err == nil {
		t.Errorf("the tool ran although its call was not stored")
	}
}
