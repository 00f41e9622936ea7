package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/internal/peers"
	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/mcp"
)

// `strata mcp list --record` saves the tools/list answer of a real MCP server
// (the server-everything peer), and `bench cache --agent --mcp-tools` prices
// every call with those specs: prompt tokens per call go up by exactly the
// recorded specs' tokens, and only by the tools the agent's tools field
// allows.
func TestBenchMCPToolsRecordedFromRealServer(t *testing.T) {
	bin := peers.Bin(t)
	traj := shared.Path(t, "data/trajectories/mini-swe-agent/train/astropy__astropy-12907.traj.json")
	trajDir := t.TempDir()
	if err := os.Symlink(traj, filepath.Join(trajDir, filepath.Base(traj))); err != nil {
		t.Fatal(err)
	}
	proj, home := t.TempDir(), t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}
	agentFile := filepath.Join(proj, ".kiro", "agents", "ev.json")
	writeAgent := func(tools []string) {
		cfg := map[string]any{"name": "ev", "prompt": "You test MCP tools.", "tools": tools,
			"mcpServers": map[string]any{"ev": map[string]any{"command": filepath.Join(bin, "mcp-server-everything"),
				"env": map[string]string{"PATH": bin + ":" + os.Getenv("PATH")}}}}
		b, _ := json.Marshal(cfg)
		if err := os.MkdirAll(filepath.Dir(agentFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(agentFile, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeAgent([]string{"@builtin", "@ev"})
	rec := filepath.Join(t.TempDir(), "tools.json")
	if r := runCLI(t, proj, env, "mcp", "list", "--agent", agentFile, "--trust", "--record", rec); r.code != 0 {
		t.Fatalf("mcp list --record: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	record, err := mcp.LoadRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	ev := record.Server("ev")
	if ev == nil || len(ev.Tools) < 2 {
		t.Fatalf("record holds no tools of ev: %+v", record)
	}
	var specs []llm.ToolSpec
	for _, tl := range ev.Tools {
		if tl.Spec.Name != mcp.ToolName("ev", tl.Name) || len(tl.Spec.InputSchema) == 0 {
			t.Errorf("recorded tool %q: spec %+v", tl.Name, tl.Spec)
		}
		specs = append(specs, tl.Spec)
	}
	perCall := func(args ...string) float64 {
		t.Helper()
		args = append([]string{"bench", "cache", "--trajectories", trajDir, "--scenario", "append", "--layouts", "cachefit",
			"--format", "json", "--agent", agentFile}, args...)
		r := runCLI(t, proj, env, args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
		var rep struct {
			Layouts map[string]struct {
				PerCall float64 `json:"prompt_tokens_per_call"`
			} `json:"layouts"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, r.stdout)
		}
		return rep.Layouts["cachefit"].PerCall
	}
	without, with := perCall(), perCall("--mcp-tools", rec)
	want := cachesim.FromRequest(&llm.Request{Tools: specs}, nil, time.Time{}, 0).InputTokens()
	if got := with - without; got != float64(want) {
		t.Errorf("prompt tokens per call: %.1f without MCP tools, %.1f with: +%.1f, want + the %d recorded tools' %d tokens",
			without, with, got, len(specs), want)
	}

	// Only the tools the agent allows: "@ev/echo" selects one.
	writeAgent([]string{"@builtin", "@ev/echo"})
	echo := ev.Tools[0]
	for _, tl := range ev.Tools {
		if tl.Name == "echo" {
			echo = tl
		}
	}
	if echo.Name != "echo" {
		t.Fatalf("server-everything has no echo tool: %+v", ev.Tools)
	}
	one := cachesim.FromRequest(&llm.Request{Tools: []llm.ToolSpec{echo.Spec}}, nil, time.Time{}, 0).InputTokens()
	if got := perCall("--mcp-tools", rec) - without; got != float64(one) {
		t.Errorf("with tools [@builtin @ev/echo]: +%.1f tokens per call, want %d (echo only)", got, one)
	}

	// A record without the agent's server is refused, naming both.
	empty := filepath.Join(t.TempDir(), "empty.json")
	if err := mcp.WriteRecord(empty, mcp.Record{Version: mcp.RecordVersion}); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, proj, env, "bench", "cache", "--trajectories", trajDir, "--scenario", "append", "--layouts", "cachefit",
		"--agent", agentFile, "--mcp-tools", empty)
	if r.code != 2 || !containsAll(r.stderr, empty, `"ev"`, "--record") {
		t.Errorf("record without the server: exit %d, stderr %s", r.code, r.stderr)
	}
	if r := runCLI(t, proj, env, "bench", "cache", "--trajectories", trajDir, "--mcp-tools", rec); r.code != 2 {
		t.Errorf("--mcp-tools without --agent: exit %d, want 2\n%s", r.code, r.stderr)
	}
}

// containsAll reports whether s contains every one of subs.
func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
