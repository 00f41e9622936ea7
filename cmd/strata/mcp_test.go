package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/internal/peers"
	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/prompt/kiro"
)

// A real agent config with mcpServers and hooks (KaimingWan__oh-my-claude-code
// researcher, copied into a temp project with its `fetch` server — uvx, not
// installable here — pointed at the server-everything peer) runs a replayed
// turn end to end: the real agentSpawn hook's output is in the request (kiro
// layer 4), the allowed MCP tools are offered and pre-approved by its
// allowedTools, the recorded model calls one and its result goes back.
func TestRealAgentWithMCPAndHooks(t *testing.T) {
	bin := peers.Bin(t)
	raw, err := os.ReadFile(shared.Path(t, "data/agents/projects/KaimingWan__oh-my-claude-code/.kiro/agents/researcher.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["mcpServers"] = map[string]any{"fetch": map[string]any{"command": filepath.Join(bin, "mcp-server-everything"),
		"env": map[string]string{"PATH": bin + ":" + os.Getenv("PATH")}}}
	proj := t.TempDir()
	os.MkdirAll(filepath.Join(proj, ".kiro", "agents"), 0o755)
	b, _ := json.Marshal(cfg)
	agentFile := filepath.Join(proj, ".kiro", "agents", "default.json")
	os.WriteFile(agentFile, b, 0o644)

	u := llm.Usage{Input: 40, Output: 8}
	m1, err1 := replay.AnthropicStream("m1", u, llm.StopToolUse, llm.ToolUseBlock("toolu_c1", "fetch___echo", json.RawMessage(`{"message":"from the loop"}`)))
	m2, err2 := replay.AnthropicStream("m2", u, llm.StopEndTurn, llm.TextBlock("The server echoed it."))
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	srv, err := replay.NewServer(m1, m2)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	r := runCLI(t, proj, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + srv.URL()},
		"run", "--agent", agentFile, "--trust", "--layout", "kiro", "--model", "claude-sonnet-4-5", "echo something")
	if r.code != 0 || !strings.Contains(r.stdout, "The server echoed it.") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Received()
	first, second := string(reqs[0].Body), string(reqs[1].Body)
	if !strings.Contains(first, "RESEARCHER: 1) Cite sources") || !strings.Contains(first, strings.TrimSuffix(kiro.EntryBegin, "\n")) {
		t.Errorf("agentSpawn hook output not in the kiro context message:\n%.800s", first)
	}
	if !strings.Contains(first, `"name":"fetch___echo"`) || !strings.Contains(first, `"name":"fetch___get-sum"`) ||
		strings.Contains(first, `"name":"fs_write"`) {
		t.Error("MCP tools not offered")
	}
	if !strings.Contains(second, "Echo: from the loop") {
		t.Error("MCP tool result not sent back")
	}
	r = runCLI(t, proj, nil, "mcp", "list", "--agent", agentFile, "--trust", "--format", "json")
	var st []struct {
		Name, State string
		Tools       []string
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || len(st) != 1 || st[0].State != "running" || len(st[0].Tools) < 12 {
		t.Errorf("mcp list: %v %s %s", err, r.stdout, r.stderr)
	}
}
