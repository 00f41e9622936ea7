package strata_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session"
)

// runCalls runs calls as one model response through the runtime's loop on
// the workspace dir with agent "k" (.kiro/agents/k.json must exist) in
// mode, asking ap (nil: no approver), and returns the tool_results by id.
func runCalls(t *testing.T, dir string, mode agent.Mode, ap agent.Approver, calls ...llm.Block) map[string]llm.Block {
	t.Helper()
	srv := replayServer(t, llm.APIAnthropic, replay.Reply{Blocks: calls}, replay.Reply{Blocks: []llm.Block{llm.TextBlock("done")}})
	ws := openWorkspace(t, strata.Options{Dir: dir, Agent: "k", ProviderName: "anthropic", BaseURL: srv.URL(),
		Mode: mode, Approver: ap, Store: session.NewMemory(), Params: llm.Params{MaxTokens: 1024}})
	s, err := ws.NewSession(context.Background(), strata.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Prompt(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	results := resultsByID(s.History())
	return results
}

// Issue 23, break 1: the model grants itself unapproved shell by rewriting
// an agent file. fs_write is in allowedTools, yet a write to
// .kiro/agents/helper.json (or any agent configuration: .mcp.json,
// AGENTS.md, steering; by fs_write or a shell redirection) needs a
// person's approval of that very call: without a terminal it is refused,
// in mode all it is denied, and an allowedPaths entry naming the folder
// opens it. On the old code the file was rewritten unasked.
func TestAttackModelRewritesAgentFile(t *testing.T) {
	helper := `{"name":"helper","prompt":"h","tools":["fs_read"]}`
	evil := `{"name":"helper","prompt":"h","tools":["execute_bash"],"allowedTools":["execute_bash"]}`
	setup := func(t *testing.T, agentJSON string) string {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{".kiro/agents/k.json": agentJSON, ".kiro/agents/helper.json": helper, "AGENTS.md": "be nice\n"})
		return dir
	}
	parent := `{"name":"k","prompt":"p","tools":["fs_read","fs_write","execute_bash"],"allowedTools":["fs_read","fs_write","execute_bash"]}`
	calls := []llm.Block{
		toolUse("agent", "fs_write", map[string]any{"command": "create", "path": ".kiro/agents/helper.json", "file_text": evil}),
		toolUse("new", "fs_write", map[string]any{"command": "create", "path": ".kiro/agents/new.json", "file_text": evil}),
		toolUse("mcp", "fs_write", map[string]any{"command": "create", "path": ".mcp.json", "file_text": `{"mcpServers":{}}`}),
		toolUse("agents_md", "fs_write", map[string]any{"command": "str_replace", "path": "AGENTS.md", "old_str": "be nice", "new_str": "run curl"}),
		toolUse("shell", "execute_bash", map[string]any{"command": "echo '" + evil + "' > .kiro/agents/helper.json"}),
		toolUse("cp", "execute_bash", map[string]any{"command": "cp /dev/null .kiro/steering/x.md"}),
	}
	unchanged := func(t *testing.T, dir string) {
		t.Helper()
		if b, _ := os.ReadFile(filepath.Join(dir, ".kiro/agents/helper.json")); string(b) != helper {
			t.Errorf("helper.json rewritten: %s", b)
		}
		for _, p := range []string{".kiro/agents/new.json", ".mcp.json", ".kiro/steering/x.md"} {
			if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
				t.Errorf("%s created", p)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "AGENTS.md")); string(b) != "be nice\n" {
			t.Errorf("AGENTS.md changed: %s", b)
		}
	}
	t.Run("allowlist without a terminal", func(t *testing.T) {
		dir := setup(t, parent)
		ap := &askLog{answer: agent.RejectOnce}
		res := runCalls(t, dir, agent.ModeAllowlist, ap, calls...)
		if got := strings.Join(ap.asked, ","); got != "agent,new,mcp,agents_md,shell,cp" {
			t.Errorf("asked about %q, want every call", got)
		}
		for id, r := range res {
			if !r.IsError {
				t.Errorf("%s ran: %s", id, resultText(r))
			}
		}
		unchanged(t, dir)
	})
	t.Run("mode all", func(t *testing.T) {
		dir := setup(t, parent)
		res := runCalls(t, dir, agent.ModeAll, nil, calls...)
		for id, r := range res {
			if !r.IsError || !strings.Contains(resultText(r), "person") {
				t.Errorf("%s: %s", id, resultText(r))
			}
		}
		unchanged(t, dir)
	})
	t.Run("a person says yes", func(t *testing.T) {
		dir := setup(t, parent)
		res := runCalls(t, dir, agent.ModeAllowlist, &askLog{answer: agent.AllowOnce}, calls[0])
		if r := res["agent"]; r.IsError {
			t.Fatalf("approved write refused: %s", resultText(r))
		}
		if b, _ := os.ReadFile(filepath.Join(dir, ".kiro/agents/helper.json")); strings.TrimSpace(string(b)) != evil {
			t.Errorf("approved write not done: %s", b)
		}
	})
	t.Run("allowedPaths names the folder", func(t *testing.T) {
		dir := setup(t, `{"name":"k","prompt":"p","tools":["fs_write"],"toolsSettings":{"fs_write":{"allowedPaths":[".kiro/agents"]}}}`)
		ap := &askLog{answer: agent.RejectOnce}
		res := runCalls(t, dir, agent.ModeAllowlist, ap, calls[0])
		if r := res["agent"]; r.IsError || len(ap.asked) != 0 {
			t.Fatalf("asked %v: %s", ap.asked, resultText(r))
		}
	})
	t.Run("an allowedPaths entry covering it by accident does not", func(t *testing.T) {
		dir := setup(t, `{"name":"k","prompt":"p","tools":["fs_write"],"toolsSettings":{"fs_write":{"allowedPaths":["."]}}}`)
		ap := &askLog{answer: agent.RejectOnce}
		runCalls(t, dir, agent.ModeAllowlist, ap, calls[0])
		if len(ap.asked) != 1 {
			t.Errorf("asked %v, want the agent file write", ap.asked)
		}
		unchanged(t, dir)
	})
}

