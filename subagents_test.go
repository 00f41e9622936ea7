package strata_test

import (
	"encoding/json"
	"github.com/strata-agent/strata/internal/providers"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/peers"
	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// installMultiAgentSample makes a workspace whose .kiro holds a copy of the
// multi-agent sample project (a leader delegating to coder, reviewer, docs
// and ops), plus .kiro/agents/agents, a copy of the sample's agents folder:
// the agents' prompts are written "file://agents/<name>.md", which kiro
// resolves against the agent file's folder, so they are found only this
// way. Copies, not links: strata reads context files only inside the
// workspace after following symlinks (docs/security.md).
func installMultiAgentSample(t *testing.T) string {
	t.Helper()
	proj := shared.Path(t, "data/agents/projects/aws-samples__sample-kiro-cli-multiagent-development")
	ws := t.TempDir()
	kiroDir := filepath.Join(ws, ".kiro")
	for _, d := range []string{"steering", "skills", "settings", "prompts"} {
		if err := os.CopyFS(filepath.Join(kiroDir, d), os.DirFS(filepath.Join(proj, d))); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.CopyFS(filepath.Join(kiroDir, "agents"), os.DirFS(filepath.Join(proj, "agents"))); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(kiroDir, "agents", "agents"), os.DirFS(filepath.Join(proj, "agents"))); err != nil {
		t.Fatal(err)
	}
	return ws
}

// contextText returns the first message (the kiro context message) of an
// Anthropic request body.
func contextText(t *testing.T, body string) string { return requestMessages(t, body)[0] }

// The sample's leader delegates, one use_subagent call each, to coder,
// reviewer, docs and ops, offline, with a scripted model. kiro's subagent
// tool runs the agents of toolsSettings.subagent.availableAgents (those in
// trustedAgents without asking); each child has its own prompt, tools,
// hooks, MCP servers and model, and its own loop (child_loop_id), so every
// child's request carries its own agent's context, never the leader's.
func TestMultiAgentSampleDelegatesByName(t *testing.T) {
	ws := installMultiAgentSample(t)
	prompts := map[string]string{
		"leader":   "You are a technical lead",
		"coder":    "You are a senior software engineer",
		"reviewer": "You are a senior code reviewer",
		"docs":     "You are a technical writer",
		"ops":      "You are a DevOps engineer",
	}
	plan := []string{"coder", "reviewer", "docs", "ops"}
	who := func(ctxMsg string) string {
		for name, p := range prompts {
			if strings.Contains(ctxMsg, "Follow this instruction: "+p) {
				return name
			}
		}
		return ""
	}
	var mu sync.Mutex
	byAgent := map[string][]string{}
	m := newScriptedModel(t, func(body string) replay.Reply {
		name := who(contextText(t, body))
		mu.Lock()
		byAgent[name] = append(byAgent[name], body)
		mu.Unlock()
		if name != "leader" {
			return replay.Reply{Blocks: []llm.Block{llm.TextBlock(name + " finished its task")}}
		}
		n := strings.Count(body, `"type":"tool_result"`)
		if n < len(plan) {
			in, _ := json.Marshal(map[string]string{"agent": plan[n], "task": "task for " + plan[n] + ": add a health endpoint"})
			return replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock("d"+plan[n], "use_subagent", in)}}
		}
		return replay.Reply{Blocks: []llm.Block{llm.TextBlock("all four agents reported")}}
	})
	var events []event.Event
	var emu sync.Mutex
	o := strata.Options{Dir: ws, Agent: "leader", Layout: "kiro", DisableMCP: true, ProviderName: "anthropic", Respond: m.respond,
		Warn: func(string) {}} // the sample's hook scripts (.kiro/hooks) are not part of it: their warnings are expected
	w, err := strata.Open(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s, err := w.NewSession(t.Context(), strata.SessionOptions{OnEventSync: func(e event.Event) {
		emu.Lock()
		events = append(events, e)
		emu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Prompt(t.Context(), "build the health endpoint")
	if err != nil {
		t.Fatal(err)
	}
	if res.Message.Text() != "all four agents reported" {
		t.Errorf("final answer %q", res.Message.Text())
	}
	if len(byAgent[""]) != 0 || len(byAgent) != len(prompts) {
		t.Fatalf("want requests of exactly %d agents, got %d (%d carried no known agent prompt)", len(prompts), len(byAgent), len(byAgent[""]))
	}
	models := map[string]string{"leader": "claude-opus-4.6", "coder": "claude-sonnet-4.6", "reviewer": "claude-opus-4.6",
		"docs": "claude-haiku-4.5", "ops": "claude-sonnet-4.6"}
	for name, bodies := range byAgent {
		want := 1
		if name == "leader" {
			want = len(plan) + 1
		}
		if len(bodies) != want {
			t.Errorf("%s: %d requests, want %d", name, len(bodies), want)
			continue
		}
		var req struct{ Model string }
		json.Unmarshal([]byte(bodies[0]), &req)
		if id, _ := providers.ModelFor("anthropic", models[name]); req.Model != id {
			t.Errorf("%s: model %q, want its own %q (%s)", name, req.Model, id, models[name])
		}
		ctxMsg := contextText(t, bodies[0])
		for other, p := range prompts {
			if other != name && strings.Contains(ctxMsg, p) {
				t.Errorf("%s's context carries %s's prompt", name, other)
			}
		}
		if !strings.Contains(ctxMsg, "--- CONTEXT ENTRY BEGIN ---") {
			t.Errorf("%s: no context entries (steering, skills)", name)
		}
		if name != "leader" {
			msgs := requestMessages(t, bodies[0])
			if !strings.HasSuffix(msgs[len(msgs)-1], "task for "+name+": add a health endpoint") {
				t.Errorf("%s: the task is not its user message: %q", name, msgs[len(msgs)-1])
			}
		}
	}
	var desc string
	var leaderReq struct {
		Tools []struct{ Name, Description string }
	}
	json.Unmarshal([]byte(byAgent["leader"][0]), &leaderReq)
	for _, tl := range leaderReq.Tools {
		if tl.Name == agent.SubAgentToolName {
			desc = tl.Description
		}
	}
	for _, n := range []string{"coder", "reviewer", "security-reviewer", "ops", "docs"} {
		if !strings.Contains(desc, "\n- "+n+": ") {
			t.Errorf("use_subagent's description does not list %s:\n%s", n, desc)
		}
	}
	children := map[string]bool{}
	subTurns := map[string]bool{}
	for _, e := range events {
		if e.Kind == event.ToolExecutionEnd && e.ChildLoopID != "" {
			children[e.ChildLoopID] = true
		}
		if e.Kind == event.TurnStart && e.Trigger == event.TriggerSubAgent {
			subTurns[e.Turn.LoopID] = true
		}
	}
	if len(children) != 4 || children[s.LoopID()] {
		t.Errorf("want 4 child loops distinct from the leader's, got %v", children)
	}
	for id := range children {
		if !subTurns[id] {
			t.Errorf("child loop %s has no turn triggered by sub_agent", id)
		}
	}
}

// availableAgents bounds delegation and trustedAgents skips the approval:
// with no approver (allowlist), a trusted agent runs, an available but
// untrusted one is refused for want of approval, and an agent not listed is
// an error naming the list (even when trustedAgents names it).
func TestSubAgentAvailabilityAndTrust(t *testing.T) {
	dir := t.TempDir()
	agentsDir := filepath.Join(dir, ".kiro", "agents")
	writeFile(t, filepath.Join(agentsDir, "boss.json"), `{"name":"boss","prompt":"you are the boss","tools":["*"],
		"toolsSettings":{"subagent":{"availableAgents":["help*","other"],"trustedAgents":["helper","outsider"]}}}`)
	writeFile(t, filepath.Join(agentsDir, "helper.json"), `{"name":"helper","description":"helps","prompt":"you are the helper","tools":["fs_read"]}`)
	writeFile(t, filepath.Join(agentsDir, "other.json"), `{"name":"other","prompt":"you are the other","tools":["fs_read"]}`)
	writeFile(t, filepath.Join(agentsDir, "outsider.json"), `{"name":"outsider","prompt":"you are the outsider","tools":["fs_read"]}`)
	call := func(id, name string) llm.Block {
		in, _ := json.Marshal(map[string]string{"agent": name, "task": "do it"})
		return llm.ToolUseBlock(id, agent.SubAgentToolName, in)
	}
	m := newScriptedModel(t, func(body string) replay.Reply {
		switch {
		case strings.Contains(body, "you are the helper"):
			return replay.Reply{Blocks: []llm.Block{llm.TextBlock("helper did it")}}
		case strings.Contains(body, `"type":"tool_result"`):
			return replay.Reply{Blocks: []llm.Block{llm.TextBlock("done")}}
		}
		return replay.Reply{Blocks: []llm.Block{call("a", "helper"), call("b", "other"), call("c", "outsider")}}
	})
	_, s := openScripted(t, strata.Options{Dir: dir, Agent: "boss", Layout: "kiro"}, m)
	if _, err := s.Prompt(t.Context(), "delegate"); err != nil {
		t.Fatal(err)
	}
	h := s.History()
	results := h[len(h)-2].Content
	if len(results) != 3 {
		t.Fatalf("want 3 tool results, got %+v", results)
	}
	text := func(i int) string { return results[i].Content[0].Text }
	if results[0].IsError || !strings.HasPrefix(text(0), "helper did it") || !strings.Contains(text(0), "[child_loop_id: ") {
		t.Errorf("trusted helper: %+v", results[0])
	}
	if !results[1].IsError || strings.Contains(text(1), "other did") {
		t.Errorf("untrusted other must wait for an approval no approver gives: %+v", results[1])
	}
	if !results[2].IsError || !strings.Contains(text(2), `agent "outsider" is not available as a sub-agent`) ||
		!strings.Contains(text(2), "availableAgents lists help*, other") {
		t.Errorf("outsider: %+v", results[2])
	}
}

// A sub-agent is a whole agent: its agentSpawn hook output and its MCP
// server's tools (a real memory server from ../shared/peers) are in its own
// requests and not in its parent's, whose own server stays its own.
func TestSubAgentRunsWithItsOwnHooksAndMCP(t *testing.T) {
	bin := peers.Bin(t)
	dir := t.TempDir()
	server := func(peer string) map[string]any {
		return map[string]any{"command": filepath.Join(bin, peer), "env": map[string]string{"PATH": bin + ":" + os.Getenv("PATH")}}
	}
	write := func(name string, cfg map[string]any) {
		b, _ := json.Marshal(cfg)
		writeFile(t, filepath.Join(dir, ".kiro", "agents", name+".json"), string(b))
	}
	write("boss", map[string]any{"name": "boss", "prompt": "you are the boss", "tools": []string{"*"},
		"mcpServers":    map[string]any{"ev": server("mcp-server-everything")},
		"hooks":         map[string]any{"agentSpawn": []map[string]string{{"command": "echo boss-spawned"}}},
		"toolsSettings": map[string]any{"subagent": map[string]any{"availableAgents": []string{"helper"}, "trustedAgents": []string{"helper"}}}})
	write("helper", map[string]any{"name": "helper", "prompt": "you are the helper", "tools": []string{"*"},
		"mcpServers": map[string]any{"mem": server("mcp-server-memory")},
		"hooks":      map[string]any{"agentSpawn": []map[string]string{{"command": "echo helper-spawned"}}}})
	var mu sync.Mutex
	var helperBody, bossBody string
	m := newScriptedModel(t, func(body string) replay.Reply {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case strings.Contains(body, "you are the helper"):
			helperBody = body
			return replay.Reply{Blocks: []llm.Block{llm.TextBlock("helped")}}
		case strings.Contains(body, `"type":"tool_result"`):
			return replay.Reply{Blocks: []llm.Block{llm.TextBlock("done")}}
		}
		bossBody = body
		in, _ := json.Marshal(map[string]string{"agent": "helper", "task": "help"})
		return replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock("s1", agent.SubAgentToolName, in)}}
	})
	ws, s := openScripted(t, strata.Options{Dir: dir, Agent: "boss", Layout: "kiro"}, m)
	if _, err := s.Prompt(t.Context(), "get help"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if helperBody == "" || bossBody == "" {
		t.Fatal("the helper or the boss made no request")
	}
	bossTools, helperTools := requestTools(t, bossBody), requestTools(t, helperBody)
	if !slices.Contains(bossTools, "ev___echo") || slices.Contains(bossTools, "mem___create_entities") {
		t.Errorf("boss tools: %v", bossTools)
	}
	if !slices.Contains(helperTools, "mem___create_entities") || slices.Contains(helperTools, "ev___echo") {
		t.Errorf("helper tools: %v", helperTools)
	}
	hc, bc := contextText(t, helperBody), contextText(t, bossBody)
	if !strings.Contains(hc, "helper-spawned") || strings.Contains(hc, "boss-spawned") || !strings.Contains(bc, "boss-spawned") || strings.Contains(bc, "helper-spawned") {
		t.Errorf("agentSpawn output not per agent:\nhelper: %q\nboss: %q", hc, bc)
	}
	if st := ws.MCP().Statuses(); len(st) != 1 || st[0].Name != "ev" {
		t.Errorf("the boss's manager holds %v", st)
	}
}
