package strata_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session"
)

// askLog is an Approver that answers a fixed decision and notes what it
// was asked about.
type askLog struct {
	mu     sync.Mutex
	asked  []string
	answer agent.Decision
}

func (a *askLog) Approve(_ context.Context, r agent.ApprovalRequest) (agent.Decision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, r.Call.ID)
	return a.answer, nil
}

// kiro's meaning of allowedCommands (built-in-tools.md): a matching
// command runs without prompting; the others are asked about (and run when
// allowed, or under --approve all); deniedCommands refuse in every mode,
// without asking (kiro's eval_perm returns Deny before anything else).
// strata used to refuse every command outside allowedCommands, even after
// an approval, and used to ask about denied ones first.
func TestAllowedCommandsRunWithoutPromptingOthersAreAsked(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{".kiro/agents/dev.json": `{"name":"dev","prompt":"p","tools":["*"],` +
		`"toolsSettings":{"execute_bash":{"allowedCommands":["echo .*","touch listed\\.txt"],"deniedCommands":["rm .*"]}}}`})
	calls := []llm.Block{
		toolUse("listed", "execute_bash", map[string]any{"command": "touch listed.txt"}),
		toolUse("other", "execute_bash", map[string]any{"command": "touch other.txt"}),
		toolUse("denied", "execute_bash", map[string]any{"command": "rm -rf listed.txt"}),
	}
	for _, c := range []struct {
		mode      agent.Mode
		answer    agent.Decision
		wantAsked string
		otherRuns bool
	}{
		{agent.ModeAllowlist, agent.AllowOnce, "other", true},
		{agent.ModeAllowlist, agent.RejectOnce, "other", false},
		{agent.ModeAll, agent.RejectOnce, "", true},
	} {
		t.Run(string(c.mode)+"/"+string(c.answer), func(t *testing.T) {
			os.Remove(filepath.Join(dir, "listed.txt"))
			os.Remove(filepath.Join(dir, "other.txt"))
			srv := replayServer(t, llm.APIAnthropic, replay.Reply{Blocks: calls}, replay.Reply{Blocks: []llm.Block{llm.TextBlock("done")}})
			ap := &askLog{answer: c.answer}
			ws := openWorkspace(t, strata.Options{Dir: dir, Agent: "dev", ProviderName: "anthropic", BaseURL: srv.URL(),
				Mode: c.mode, Approver: ap, Store: session.NewMemory(), Params: llm.Params{MaxTokens: 1024}})
			s, err := ws.NewSession(context.Background(), strata.SessionOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Prompt(context.Background(), "go"); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(ap.asked, ","); got != c.wantAsked {
				t.Errorf("asked about %q, want %q", got, c.wantAsked)
			}
			if !ran(dir, "listed.txt") {
				t.Error("the allow-listed command did not run")
			}
			if ran(dir, "other.txt") != c.otherRuns {
				t.Errorf("the other command ran = %v, want %v", ran(dir, "other.txt"), c.otherRuns)
			}
		})
	}
}