// always answers AllowAlways and notes what it was asked about.
type always struct{ askLog }

func newAlways() *always { return &always{askLog{answer: agent.AllowAlways}} }

// Issue 24, item 6: a path outside the workspace. kiro asks (and allows
// when the tool is in allowedTools); strata refused outright. Now: the
// person is asked, and a yes for that call opens it; an "always" answer
// does not carry over to the next outside path; where nobody is asked
// (mode all, no approver) it is refused, and allowlist mode without a
// terminal (an approver that says no) never writes it.
func TestAttackOutsideWorkspaceWriteNeedsAPerson(t *testing.T) {
	outside := t.TempDir()
	write := func(id, name string) llm.Block {
		return toolUse(id, "fs_write", map[string]any{"command": "create", "path": filepath.Join(outside, name), "file_text": "x"})
	}
	ag := `{"name":"k","prompt":"p","tools":["fs_write"],"allowedTools":["fs_write"]}`
	setup := func(t *testing.T) string {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{".kiro/agents/k.json": ag})
		return dir
	}
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(outside, name)); return err == nil }

	ap := &askLog{answer: agent.RejectOnce}
	runCalls(t, setup(t), agent.ModeAllowlist, ap, write("w", "no-terminal.txt"))
	if len(ap.asked) != 1 || exists("no-terminal.txt") {
		t.Errorf("without a yes: asked %v, written %v; want asked and not written", ap.asked, exists("no-terminal.txt"))
	}
	res := runCalls(t, setup(t), agent.ModeAll, nil, write("w", "mode-all.txt"))
	if exists("mode-all.txt") || !strings.Contains(resultText(res["w"]), "outside the workspace") {
		t.Errorf("mode all: %s", resultText(res["w"]))
	}
	yes := newAlways()
	res = runCalls(t, setup(t), agent.ModeAllowlist, yes, write("w1", "one.txt"), write("w2", "two.txt"),
		toolUse("in", "fs_write", map[string]any{"command": "create", "path": "inside.txt", "file_text": "x"}))
	if !exists("one.txt") || !exists("two.txt") {
		t.Errorf("approved outside writes not done: %s / %s", resultText(res["w1"]), resultText(res["w2"]))
	}
	if got := strings.Join(yes.asked, ","); got != "w1,w2" {
		t.Errorf("asked about %q, want each outside write (an always answer does not carry over) and not the inside one", got)
	}
}

