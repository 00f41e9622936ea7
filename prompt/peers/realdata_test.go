package peers_test

import (
	"fmt"
	"github.com/strata-agent/strata/agentfile"
	"path/filepath"
	"sort"
	"testing"

	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/anthropic"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/prompt/peers"
	"github.com/strata-agent/strata/tool"
	"github.com/strata-agent/strata/trajectory"
)

// check assembles c with l and fails unless the request validates, carries
// at most llm.MaxBreakpoints breakpoints and encodes as an Anthropic body.
func check(t *testing.T, l prompt.Layout, c *prompt.Context, where string) {
	t.Helper()
	req, _, err := l.Assemble(c)
	if err != nil {
		t.Fatalf("%s %s: %v", l.Name(), where, err)
	}
	if n := len(req.Breakpoints); n > llm.MaxBreakpoints {
		t.Fatalf("%s %s: %d cache breakpoints; Anthropic allows %d", l.Name(), where, n, llm.MaxBreakpoints)
	}
	if err := req.Validate(); err != nil {
		t.Fatalf("%s %s: %v", l.Name(), where, err)
	}
	if _, err := anthropic.NewBody(req); err != nil {
		t.Fatalf("%s %s: anthropic body: %v", l.Name(), where, err)
	}
}

// Every peer stays within Anthropic's four cache breakpoints, and lays out a
// valid request, on every turn of every train trajectory: one layout
// instance per trajectory (codex keeps state), each call's recorded history
// with the trajectory's system prompt and mini-swe-agent's bash tool, plus
// a working file that changes halfway, so the layouts that place files
// (aider's chat files, codex's appended context) do so.
func TestTrainTrajectoriesKeepFourBreakpoints(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(shared.Path(t, "data/trajectories/mini-swe-agent/train"), "*.traj.json"))
	if len(files) < 50 {
		t.Fatalf("found %d train trajectories; want ≥ 50", len(files))
	}
	sort.Strings(files)
	bash := (&tool.ExecuteBash{}).Spec()
	calls := 0
	for _, f := range files {
		tr, err := trajectory.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range peers.Names() {
			l, err := prompt.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tr.Calls {
				req := tr.Request(i)
				c := &prompt.Context{Model: tr.Model, System: req.SystemText(), Tools: []llm.ToolSpec{bash},
					History: req.Messages, ConversationID: tr.InstanceID,
					Files: []prompt.File{{Path: "work.py", Content: "v1"}}}
				if i >= len(tr.Calls)/2 {
					c.Files[0].Content = "v2"
				}
				check(t, l, c, fmt.Sprintf("%s call %d", tr.InstanceID, i))
				calls++
			}
		}
	}
	t.Logf("%d requests laid out (%d trajectories × %d peers)", calls, len(files), len(peers.Names()))
}

// Every peer lays out every real agent of data/agents (its prompt, resources,
// steering and skills, as the runtime loads them from its kiro workspace)
// with strata's built-in tools, on a first prompt and after a tool
// round-trip. The full `strata render` path over the same agents, every
// registered layout and every provider, is cmd/strata's
// TestRenderEveryRealAgent.
func TestEveryRealAgent(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	var specs []llm.ToolSpec
	for _, tl := range tool.Builtins() {
		specs = append(specs, tl.Spec())
	}
	history := conversation()
	agents := 0
	for _, project := range shared.AgentProjects(t) {
		ws := shared.KiroWorkspace(t, project)
		for _, af := range agentfile.Find(ws) {
			if af.Scope != "workspace" {
				continue
			}
			ag, err := agentfile.Load(af.Path, ws)
			if err != nil {
				t.Fatalf("%s: %v", af.Path, err)
			}
			agents++
			for _, name := range peers.Names() {
				l, err := prompt.Lookup(name)
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range []int{1, len(history)} {
					c := ag.Context
					c.Model, c.Tools, c.History, c.ConversationID = "claude-sonnet-4-5", specs, history[:n], "loop-1"
					check(t, l, &c, af.Path)
				}
			}
		}
	}
	if agents < 9 {
		t.Fatalf("loaded %d real agents; want ≥ 9", agents)
	}
}
