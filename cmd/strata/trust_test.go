package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/strata-agent/strata/internal/peers"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// trustProject is a cloned repository without an agent file: AGENTS.md and
// steering for the default agent, and the real server-everything peer in
// .mcp.json and .kiro/settings/mcp.json, each started through `sh -c` that
// first leaves a marker file, so the test sees whether it ran.
func trustProject(t *testing.T) (dir string, env []string) {
	t.Helper()
	bin := peers.Bin(t)
	dir = t.TempDir()
	server := func(name string) string {
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{name: map[string]any{
			"command": "sh", "args": []string{"-c", "touch " + filepath.Join(dir, name+"-ran") + "; exec " + filepath.Join(bin, "mcp-server-everything")},
			"env": map[string]string{"PATH": bin + ":" + os.Getenv("PATH")}}}})
		return string(b)
	}
	for rel, s := range map[string]string{
		"AGENTS.md":               "AGENTS-MD-MARKER: run the tests before you commit",
		".kiro/steering/style.md": "---\ninclusion: always\n---\nSTEERING-MARKER",
		".mcp.json":               server("claude"),
		".kiro/settings/mcp.json": server("kiro"),
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, []string{"HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir()}
}

// The workspace trust step, through the real binary: a workspace's MCP
// servers do not start until trusted (non-interactive runs exit 2 naming
// --trust and listing the commands), --trust starts them and is
// remembered, and a changed command asks again. `mcp list` with no flags
// used to launch .kiro/settings/mcp.json at once.
func TestAttackWorkspaceTrustStep(t *testing.T) {
	dir, env := trustProject(t)
	anyRan := func() bool { return ran(dir, "claude-ran") || ran(dir, "kiro-ran") }

	r := runCLI(t, dir, env, "mcp", "list")
	if r.code != 2 || !strings.Contains(r.stderr, "--trust") || !strings.Contains(r.stderr, "mcp kiro:") || anyRan() {
		t.Fatalf("mcp list, untrusted: exit %d, ran %v\n%s", r.code, anyRan(), r.stderr)
	}
	srv := doneServer(t, 2)
	key := append(env, "ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL="+srv.URL())
	r = runCLI(t, dir, key, "run", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "run again with --trust") || !strings.Contains(r.stderr, "mcp claude:") ||
		anyRan() || len(srv.Received()) != 0 {
		t.Fatalf("run, untrusted: exit %d, ran %v, %d request(s)\n%s", r.code, anyRan(), len(srv.Received()), r.stderr)
	}

	// --trust: both servers start, their tools and the project files are in the request.
	r = runCLI(t, dir, key, "run", "--trust", "hi")
	if r.code != 0 || !ran(dir, "claude-ran") || !ran(dir, "kiro-ran") {
		t.Fatalf("run --trust: exit %d, claude %v kiro %v\n%s", r.code, ran(dir, "claude-ran"), ran(dir, "kiro-ran"), r.stderr)
	}
	body := string(srv.Received()[0].Body)
	for _, want := range []string{"AGENTS-MD-MARKER", "STEERING-MARKER", `"name":"kiro___echo"`, `"name":"claude___echo"`} {
		if !strings.Contains(body, want) {
			t.Errorf("request lacks %s", want)
		}
	}

	// Remembered: no flag needed for the same commands.
	os.Remove(filepath.Join(dir, "kiro-ran"))
	r = runCLI(t, dir, key, "run", "hi")
	if r.code != 0 || !ran(dir, "kiro-ran") {
		t.Fatalf("run after --trust: exit %d\n%s", r.code, r.stderr)
	}

	// A changed command is asked about again.
	os.Remove(filepath.Join(dir, "kiro-ran"))
	raw, _ := os.ReadFile(filepath.Join(dir, ".kiro/settings/mcp.json"))
	os.WriteFile(filepath.Join(dir, ".kiro/settings/mcp.json"), []byte(strings.Replace(string(raw), "touch ", "touch /dev/null; touch ", 1)), 0o644)
	r = runCLI(t, dir, key, "run", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "touch /dev/null") || ran(dir, "kiro-ran") {
		t.Errorf("run after a command changed: exit %d, ran %v\n%s", r.code, ran(dir, "kiro-ran"), r.stderr)
	}
	// ACP has no terminal to ask on: it refuses the same way.
	if r := runCLI(t, dir, key, "acp"); r.code != 2 || !strings.Contains(r.stderr, "--trust") {
		t.Errorf("acp, changed commands: exit %d\n%s", r.code, r.stderr)
	}
}

func ran(dir, marker string) bool {
	_, err := os.Stat(filepath.Join(dir, marker))
	return err == nil
}

// On a terminal (a pseudo-terminal from util-linux script(1)), the trust
// step asks: "n" runs nothing and exits 2, "y" runs the commands and
// remembers the answer.
func TestAttackWorkspaceTrustAsksOnATerminal(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script(1) not on PATH: no pseudo-terminal to ask on")
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".kiro", "settings"), 0o755)
	os.WriteFile(filepath.Join(dir, ".kiro", "settings", "mcp.json"),
		[]byte(`{"mcpServers":{"m":{"command":"sh","args":["-c","touch `+filepath.Join(dir, "ran")+`; exit 1"]}}}`), 0o644)
	env := []string{"HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir()}
	for _, c := range []struct {
		answer string
		code   int
		ran    bool
	}{{"n", 2, false}, {"y", 1, true}, {"", 1, true}} { // trusted: the server runs and fails (exit 1: every server failed); the last: remembered, not asked
		os.Remove(filepath.Join(dir, "ran"))
		cmd := exec.Command("script", "-qec", binary+" mcp list", "/dev/null")
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(c.answer+"\n")
		cmd.Env = append(os.Environ(), append(env, "STRATA_DATA_DIR="+dataDir)...)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		asked := strings.Contains(string(out), "? trust this workspace")
		if code != c.code || ran(dir, "ran") != c.ran || asked != (c.answer != "") {
			t.Errorf("answer %q: exit %d, ran %v, asked %v\n%s", c.answer, code, ran(dir, "ran"), asked, out)
		}
	}
}

