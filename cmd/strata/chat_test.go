package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
)

// `strata chat` runs every stdin line as a user turn of one session:
// commands answer on stderr, a backslash continues a prompt, a failed prompt
// (no recorded response left) is reported and the chat goes on to /exit.
func TestChatRunsEachLineInOneSession(t *testing.T) {
	streams, ws := t.TempDir(), t.TempDir()
	u := llm.Usage{Input: 12, Output: 3}
	a := writeStream(t, streams, "a.sse", u, llm.StopEndTurn, llm.TextBlock("first answer"))
	b := writeStream(t, streams, "b.sse", u, llm.StopEndTurn, llm.TextBlock("second answer"))
	cmd := exec.Command(binary, "chat", "--replay", a+","+b, "--format", "json")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "STRATA_DATA_DIR="+filepath.Join(ws, ".data"), "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=")
	cmd.Stdin = strings.NewReader("hello\n/mode ask\n/bogus\nsecond \\\nline\n/usage\nthird\n/exit\nnever read\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	var users []string
	sessions := map[string]bool{}
	var starts, loops []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var ev struct {
			Kind    string
			Message *llm.Message
			Turn    *struct {
				LoopID string `json:"loop_id"`
				Index  int    `json:"turn_index"`
			}
			Previous string `json:"previous_loop_id"`
		}
		if json.Unmarshal([]byte(line), &ev) != nil {
			continue
		}
		if ev.Kind == "message_end" && ev.Message != nil && ev.Message.Role == llm.RoleUser {
			users = append(users, ev.Message.Text())
		}
		if ev.Turn != nil {
			sessions[ev.Turn.LoopID] = true
		}
		if ev.Kind == "turn_start" {
			starts = append(starts, fmt.Sprintf("%d<%s", ev.Turn.Index, ev.Previous))
			loops = append(loops, ev.Turn.LoopID)
		}
	}
	// One session, a loop per line (docs/turn.md, rule 2), each at turn 0
	// after the previous line's loop.
	if strings.Join(users, "|") != "hello|second \nline|third" || len(sessions) != 3 || len(starts) != 3 ||
		starts[0] != "0<" || starts[1] != "0<"+loops[0] || starts[2] != "0<"+loops[1] {
		t.Errorf("user messages %q in %d loop(s), turn starts %q", users, len(sessions), starts)
	}
	for _, want := range []string{"approval mode: ask", "unknown command /bogus", "2 model call(s) · tokens: input 24, output 6", "no response left"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
	if strings.Contains(out.String(), "never read") {
		t.Error("read past /exit")
	}
}

// Steering from `strata chat`: "/steer TEXT" typed while a prompt runs is
// queued (Session.Steer) and reaches the model as a user message before
// the loop's next model call (the Rust agent-loop Turn: input messages
// include "pending steering messages"); a plain line read while a prompt
// runs from a pipe waits for it to end (on a terminal it would steer).
func TestChatSteersTheRunningPrompt(t *testing.T) {
	streams, ws := t.TempDir(), t.TempDir()
	u := llm.Usage{Input: 12, Output: 3}
	call := writeStream(t, streams, "a.sse", u, llm.StopToolUse, llm.ToolUseBlock("toolu_1", "glob", json.RawMessage(`{"pattern":"*"}`)))
	final := writeStream(t, streams, "b.sse", u, llm.StopEndTurn, llm.TextBlock("done"))
	second := writeStream(t, streams, "c.sse", u, llm.StopEndTurn, llm.TextBlock("second done"))
	// The replay delay keeps the first prompt running while the next lines
	// are read; the assertions hold whichever model call the steering
	// message reaches.
	cmd := exec.Command(binary, "chat", "--replay", call+","+final+","+second, "--replay-delay", "300ms", "--format", "json", "--approve", "all")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "STRATA_DATA_DIR="+filepath.Join(ws, ".data"), "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=")
	cmd.Stdin = strings.NewReader("list the files\n/steer only Go files\nnext prompt\n/exit\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	var inputs []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var ev struct {
			Kind    string
			Message *llm.Message
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Kind == "message_end" && ev.Message != nil && ev.Message.Role == llm.RoleUser {
			for _, b := range ev.Message.Content {
				if b.Type == llm.BlockText {
					inputs = append(inputs, b.Text)
				}
			}
		}
	}
	if got := strings.Join(inputs, "|"); got != "list the files|only Go files|next prompt" {
		t.Errorf("user inputs %q; want the prompt, the steering message, then the next prompt", got)
	}
	if !strings.Contains(errb.String(), "steering: queued for the next model call") {
		t.Errorf("stderr lacks the steering notice:\n%s", errb.String())
	}
}
