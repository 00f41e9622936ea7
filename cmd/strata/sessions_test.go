package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-agent/strata/internal/proctest"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session/postgres/pgtest"
)

// writeStream writes an authored Anthropic stream to dir/name and returns the
// path.
func writeStream(t *testing.T, dir, name string, u llm.Usage, stop llm.StopReason, blocks ...llm.Block) string {
	t.Helper()
	p := filepath.Join(dir, name)
	r, err := replay.AnthropicStream("msg_"+name, u, stop, blocks...)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, r.Body, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var sessionLine = regexp.MustCompile(`strata: session ([0-9a-f]+) \(loop ([0-9a-f]+)\)`)

// waitFor polls cond, with a bounded deadline, until it holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// killMidCall runs `strata run` in ws on a response with two execute_bash
// calls — the first appends "one" to ran.txt, the second starts a
// background job that appends "two" a second later and waits for it — and
// SIGKILLs strata once the job is running. The job dies with strata (its
// process group is killed), so ran.txt holds "one" only. It returns the
// session and loop ids.
func killMidCall(t *testing.T, ws, streams string, env []string) (id, loop string) {
	t.Helper()
	first := writeStream(t, streams, "calls.sse", llm.Usage{Input: 1200, CacheRead: 300, CacheWrite: 50, Output: 40}, llm.StopToolUse,
		llm.TextBlock("Running two commands."),
		llm.ToolUseBlock("toolu_k1", "execute_bash", json.RawMessage(`{"command":"echo one >> ran.txt"}`)),
		llm.ToolUseBlock("toolu_k2", "execute_bash", json.RawMessage(`{"command":"(sleep 1; echo two >> ran.txt) & echo $! > job.pid; wait"}`)))
	cmd := exec.Command(binary, "run", "--replay", first, "--approve", "all", "--format", "json", "run both")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	job := 0
	waitFor(t, "the second call's background job to start", func() bool {
		b, _ := os.ReadFile(filepath.Join(ws, "job.pid"))
		job, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return job > 0
	})
	t.Cleanup(func() { syscall.Kill(job, syscall.SIGKILL) })
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	waitFor(t, fmt.Sprintf("the background job (pid %d) of the call strata was running to die with strata", job), func() bool { return !proctest.Alive(job) })
	m := sessionLine.FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no session line on stderr: %s", stderr.String())
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "ran.txt")); string(b) != "one\n" {
		t.Fatalf("ran.txt after the kill = %q", b)
	}
	return m[1], m[2]
}

// A run killed by SIGKILL while its second tool call runs keeps the first
// call's result, and the second call's background job dies with it.
// `sessions resume` does not run the interrupted call again: the model gets
// an is_error result saying it was interrupted, then the next model call
// runs; `sessions show` prints both turns with usage and cache figures.
// `sessions branch` starts a new loop from turn 0. With --rerun-interrupted
// the call runs again.
func TestAttackSIGKILLThenResume(t *testing.T) {
	attackSIGKILLThenResume(t, []string{"STRATA_DATA_DIR=" + t.TempDir()})
}

// The same with the sessions in PostgreSQL (STRATA_STORE=postgres://…, the
// test server of scripts/postgres-test): resume and branch behave exactly as
// with SQLite.
func TestAttackSIGKILLThenResumePostgres(t *testing.T) {
	attackSIGKILLThenResume(t, []string{"STRATA_DATA_DIR=" + t.TempDir(), "STRATA_STORE=" + pgtest.EmptyDSN(t)})
}

