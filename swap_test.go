package strata_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/internal/peers"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/mcp"
)

// writeMCPAgent writes agent name into dir's .kiro/agents with prompt and
// one stdio MCP server (a real peer from ../shared/peers).
func writeMCPAgent(t *testing.T, dir, name, prompt, server, peer, bin string) {
	t.Helper()
	cfg := map[string]any{"name": name, "prompt": prompt, "tools": []string{"*"},
		"mcpServers": map[string]any{server: map[string]any{"command": filepath.Join(bin, peer),
			"env": map[string]string{"PATH": bin + ":" + os.Getenv("PATH")}}}}
	b, _ := json.Marshal(cfg)
	writeFile(t, filepath.Join(dir, ".kiro", "agents", name+".json"), string(b))
}

func states(m *mcp.Manager) map[string]mcp.State {
	out := map[string]mcp.State{}
	for _, s := range m.Statuses() {
		out[s.Name] = s.State
	}
	return out
}

// An agent swap, as the kiro-cli turn anatomy's MCP section says: "Agent
// swap … terminates ALL existing servers, creates a fresh McpManager, and
// relaunches from the new agent's config". With real MCP servers: alpha's
// "everything" server is terminated, beta's "memory" server launched in a
// new manager, and the next request carries beta's prompt and tools while
// the conversation goes on. An unknown agent changes nothing.
func TestSwapAgentRelaunchesMCPServers(t *testing.T) {
	bin := peers.Bin(t)
	dir := t.TempDir()
	writeMCPAgent(t, dir, "alpha", "you are alpha", "ev", "mcp-server-everything", bin)
	writeMCPAgent(t, dir, "beta", "you are beta", "mem", "mcp-server-memory", bin)
	m := newScriptedModel(t, func(string) replay.Reply { return replay.Reply{Blocks: []llm.Block{llm.TextBlock("ok")}} })
	ws, s := openScripted(t, strata.Options{Dir: dir, Agent: "alpha", Layout: "kiro"}, m)
	old := ws.MCP()
	if got := states(old); got["ev"] != mcp.Running {
		t.Fatalf("alpha's server: %v", got)
	}
	if _, err := s.Prompt(t.Context(), "hi"); err != nil {
		t.Fatal(err)
	}
	var cerr *strata.ConfigError
	if err := s.SwapAgent(t.Context(), "gamma"); !errors.As(err, &cerr) || states(old)["ev"] != mcp.Running {
		t.Fatalf("unknown agent: want a ConfigError and alpha's server still running, got %v, %v", err, states(old))
	}
	if err := s.SwapAgent(t.Context(), "beta"); err != nil {
		t.Fatal(err)
	}
	if got := states(old); got["ev"] != mcp.Terminated {
		t.Errorf("alpha's server after the swap: %v", got)
	}
	nm := ws.MCP()
	if nm == old || states(nm)["mem"] != mcp.Running || len(states(nm)) != 1 {
		t.Fatalf("beta's manager: %v (same as old: %v)", states(nm), nm == old)
	}
	if sm := s.MCP(); len(sm) != 1 || sm[0] != nm {
		t.Errorf("the session's MCP managers are not beta's: %v", sm)
	}
	if _, err := nm.GetToolSpecs("mem"); err != nil {
		t.Errorf("beta's server answers no tool list: %v", err)
	}
	if _, err := s.Prompt(t.Context(), "again"); err != nil {
		t.Fatal(err)
	}
	b := m.bodies()
	first, second := requestTools(t, b[0]), requestTools(t, b[1])
	if !slices.Contains(first, "ev___echo") || slices.ContainsFunc(first, func(n string) bool { return strings.HasPrefix(n, "mem___") }) {
		t.Errorf("alpha's request tools: %v", first)
	}
	if slices.Contains(second, "ev___echo") || !slices.Contains(second, "mem___create_entities") {
		t.Errorf("beta's request tools: %v", second)
	}
	msgs := requestMessages(t, b[1])
	if !strings.Contains(msgs[0], "Follow this instruction: you are beta") || strings.Contains(msgs[0], "alpha") {
		t.Errorf("context after the swap: %q", msgs[0])
	}
	if len(msgs) != 5 || msgs[2] != "hi" || msgs[3] != "ok" || msgs[4] != "again" {
		t.Errorf("the conversation must go on across the swap: %q", msgs)
	}
}
