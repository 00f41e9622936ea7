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

// writeAgent writes a kiro agent file under root.
func writeAgent(t *testing.T, root, rel, body string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// `--agent NAME` resolves as kiro does in every command that loads an agent
// (run, chat, acp, render, mcp list): the workspace's .kiro/agents and
// .amazonq/cli-agents, then ~/.kiro/agents and ~/.aws/amazonq/cli-agents, a
// workspace agent shadowing a global one of the same name; a name that
// matches nothing is a usage error listing the names that exist.
func TestAgentNamesResolveAsKiro(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	writeAgent(t, ws, ".kiro/agents/coder.json", `{"name":"coder","prompt":"WORKSPACE-CODER-PROMPT",
		"hooks":{"agentSpawn":[{"command":"echo spawned >> spawned.txt"}]},
		"mcpServers":{"coder-srv":{"command":"strata-test-no-such-command"}}}`)
	writeAgent(t, ws, ".amazonq/cli-agents/helper.json", `{"name":"helper","prompt":"WORKSPACE-HELPER-PROMPT"}`)
	writeAgent(t, home, ".kiro/agents/coder.json", `{"name":"coder","prompt":"GLOBAL-CODER-PROMPT"}`)
	writeAgent(t, home, ".kiro/agents/roamer.json", `{"name":"roamer","prompt":"GLOBAL-ROAMER-PROMPT"}`)
	writeAgent(t, home, ".aws/amazonq/cli-agents/qdev.json", `{"name":"qdev","prompt":"GLOBAL-QDEV-PROMPT"}`)
	env := []string{"HOME=" + home, "STRATA_DATA_DIR=" + t.TempDir()}

	for name, want := range map[string]string{"coder": "WORKSPACE-CODER-PROMPT", "helper": "WORKSPACE-HELPER-PROMPT",
		"roamer": "GLOBAL-ROAMER-PROMPT", "qdev": "GLOBAL-QDEV-PROMPT"} {
		r := runCLI(t, ws, env, "render", "--agent", name, "hi")
		if r.code != 0 || !strings.Contains(r.stdout, want) || strings.Contains(r.stdout, "GLOBAL-CODER-PROMPT") {
			t.Errorf("render --agent %s: exit %d, body lacks %s (or has the shadowed global coder):\n%.300s\n%s", name, r.code, want, r.stdout, r.stderr)
		}
	}

	// run and chat send the named agent's prompt; its agentSpawn hook runs.
	u := llm.Usage{Input: 10, Output: 2}
	for _, args := range [][]string{{"run", "--agent", "coder", "--trust", "hi"}, {"chat", "--agent", "coder", "--trust"}} {
		os.Remove(filepath.Join(ws, "spawned.txt"))
		reply, err := replay.AnthropicStream("m", u, llm.StopEndTurn, llm.TextBlock("done"))
		if err != nil {
			t.Fatal(err)
		}
		srv, err := replay.NewServer(reply)
		if err != nil {
			t.Fatal(err)
		}
		r := runCLIInput(t, ws, append(env, "ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL="+srv.URL()), strings.NewReader("hi\n"), args...)
		reqs := srv.Received()
		srv.Close()
		if r.code != 0 || len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), "WORKSPACE-CODER-PROMPT") {
			t.Errorf("%v: exit %d, %d request(s)\n%s", args, r.code, len(reqs), r.stderr)
		}
		if b, _ := os.ReadFile(filepath.Join(ws, "spawned.txt")); string(b) != "spawned\n" {
			t.Errorf("%v: agentSpawn hook output file %q", args, b)
		}
	}
	os.Remove(filepath.Join(ws, "spawned.txt"))
	if r := runCLI(t, ws, env, "acp", "--agent", "coder", "--trust"); r.code != 0 {
		t.Errorf("acp --agent coder: exit %d: %s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "spawned.txt")); string(b) != "spawned\n" {
		t.Errorf("acp --agent coder did not load the agent (agentSpawn output %q)", b)
	}
	r := runCLI(t, ws, env, "mcp", "list", "--agent", "coder", "--trust", "--format", "json")
	var st []struct{ Name, State string }
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || len(st) != 1 || st[0].Name != "coder-srv" {
		t.Errorf("mcp list --agent coder: %v %s %s", err, r.stdout, r.stderr)
	}

	for _, args := range [][]string{
		{"render", "--agent", "nope", "hi"},
		{"run", "--agent", "nope", "hi"},
		{"chat", "--agent", "nope"},
		{"acp", "--agent", "nope"},
		{"mcp", "list", "--agent", "nope"},
	} {
		r := runCLI(t, ws, env, args...)
		if r.code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, r.code, r.stderr)
		}
		for _, w := range []string{`"nope"`, "coder", "helper", "roamer", "qdev"} {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%v: stderr lacks %s: %s", args, w, r.stderr)
			}
		}
	}
}