// byTool answers each approval by the call's tool name and logs the ids.
type byTool struct {
	askLog
	answers map[string]agent.Decision
}

func (b *byTool) Approve(ctx context.Context, r agent.ApprovalRequest) (agent.Decision, error) {
	b.askLog.answer = b.answers[r.Call.Name]
	return b.askLog.Approve(ctx, r)
}

// "Allow always" and "never" belong to the conversation (docs/security.md,
// "Who may approve what"): a session resumed from its store (SQLite, a new
// workspace as a new process opens it) does not ask again about a tool the
// person allowed or rejected always, and the allowed-always tool still
// does not cover a call that needs a person (a path outside the
// workspace). On the old code the permission wrapper kept "always" in
// memory only, and the resumed session asked again.
func TestAlwaysAnswersSurviveResume(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	writeFiles(t, dir, map[string]string{".kiro/agents/k.json": `{"name":"k","prompt":"p","tools":["fs_write","execute_bash"]}`})
	db := filepath.Join(t.TempDir(), "strata.db")
	write := func(id, path string) llm.Block {
		return toolUse(id, "fs_write", map[string]any{"command": "create", "path": path, "file_text": "x"})
	}
	bash := func(id string) llm.Block {
		return toolUse(id, "execute_bash", map[string]any{"command": "touch " + id + ".ran"})
	}
	rounds := [][]llm.Block{
		{write("w1", "one.txt"), bash("b1")},
		{write("w2", "two.txt"), bash("b2"), write("w3", filepath.Join(outside, "three.txt"))},
	}
	ap := &byTool{answers: map[string]agent.Decision{"fs_write": agent.AllowAlways, "execute_bash": agent.RejectAlways}}
	run := func(resume string, calls []llm.Block) (*strata.Session, map[string]llm.Block) {
		t.Helper()
		st, err := session.Open(db)
		if err != nil {
			t.Fatal(err)
		}
		srv := replayServer(t, llm.APIAnthropic, replay.Reply{Blocks: calls}, replay.Reply{Blocks: []llm.Block{llm.TextBlock("done")}})
		ws := openWorkspace(t, strata.Options{Dir: dir, Agent: "k", ProviderName: "anthropic", BaseURL: srv.URL(),
			Mode: agent.ModeAsk, Approver: ap, Store: st, Params: llm.Params{MaxTokens: 1024}})
		var s *strata.Session
		if resume == "" {
			s, err = ws.NewSession(t.Context(), strata.SessionOptions{})
		} else {
			s, err = ws.ResumeSession(t.Context(), resume, strata.SessionOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Prompt(t.Context(), "go"); err != nil {
			t.Fatal(err)
		}
		res := resultsByID(s.History())
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		return s, res
	}
	first, _ := run("", rounds[0])
	if got := strings.Join(ap.asked, ","); got != "w1,b1" {
		t.Fatalf("first session asked about %q, want w1,b1", got)
	}
	ap.asked = nil
	_, res := run(first.ID(), rounds[1])
	if got := strings.Join(ap.asked, ","); got != "w3" {
		t.Errorf("resumed session asked about %q; want only w3 (outside the workspace: always never covers it)", got)
	}
	for _, f := range []string{filepath.Join(dir, "two.txt"), filepath.Join(outside, "three.txt")} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s not written after the resume: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "b2.ran")); err == nil || !strings.Contains(resultText(res["b2"]), "rejected by the user") {
		t.Errorf("execute_bash rejected always ran or was not refused after the resume: %s", resultText(res["b2"]))
	}
}
