package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// 'strata chat --temporal' on a terminal is the full-screen chat (docs/cli.md,
// "worker and --temporal"): the session workflow's events fill the transcript, the
// approval the workflow waits for is asked on the screen and a "y" lets the
// call run on the worker, the status bar names the model and prices the
// calls, /mode answers in the transcript, and after /exit the transcript is
// in the terminal's scrollback and the chat exits 0. It used to run line
// mode only.
func TestTemporalChatScreenUnderTmux(t *testing.T) {
	r := newTemporalRig(t, func(body string, n int) replay.Reply {
		if n == 0 {
			in, _ := json.Marshal(map[string]string{"command": "echo approved >> log.txt"})
			return replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock("toolu_screen", "execute_bash", in)}, Usage: llm.Usage{Input: 1200, Output: 300}}
		}
		return replay.Reply{Blocks: []llm.Block{llm.TextBlock("The command ran on a worker.")}, Usage: llm.Usage{Input: 1600, Output: 100}}
	})
	r.startWorkers(t, 1)
	data := t.TempDir()
	p := startTmux(t, r.dir, 100, 30, chatCommandLine(data, "--approve ask --model claude-sonnet-4-5 --temporal "+r.addr+" --task-queue "+r.queue))
	p.waitFor("the ready status bar", func(s string) bool { return strings.HasSuffix(firstLine(s), "· ready") })
	p.send("run the command")
	screen := p.waitFor("the approval question", func(s string) bool { return strings.Contains(s, "allow execute_bash?") })
	if !strings.Contains(screen, "echo approved >> log.txt") {
		t.Errorf("the question does not show the command:\n%s", screen)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "log.txt")); err == nil {
		t.Fatal("the command ran before the approval")
	}
	p.tmux("send-keys", "-t", "t", "y")
	done := p.waitFor("the answer and the prompt's end", func(s string) bool {
		return strings.Contains(s, "The command ran on a worker.") && strings.HasSuffix(firstLine(s), "· ready")
	})
	if lines := readLines(t, filepath.Join(r.dir, "log.txt")); len(lines) != 1 || lines[0] != "approved" {
		t.Errorf("log.txt = %q, want the approved call's one line", lines)
	}
	if st := firstLine(done); !strings.Contains(st, "claude-sonnet") || !strings.Contains(st, "ctx 0%") || !strings.HasSuffix(st, "$0.0144 · ready") {
		// 2,800 input and 400 output tokens at claude-sonnet-4-5's $3 and $15 per million
		t.Errorf("status bar lacks the model, the context use or the cost in USD ($0.0144): %q", st)
	}
	p.send("/mode all")
	p.waitFor("the mode's answer", func(s string) bool { return strings.Contains(s, "approval mode: all (from the next prompt)") })
	p.send("/exit")
	p.waitFor("the transcript in the scrollback and exit 0", func(string) bool {
		s := p.tmux("capture-pane", "-p", "-t", "t", "-S", "-200")
		b, _ := os.ReadFile(filepath.Join(data, "exit"))
		return strings.Contains(s, "› run the command") && strings.Contains(s, "The command ran on a worker.") && strings.TrimSpace(string(b)) == "0"
	})
}
