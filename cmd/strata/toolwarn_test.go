package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
)

// A tool name the agent lists that strata cannot offer is a warning in
// `agents list`, `render` and `run` — never a silent drop (the kiro-cli
// turn anatomy's make_tool_spec filters "against the agent's tools and
// allowedTools configuration").
func TestToolNamesStrataLacksWarnEverywhere(t *testing.T) {
	proj := t.TempDir()
	os.MkdirAll(filepath.Join(proj, ".kiro", "agents"), 0o755)
	os.WriteFile(filepath.Join(proj, ".kiro", "agents", "r.json"),
		[]byte(`{"name":"r","prompt":"research","tools":["fs_read","web_search","fs_list"]}`), 0o644)
	wants := []string{`"web_search" is a kiro built-in strata does not implement`, `"fs_list" is not a built-in tool of strata or kiro`}
	check := func(what, out string) {
		t.Helper()
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("%s does not warn %q:\n%s", what, w, out)
			}
		}
	}
	r := runCLI(t, proj, nil, "agents", "list")
	check("agents list", r.stdout+r.stderr)
	r = runCLI(t, proj, nil, "render", "--layout", "kiro", "--agent", "r", "hi")
	check("render", r.stderr)
	stream := writeStream(t, t.TempDir(), "a.sse", llm.Usage{Input: 5, Output: 1}, llm.StopEndTurn, llm.TextBlock("ok"))
	r = runCLI(t, proj, nil, "run", "--agent", "r", "--replay", stream, "hi")
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	check("run", r.stderr)
}
