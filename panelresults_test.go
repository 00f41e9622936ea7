package strata_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session"
)

// The panels layout's command-result panels (docs/panels.md, rule 5):
// "Git results" — git's output, run again only after the 120 s refresh —
// and "Console" — the loop's execute_bash commands with their output.
func TestGitResultsAndConsolePanels(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := workspaceDir(t)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("add", "NOTES.md")
	git("commit", "-q", "-m", "first commit")

	var mu sync.Mutex
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	var bodies []string
	ws, err := strata.Open(context.Background(), strata.Options{Dir: dir, Agent: "dev", Layout: "panels", ProviderName: "anthropic",
		APIKey: "test", Model: "claude-sonnet-4-5", Now: clock, Mode: agent.ModeAll, Store: session.NewMemory(),
		Respond: func(r replay.Request) replay.Response {
			bodies = append(bodies, string(r.Body))
			blocks := []llm.Block{llm.TextBlock("done")}
			if len(bodies) == 1 {
				blocks = []llm.Block{llm.ToolUseBlock("toolu_1", "execute_bash", json.RawMessage(`{"command":"echo hello-console","summary":"say"}`))}
			}
			resp, _ := replay.Turn(llm.APIAnthropic, replay.Reply{Blocks: blocks})
			return resp
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	s, err := ws.NewSession(context.Background(), strata.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Prompt(context.Background(), "say hello"); err != nil {
		t.Fatal(err)
	}
	git("commit", "-q", "--allow-empty", "-m", "second commit")
	if _, err := s.Prompt(context.Background(), "again"); err != nil { // same clock: no git refresh
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	if _, err := s.Prompt(context.Background(), "and again"); err != nil {
		t.Fatal(err)
	}
	if len(bodies) != 4 {
		t.Fatalf("%d requests", len(bodies))
	}
	if !strings.Contains(bodies[0], `Git results =======\n$ git status --short --branch\n## main\n?? .kiro/\n?? main.go\n$ git log --oneline -n 10\n`) ||
		!strings.Contains(bodies[0], `first commit\n`) {
		t.Errorf("first request has no git panel of the design's shape")
	}
	if strings.Contains(bodies[0], "] Console =======") || !strings.Contains(bodies[1], `] Console =======\n$ echo hello-console\nexit status: 0\n--- stdout ---\nhello-console\n`) {
		t.Errorf("console panel: before the command %v, after it: %v", strings.Contains(bodies[0], "Console"), strings.Contains(bodies[1], "Console"))
	}
	if strings.Contains(bodies[2], "second commit") || !strings.Contains(bodies[3], "second commit") {
		t.Errorf("git panel refreshed before 120 s passed (%v) or not after (%v)", strings.Contains(bodies[2], "second commit"), strings.Contains(bodies[3], "second commit"))
	}
}