func attackSIGKILLThenResume(t *testing.T, env []string) {
	streams := t.TempDir()
	final := writeStream(t, streams, "final.sse", llm.Usage{Input: 80, CacheRead: 1500, Output: 12}, llm.StopEndTurn,
		llm.TextBlock("Noted."))
	ws := t.TempDir()
	id, loop := killMidCall(t, ws, streams, env)
	r := runCLI(t, ws, env, "sessions", "show", id)
	if r.code != 0 || !strings.Contains(r.stdout, "in_progress") || !strings.Contains(r.stdout, "toolu_k1") {
		t.Fatalf("show after kill (exit %d):\n%s%s", r.code, r.stdout, r.stderr)
	}

	r = runCLI(t, ws, env, "sessions", "resume", id, "--replay", final, "--approve", "all")
	if r.code != 0 || !strings.Contains(r.stdout, "Noted.") || !strings.Contains(r.stderr, "reported to the model as interrupted") {
		t.Fatalf("resume exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "ran.txt")); string(b) != "one\n" {
		t.Fatalf("ran.txt after resume = %q; want neither call run again", b)
	}
	r = runCLI(t, ws, env, "sessions", "show", id)
	if !strings.Contains(r.stdout, "toolu_k2: tool call interrupted: strata stopped") {
		t.Errorf("show after resume: no interrupted result for toolu_k2:\n%s", r.stdout)
	}
	turns := regexp.MustCompile(`(?m)^\d+\s+`+loop+`\s+(\d)\s+(\w+)\s+(\w+)\s+(\w+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)`).FindAllStringSubmatch(r.stdout, -1)
	if len(turns) != 2 {
		t.Fatalf("show after resume: want 2 turns:\n%s", r.stdout)
	}
	want := [][]string{
		{"0", "user", "completed", "tool_use", "1200", "40", "300", "50", "1590"},
		{"1", "continuation", "completed", "end_turn", "80", "12", "1500", "0", "1592"},
	}
	for i, w := range want {
		if got := turns[i][1:]; strings.Join(got, " ") != strings.Join(w, " ") {
			t.Errorf("turn %d row %v; want %v", i, got, w)
		}
	}

	branchReply := writeStream(t, streams, "branch.sse", llm.Usage{Input: 90, Output: 5}, llm.StopEndTurn, llm.TextBlock("Branched answer."))
	r = runCLI(t, ws, env, "sessions", "branch", id, "--turn", "0", "--replay", branchReply, "--approve", "all", "try another way")
	if r.code != 0 || !strings.Contains(r.stdout, "Branched answer.") {
		t.Fatalf("branch exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, ws, env, "sessions", "show", id)
	// The branch is a loop of its own: its first turn is index 0, trigger
	// branch, number 1 of its conversation (docs/turn.md, rule 3).
	if !strings.Contains(r.stdout, "branched from "+loop+" turn 0") || !regexp.MustCompile(`(?m)^1\s+\w+\s+0\s+branch\s+completed`).MatchString(r.stdout) {
		t.Errorf("show after branch:\n%s", r.stdout)
	}
	// A prompt on the resumed session is a new loop after the branch, at
	// index 0 (number 2); --turn LOOP:INDEX names a turn of any loop.
	next := writeStream(t, streams, "next.sse", llm.Usage{Input: 10, Output: 2}, llm.StopEndTurn, llm.TextBlock("Next answer."))
	r = runCLI(t, ws, env, "sessions", "resume", id, "--replay", next, "--approve", "all", "and then?")
	if r.code != 0 || !strings.Contains(r.stdout, "Next answer.") {
		t.Fatalf("resume with a prompt: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, ws, env, "sessions", "show", id)
	if !regexp.MustCompile(`(?m)^2\s+\w+\s+0\s+user\s+completed`).MatchString(r.stdout) || strings.Count(r.stdout, ", after ") != 1 {
		t.Errorf("show after a resumed prompt: want a new loop after the branch, its turn 0 numbered 2:\n%s", r.stdout)
	}
	again := writeStream(t, streams, "again.sse", llm.Usage{Input: 10, Output: 2}, llm.StopEndTurn, llm.TextBlock("Again."))
	r = runCLI(t, ws, env, "sessions", "branch", id, "--turn", loop[:6]+":1", "--replay", again, "--approve", "all", "from the end")
	if r.code != 0 || !strings.Contains(r.stdout, "Again.") {
		t.Fatalf("branch --turn LOOP:INDEX exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if r = runCLI(t, ws, env, "sessions", "show", id); !strings.Contains(r.stdout, "branched from "+loop+" turn 1") {
		t.Errorf("show after branch --turn LOOP:INDEX:\n%s", r.stdout)
	}
	if r = runCLI(t, ws, env, "sessions", "branch", id, "--turn", "x:y", "p"); r.code != 2 || !strings.Contains(r.stderr, "LOOP:INDEX") {
		t.Errorf("branch --turn x:y: exit %d %s", r.code, r.stderr)
	}
	r = runCLI(t, ws, env, "sessions", "list")
	if !strings.Contains(r.stdout, id) || !strings.Contains(r.stdout, "run both") {
		t.Errorf("list:\n%s", r.stdout)
	}

	// Asked to, resume runs the interrupted call again.
	ws = t.TempDir()
	id, _ = killMidCall(t, ws, streams, env)
	r = runCLI(t, ws, env, "sessions", "resume", id, "--rerun-interrupted", "--replay", final, "--approve", "all")
	if r.code != 0 || !strings.Contains(r.stdout, "Noted.") || strings.Contains(r.stderr, "interrupted") {
		t.Fatalf("resume --rerun-interrupted exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "ran.txt")); string(b) != "one\ntwo\n" {
		t.Fatalf("ran.txt after resume --rerun-interrupted = %q; want the second call run again", b)
	}
}

// Without a terminal, a call that needs approval is denied with a reason the
// model sees and the user can act on, and the run exits 1 naming --approve
// (it once exited 0, so a script took the tool-less answer for success).
func TestAskWithoutTerminalDenies(t *testing.T) {
	ws, streams := t.TempDir(), t.TempDir()
	call := writeStream(t, streams, "w.sse", llm.Usage{Input: 10, Output: 5}, llm.StopToolUse,
		llm.ToolUseBlock("toolu_w", "fs_write", json.RawMessage(`{"command":"create","path":"x.txt","file_text":"a > b \u0026\u0026 c"}`)))
	final := writeStream(t, streams, "f.sse", llm.Usage{Input: 10, Output: 5}, llm.StopEndTurn, llm.TextBlock("ok"))
	r := runCLI(t, ws, nil, "run", "--replay", call+","+final, "hi")
	// Allowed, the call is shown as the model meant it, without JSON's
	// HTML escapes (the issue saw "echo hello \u003e x \u0026\u0026 ls").
	if all := runCLI(t, t.TempDir(), nil, "run", "--approve", "all", "--replay", call+","+final, "hi"); !strings.Contains(all.stdout, `"file_text":"a > b && c"`) {
		t.Errorf("the tool call is shown escaped:\n%s", all.stdout)
	}
	if r.code != 1 || !strings.Contains(r.stdout, "fs_write denied") || !strings.Contains(r.stdout, "--approve all") ||
		!strings.Contains(r.stderr, "1 tool call(s) (fs_write) needed approval and were denied: stdin is not a terminal to ask on; pass --approve all") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "x.txt")); err == nil {
		t.Error("denied fs_write wrote the file")
	}
}
