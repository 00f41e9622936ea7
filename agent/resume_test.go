package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/anthropic"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/prompt/flat"
	"github.com/strata-agent/strata/tool"
)

// What Resume runs of the calls a crash cut off (the delivery guarantee):
// the first pending call may have been running, so a side-effecting one is
// reported interrupted and not run again, and the side-effecting calls
// after it (never started) are not run either; read-only calls run again;
// RerunInterrupted runs them all. The model reads every result.
func TestAttackResumeReportsInterruptedCalls(t *testing.T) {
	bash := func(id, cmd string) llm.Block {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		return llm.ToolUseBlock(id, "execute_bash", in)
	}
	read := llm.ToolUseBlock("r", "fs_read", json.RawMessage(`{"operations":[{"mode":"Line","path":"notes.txt"}]}`))
	done := bash("k", "echo k >> log.txt") // completed before the crash
	readOnly := func(c llm.Block) bool { return c.Name == "fs_read" }
	cases := []struct {
		name    string
		calls   []llm.Block // the response; the first has a result
		opts    ResumeOptions
		wantLog string
		want    map[string]string // call id → text its result starts with
	}{
		{"side-effecting call interrupted", []llm.Block{done, bash("a", "echo a >> log.txt"), bash("b", "echo b >> log.txt"), read},
			ResumeOptions{ReadOnly: readOnly}, "",
			map[string]string{"a": "tool call interrupted: strata stopped (it crashed or was killed) while this execute_bash call was running",
				"b": "tool call not executed: it had not started when strata stopped (crashed or was killed) during the earlier call a (execute_bash)",
				"r": "hello"}},
		{"rerun on request", []llm.Block{done, bash("a", "echo a >> log.txt"), bash("b", "echo b >> log.txt"), read},
			ResumeOptions{RerunInterrupted: true}, "a\nb\n",
			map[string]string{"a": "exit status: 0", "b": "exit status: 0", "r": "hello"}},
		{"read-only call interrupted", []llm.Block{done, read, bash("a", "echo a >> log.txt")},
			ResumeOptions{ReadOnly: readOnly}, "a\n",
			map[string]string{"r": "hello", "a": "exit status: 0"}},
		{"a repeated tool_use id never runs", []llm.Block{done, bash("k"+dupMarker+"2", "echo dup >> log.txt")},
			ResumeOptions{RerunInterrupted: true}, "",
			map[string]string{"k" + dupMarker + "2": `tool call not executed: duplicate tool_use id "k"`}},
		{"without ReadOnly every call has side effects", []llm.Block{done, read, bash("a", "echo a >> log.txt")},
			ResumeOptions{}, "",
			map[string]string{"r": "tool call interrupted", "a": "tool call not executed"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			final, err := replay.AnthropicStream("m", llm.Usage{Input: 10, Output: 5}, llm.StopEndTurn, llm.TextBlock("ok"))
			if err != nil {
				t.Fatal(err)
			}
			srv, err := replay.NewServer(final)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			ws := t.TempDir()
			os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("hello\n"), 0o644)
			history := []llm.Message{llm.UserText("go"), {Role: llm.RoleAssistant, Content: c.calls},
				{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("k", "exit status: 0", false)}}}
			a, err := Restore(Config{Provider: anthropic.New(anthropic.Config{APIKey: "k", BaseURL: srv.URL()}), Layout: flat.Layout{},
				Model: "m", Tools: tool.NewRegistry(tool.Builtins()...), Env: &tool.Env{Workdir: ws}}, "loop", history, 1)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Resume(context.Background(), 0, c.calls[1:], c.opts); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(filepath.Join(ws, "log.txt")); string(b) != c.wantLog {
				t.Errorf("log.txt = %q; want %q", b, c.wantLog)
			}
			h := a.History()
			if len(h) != 4 || len(h[2].Content) != len(c.calls) {
				t.Fatalf("history after resume: %+v", h)
			}
			for _, r := range h[2].Content[1:] {
				want := c.want[r.ID]
				if got := r.Content[0].Text; !strings.HasPrefix(got, want) || r.IsError != strings.HasPrefix(want, "tool call") {
					t.Errorf("result of %s (is_error %v): %q; want it to start with %q", r.ID, r.IsError, got, want)
				}
			}
			first, _ := json.Marshal(c.want[c.calls[1].ID])
			if body := string(srv.Received()[0].Body); !strings.Contains(body, string(first[1:len(first)-1])) {
				t.Errorf("the request does not carry the first pending call's result:\n%.2000s", body)
			}
		})
	}
}
