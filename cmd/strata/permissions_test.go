package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
)

// Issue 24, item 6 and issue 23, break 1, through the binary as a user runs
// it: `strata run --approve allowlist` without a terminal, an agent whose
// allowedTools name fs_write and execute_bash. A write outside the
// workspace and writes to agent configuration (fs_write, a shell
// redirection) are asked about, and nobody can answer, so none of them
// happens; a write inside the workspace runs unasked.
func TestAttackAllowlistWithoutTerminalWritesNoSensitivePath(t *testing.T) {
	ws, streams, outside := t.TempDir(), t.TempDir(), t.TempDir()
	agentFile := `{"name":"k","prompt":"p","tools":["fs_write","execute_bash"],"allowedTools":["fs_write","execute_bash"]}`
	if err := os.MkdirAll(filepath.Join(ws, ".kiro/agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".kiro/agents/k.json"), []byte(agentFile), 0o644); err != nil {
		t.Fatal(err)
	}
	use := func(id, name, input string) llm.Block { return llm.ToolUseBlock(id, name, json.RawMessage(input)) }
	call := writeStream(t, streams, "c.sse", llm.Usage{Input: 10, Output: 5}, llm.StopToolUse,
		use("toolu_out", "fs_write", `{"command":"create","path":"`+filepath.Join(outside, "planted.txt")+`","file_text":"x"}`),
		use("toolu_agent", "fs_write", `{"command":"create","path":".kiro/agents/k.json","file_text":"{}"}`),
		use("toolu_sh", "execute_bash", `{"command":"echo '{}' > .kiro/agents/k.json"}`),
		use("toolu_in", "fs_write", `{"command":"create","path":"inside.txt","file_text":"x"}`))
	final := writeStream(t, streams, "f.sse", llm.Usage{Input: 10, Output: 5}, llm.StopEndTurn, llm.TextBlock("ok"))
	r := runCLI(t, ws, nil, "run", "--agent", "k", "--approve", "allowlist", "--replay", call+","+final, "hi")
	// Calls denied for lack of a terminal make run exit 1, naming --approve.
	if r.code != 1 || !strings.Contains(r.stderr, "--approve") {
		t.Fatalf("exit %d (want 1, naming --approve)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(outside, "planted.txt")); err == nil {
		t.Error("an outside-workspace write ran without a terminal")
	}
	if b, _ := os.ReadFile(filepath.Join(ws, ".kiro/agents/k.json")); string(b) != agentFile {
		t.Errorf("the agent file was rewritten: %s", b)
	}
	if _, err := os.Stat(filepath.Join(ws, "inside.txt")); err != nil {
		t.Errorf("the allow-listed inside write did not run:\n%s\n%s", r.stdout, r.stderr)
	}
	if n := strings.Count(r.stdout, "denied"); n < 3 {
		t.Errorf("%d denials reported, want 3:\n%s", n, r.stdout)
	}
}
