package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/internal/peers"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// `/agent NAME` in `strata chat` is kiro's agent swap (kiro-cli turn
// anatomy: "Dynamic MCP requires an agent swap … which terminates all
// existing servers and relaunches from the new config"): with real MCP
// servers, the prompt after the swap carries the new agent's prompt and its
// server's tools instead of the old one's, in the same conversation; an
// unknown agent is reported and the chat goes on.
func TestChatAgentSwap(t *testing.T) {
	bin := peers.Bin(t)
	proj := t.TempDir()
	agent := func(name, prompt, server, peer string) {
		cfg := map[string]any{"name": name, "prompt": prompt, "tools": []string{"*"},
			"mcpServers": map[string]any{server: map[string]any{"command": filepath.Join(bin, peer),
				"env": map[string]string{"PATH": bin + ":" + os.Getenv("PATH")}}}}
		b, _ := json.Marshal(cfg)
		os.MkdirAll(filepath.Join(proj, ".kiro", "agents"), 0o755)
		os.WriteFile(filepath.Join(proj, ".kiro", "agents", name+".json"), b, 0o644)
	}
	agent("alpha", "you are alpha", "ev", "mcp-server-everything")
	agent("beta", "you are beta", "mem", "mcp-server-memory")
	u := llm.Usage{Input: 10, Output: 2}
	r1, err1 := replay.AnthropicStream("m1", u, llm.StopEndTurn, llm.TextBlock("alpha here"))
	r2, err2 := replay.AnthropicStream("m2", u, llm.StopEndTurn, llm.TextBlock("beta here"))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	srv, err := replay.NewServer(r1, r2)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	r := runCLIInput(t, proj, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + srv.URL()},
		strings.NewReader("hello\n/agent nosuch\n/agent beta\nagain\n/exit\n"),
		"chat", "--trust", "--agent", "alpha", "--layout", "kiro", "--model", "claude-sonnet-4-5", "--format", "json")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{`/agent nosuch: agent "nosuch" not found (agents: alpha, beta)`, "agent: beta (model claude-sonnet-4-5, 1 MCP server(s))"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	reqs := srv.Received()
	if len(reqs) != 2 {
		t.Fatalf("want 2 model calls, got %d", len(reqs))
	}
	first, second := string(reqs[0].Body), string(reqs[1].Body)
	if !strings.Contains(first, "Follow this instruction: you are alpha") || !strings.Contains(first, `"name":"ev___echo"`) {
		t.Errorf("first request is not alpha's:\n%.600s", first)
	}
	if !strings.Contains(second, "Follow this instruction: you are beta") || strings.Contains(second, `"name":"ev___echo"`) ||
		!strings.Contains(second, `"name":"mem___create_entities"`) {
		t.Errorf("second request is not beta's:\n%.600s", second)
	}
	if !strings.Contains(second, "alpha here") || !strings.Contains(second, `"again"`) {
		t.Error("the conversation did not go on across the swap")
	}
}

// The full-screen chat takes /agent too: the prompt swaps the agent and the
// answer goes to the transcript; other prompts run as before.
func TestFullScreenChatAgentCommand(t *testing.T) {
	proj := t.TempDir()
	os.MkdirAll(filepath.Join(proj, ".kiro", "agents"), 0o755)
	for _, a := range []string{"alpha", "beta"} {
		os.WriteFile(filepath.Join(proj, ".kiro", "agents", a+".json"), []byte(`{"name":"`+a+`","prompt":"you are `+a+`","tools":["fs_read"]}`), 0o644)
	}
	ws, err := strata.Open(t.Context(), strata.Options{Dir: proj, Agent: "alpha", ProviderName: "anthropic",
		Respond: func(replay.Request) replay.Response { return replay.Response{Status: 500} }})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	s, err := ws.NewSession(t.Context(), strata.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var said, ran []string
	run := withChatCommands(s, func(text string) { said = append(said, text) },
		func(_ context.Context, text string) (*agent.Result, error) {
			ran = append(ran, text)
			return &agent.Result{}, nil
		})
	for _, p := range []string{"/agent beta", "/agent", "hello"} {
		if _, err := run(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	if len(said) != 2 || !strings.HasPrefix(said[0], "agent: beta (model ") || !strings.Contains(said[1], "agents: alpha, beta") {
		t.Errorf("transcript: %q", said)
	}
	if len(ran) != 1 || ran[0] != "hello" || ws.Agent().Config.Name != "beta" {
		t.Errorf("ran %q, agent %s", ran, ws.Agent().Config.Name)
	}
}
