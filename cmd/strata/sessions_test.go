package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
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

// A run killed by SIGKILL while its second tool call runs keeps the first
// call's result; `sessions resume` runs only the cut-off call, makes the
// next model call, and `sessions show` prints both turns with usage and cache
// figures. Then `sessions branch` starts a new loop from turn 0.
func TestSIGKILLThenResume(t *testing.T) {
	ws, streams, data := t.TempDir(), t.TempDir(), t.TempDir()
	env := []string{"STRATA_DATA_DIR=" + data}
	first := writeStream(t, streams, "calls.sse", llm.Usage{Input: 1200, CacheRead: 300, CacheWrite: 50, Output: 40}, llm.StopToolUse,
		llm.TextBlock("Running two commands."),
		llm.ToolUseBlock("toolu_k1", "execute_bash", json.RawMessage(`{"command":"echo one >> ran.txt"}`)),
		llm.ToolUseBlock("toolu_k2", "execute_bash", json.RawMessage(`{"command":"sleep 2 && echo two >> ran.txt"}`)))
	final := writeStream(t, streams, "final.sse", llm.Usage{Input: 80, CacheRead: 1500, Output: 12}, llm.StopEndTurn,
		llm.TextBlock("Both commands ran."))

	cmd := exec.Command(binary, "run", "--replay", first+","+final, "--approve", "all", "--format", "json", "run both")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() { // wait until the second tool call is running
		var e struct {
			Kind     string               `json:"kind"`
			ToolCall *struct{ ID string } `json:"tool_call"`
		}
		json.Unmarshal(sc.Bytes(), &e)
		if e.Kind == "tool_execution_start" && e.ToolCall != nil && e.ToolCall.ID == "toolu_k2" {
			break
		}
	}
	time.Sleep(200 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	m := sessionLine.FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no session line on stderr: %s", stderr.String())
	}
	id := m[1]
	if b, _ := os.ReadFile(filepath.Join(ws, "ran.txt")); string(b) != "one\n" {
		t.Fatalf("ran.txt before resume = %q", b)
	}
	r := runCLI(t, ws, env, "sessions", "show", id)
	if r.code != 0 || !strings.Contains(r.stdout, "in_progress") || !strings.Contains(r.stdout, "toolu_k1") {
		t.Fatalf("show after kill (exit %d):\n%s%s", r.code, r.stdout, r.stderr)
	}

	r = runCLI(t, ws, env, "sessions", "resume", id, "--replay", final, "--approve", "all")
	if r.code != 0 || !strings.Contains(r.stdout, "Both commands ran.") {
		t.Fatalf("resume exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "ran.txt")); string(b) != "one\ntwo\n" {
		t.Fatalf("ran.txt after resume = %q; want the first call not re-run", b)
	}
	r = runCLI(t, ws, env, "sessions", "show", id)
	turns := regexp.MustCompile(`(?m)^`+m[2]+`\s+(\d)\s+(\w+)\s+(\w+)\s+(\w+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)`).FindAllStringSubmatch(r.stdout, -1)
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
	if !strings.Contains(r.stdout, "branched from "+m[2]+" turn 0") || !regexp.MustCompile(`\s1\s+branch\s+completed`).MatchString(r.stdout) {
		t.Errorf("show after branch:\n%s", r.stdout)
	}
	r = runCLI(t, ws, env, "sessions", "list")
	if !strings.Contains(r.stdout, id) || !strings.Contains(r.stdout, "run both") {
		t.Errorf("list:\n%s", r.stdout)
	}
}

// Without a terminal, a call that needs approval is denied with a reason the
// model sees and the user can act on.
func TestAskWithoutTerminalDenies(t *testing.T) {
	ws, streams := t.TempDir(), t.TempDir()
	call := writeStream(t, streams, "w.sse", llm.Usage{Input: 10, Output: 5}, llm.StopToolUse,
		llm.ToolUseBlock("toolu_w", "fs_write", json.RawMessage(`{"command":"create","path":"x.txt","file_text":"hi"}`)))
	final := writeStream(t, streams, "f.sse", llm.Usage{Input: 10, Output: 5}, llm.StopEndTurn, llm.TextBlock("ok"))
	r := runCLI(t, ws, nil, "run", "--replay", call+","+final, "hi")
	if r.code != 0 || !strings.Contains(r.stdout, "fs_write denied") || !strings.Contains(r.stdout, "--approve all") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "x.txt")); err == nil {
		t.Error("denied fs_write wrote the file")
	}
}