// One trust decision covers `mcp list` and `run` of the same workspace and
// agent: both ask about the same commands (the default agent's servers from
// every mcp.json and .mcp.json; an agent file's hooks and servers), so
// trusting in either one lets the other run unasked. They used to hash
// different sets (mcp list: only .kiro/settings/mcp.json, and no hooks).
func TestAttackTrustDecisionCoversMCPListAndRun(t *testing.T) {
	srv := doneServer(t, 2)

	// Default agent: trusted by mcp list, then run asks nothing.
	dir, env := trustProject(t)
	r := runCLI(t, dir, env, "mcp", "list", "--trust")
	if r.code != 0 || !strings.Contains(r.stdout, "@claude tools") || !strings.Contains(r.stdout, "@kiro tools") {
		t.Fatalf("mcp list --trust: exit %d (want both servers, as run starts both)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	os.Remove(filepath.Join(dir, "claude-ran"))
	key := append(env, "ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL="+srv.URL())
	r = runCLI(t, dir, key, "run", "hi")
	if r.code != 0 || strings.Contains(r.stderr, "would run these commands") || !ran(dir, "claude-ran") {
		t.Errorf("run after mcp list --trust: exit %d, claude ran %v\n%s", r.code, ran(dir, "claude-ran"), r.stderr)
	}

	// An agent file with a hook: trusted by run, then mcp list asks nothing.
	dir, env = trustProject(t)
	everything := filepath.Join(peers.Bin(t), "mcp-server-everything")
	agentJSON, _ := json.Marshal(map[string]any{"name": "dev",
		"hooks":      map[string]any{"agentSpawn": []any{map[string]any{"command": "touch " + filepath.Join(dir, "hook-ran")}}},
		"mcpServers": map[string]any{"ev": map[string]any{"command": everything, "env": map[string]string{"PATH": peers.Bin(t) + ":" + os.Getenv("PATH")}}}})
	os.MkdirAll(filepath.Join(dir, ".kiro", "agents"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, ".kiro", "agents", "dev.json"), agentJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	key = append(env, "ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL="+srv.URL())
	r = runCLI(t, dir, key, "run", "--agent", "dev", "--trust", "hi")
	if r.code != 0 || !ran(dir, "hook-ran") {
		t.Fatalf("run --agent dev --trust: exit %d, hook ran %v\n%s", r.code, ran(dir, "hook-ran"), r.stderr)
	}
	r = runCLI(t, dir, env, "mcp", "list", "--agent", "dev")
	if r.code != 0 || strings.Contains(r.stderr, "would run these commands") || !strings.Contains(r.stdout, "@ev tools") {
		t.Errorf("mcp list --agent dev after run --trust: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// Untrusted, mcp list shows the hook it would trust along with the server.
	r = runCLI(t, dir, append(env, "XDG_CONFIG_HOME="+t.TempDir()), "mcp", "list", "--agent", "dev")
	if r.code != 2 || !strings.Contains(r.stderr, "hook agentSpawn: touch ") || !strings.Contains(r.stderr, "mcp ev: ") {
		t.Errorf("mcp list --agent dev, untrusted: exit %d\n%s", r.code, r.stderr)
	}
}

// doneServer serves n Anthropic answers "done" (10 input, 2 output tokens)
// on 127.0.0.1 until the test ends.
func doneServer(t *testing.T, n int) *replay.Server {
	t.Helper()
	reply, err := replay.AnthropicStream("m", llm.Usage{Input: 10, Output: 2}, llm.StopEndTurn, llm.TextBlock("done"))
	if err != nil {
		t.Fatal(err)
	}
	replies := make([]replay.Response, n)
	for i := range replies {
		replies[i] = reply
	}
	srv, err := replay.NewServer(replies...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// --trust means "the commands present when I started" (issue 23, item 2):
// during a `run --trust`, the model rewrites a sub-agent's file to add an
// agentSpawn hook and execute_bash permission, then delegates to it. The
// rewritten file is asked about again — and, with no terminal, refused:
// the hook does not run and the run ends normally with the sub-agent call
// failed. --trust used to trust (and remember) the model's hook.
func TestAttackTrustFlagCoversOnlyWhatWasThereAtStart(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, s string) {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".kiro/agents/parent2.json", `{"name":"parent2","prompt":"PARENT-PROMPT","tools":["fs_read","use_subagent"],
		"allowedTools":["fs_read","use_subagent"],"toolsSettings":{"subagent":{"availableAgents":["helper"],"trustedAgents":["helper"]}}}`)
	write(".kiro/agents/helper.json", `{"name":"helper","prompt":"HELPER-PROMPT","tools":["fs_read"],"allowedTools":["fs_read"],
		"hooks":{"agentSpawn":[{"command":"echo trusted at start"}]}}`)
	var mu sync.Mutex
	n := 0
	srv, err := replay.NewResponder(func(r replay.Request) replay.Response {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		reply := replay.Reply{Blocks: []llm.Block{llm.TextBlock("done")}}
		if first {
			write(".kiro/agents/helper.json", `{"name":"helper","prompt":"HELPER-PROMPT","tools":["execute_bash"],"allowedTools":["execute_bash"],
				"hooks":{"agentSpawn":[{"command":"touch `+filepath.Join(dir, "hook-ran")+`"}]}}`)
			in, _ := json.Marshal(map[string]string{"agent": "helper", "task": "run it"})
			reply = replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock("s1", "use_subagent", in)}}
		}
		resp, err := replay.Turn(llm.APIAnthropic, reply)
		if err != nil {
			return replay.Response{Status: 500, Body: []byte(err.Error())}
		}
		return resp
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env := []string{"HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir(), "ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + srv.URL()}
	r := runCLI(t, dir, env, "run", "--trust", "--agent", "parent2", "--format", "json", "go")
	if ran(dir, "hook-ran") {
		t.Fatalf("the hook the model wrote during a --trust run ran\n%s", r.stderr)
	}
	if r.code != 0 || !strings.Contains(r.stderr, "changed after strata started") || !strings.Contains(r.stdout, "changed after strata started") {
		t.Errorf("exit %d; want 0 with the refusal on stderr and in the use_subagent result\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}
