package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/strata-agent/strata/agentfile"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-agent/strata/internal/capture"
	"github.com/strata-agent/strata/internal/providers"
	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/prompt/kiro"
	"github.com/strata-agent/strata/prompt/panels"
	"github.com/strata-agent/strata/prompt/tiered"
	"github.com/strata-agent/strata/tool"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/render")

// seedLayouts are the layouts whose golden bodies are checked; cachefit and
// any later layout join the all-configs test automatically.
var seedLayouts = []string{"flat", "kiro", "panels", "tiered"}

// wireProviders are the wire formats render captures through the real SDKs.
var wireProviders = []string{"anthropic", "openai-chat", "openai-responses", "bedrock", "gemini"}

const goldenNow = "2026-11-23T10:00:00Z"

// goldenProject builds a kiro project in a temp dir from real data: the
// johnmbergman__kiro-agents project (agents, prompt, steering), the
// spirit-of-kiro steering files and every Agent Skill in data/skills, plus a
// test agent that uses them all through file:// and skill:// resources.
func goldenProject(t *testing.T) (root, agentFile string) {
	t.Helper()
	root = t.TempDir()
	copyTree(t, shared.Path(t, "data/agents/projects/johnmbergman__kiro-agents/.kiro"), filepath.Join(root, ".kiro"))
	copyTree(t, shared.Path(t, "data/steering/kirodotdev__spirit-of-kiro/.kiro/steering"), filepath.Join(root, ".kiro/steering"))
	skills := shared.Path(t, "data/skills/anthropics")
	entries, err := os.ReadDir(skills)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if src := filepath.Join(skills, e.Name(), "SKILL.md"); e.IsDir() && exists(src) {
			copyFile(t, src, filepath.Join(root, ".kiro/skills", e.Name(), "SKILL.md"))
		}
	}
	agentFile = filepath.Join(root, ".kiro/agents/golden.json")
	agent := `{
  "name": "golden",
  "description": "render golden test: the researcher prompt with steering, resources and skills",
  "prompt": "@researcher",
  "tools": ["fs_read", "grep", "glob"],
  "allowedTools": ["fs_read"],
  "resources": ["file://.kiro/steering/tech.md", "skill://.kiro/skills/**/SKILL.md"]
}`
	if err := os.WriteFile(agentFile, []byte(agent), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, agentFile
}

// goldenContext is the golden test's turn: the agent's context plus every
// layer the CLI cannot fill from a config alone (summary, hook output, task,
// knowledge, file tree) and a multi-turn history with a tool call.
func goldenContext(t *testing.T, root, agentFile string) prompt.Context {
	t.Helper()
	ld, err := agentfile.Load(agentFile, root)
	if err != nil {
		t.Fatal(err)
	}
	pc := ld.Context
	var tools []tool.Tool
	for _, tl := range tool.Builtins() {
		if ld.Config.ToolAllowed(tl.Spec().Name) {
			tools = append(tools, tl)
		}
	}
	pc.Model, pc.Now = "golden-model", 1795428000000 // goldenNow
	pc.Summary = "The user asked for a survey of the repository; two agents and one steering file were found."
	pc.HookOutputs = []string{"git branch: main\nuncommitted changes: 0"}
	pc.Task = "Task 3 of 5: update the README's agent table."
	pc.Knowledge = "kb: project-docs (12 files)"
	pc.FileTree = ".kiro/agents/coder.json\n.kiro/agents/default.json\n.kiro/agents/researcher.json"
	pc.Reminder = "Answer in English."
	for i := range pc.Files { // refresh times, oldest first, one minute apart
		pc.Files[i].Refreshed = pc.Now - int64(len(pc.Files)-i)*60_000
	}
	var specs []llm.ToolSpec
	for _, tl := range tools {
		specs = append(specs, tl.Spec())
	}
	pc.Tools = specs
	call := llm.Block{Type: llm.BlockToolUse, ID: "toolu_golden_1", Name: "glob", Input: json.RawMessage(`{"pattern":".kiro/agents/*.json"}`)}
	pc.History = []llm.Message{
		llm.UserText("Which agents does this project define?"),
		{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("Let me look."), call}},
		{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock(call.ID, ".kiro/agents/coder.json\n.kiro/agents/default.json\n.kiro/agents/researcher.json", false)}},
		{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("Three agents: coder, default and researcher.")}},
		llm.UserText("Add them to the README's agent table."),
	}
	return pc
}

// TestRenderGolden captures the wire body of every layout in seedLayouts for every
// provider and compares it with testdata/render/<layout>.<provider>.json
// (checked by hand against the designs in docs/; rewrite with -update). It also
// asserts the designs' exact texts and the breakpoint limit directly, and that a second
// render is byte-identical.
func TestRenderGolden(t *testing.T) {
	root, agentFile := goldenProject(t)
	for _, name := range seedLayouts {
		for _, prov := range wireProviders {
			t.Run(name+"."+prov, func(t *testing.T) {
				body := renderGolden(t, root, agentFile, name, prov)
				if again := renderGolden(t, root, agentFile, name, prov); !bytes.Equal(body, again) {
					t.Fatal("two renders of the same turn differ")
				}
				checkSeedText(t, name, prov, string(body))
				golden := filepath.Join("testdata", "render", name+"."+prov+".json")
				if *update {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, body, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run 'go test ./cmd/strata -run TestRenderGolden -update' and review the diff)", err)
				}
				if !bytes.Equal(body, want) {
					t.Errorf("body differs from %s (review, then -update):\n%s", golden, firstDiff(string(want), string(body)))
				}
			})
		}
	}
}

// renderGolden assembles the golden turn with a fresh layout and returns the
// captured body, indented.
func renderGolden(t *testing.T, root, agentFile, layoutName, provider string) []byte {
	t.Helper()
	spec := lookupProvider(t, provider)
	layout, err := prompt.Lookup(layoutName)
	if err != nil {
		t.Fatal(err)
	}
	pc := goldenContext(t, root, agentFile)
	pc.API = spec.API
	req, _, err := layout.Assemble(&pc)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := captureBody(context.Background(), spec, req)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		t.Fatalf("captured body is not JSON: %v", err)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// captureBody sends req through the real provider SDK over a recording
// transport and returns the body it would have sent.
func captureBody(ctx context.Context, spec providers.Spec, req *llm.Request) ([]byte, error) {
	tr := &capture.Transport{}
	p, err := providers.New(spec, providers.Options{APIKey: "render-not-sent", BaseURL: "http://127.0.0.1:1", HTTPClient: tr.Client()})
	if err != nil {
		return nil, err
	}
	_, err = p.Stream(ctx, req, nil)
	reqs := tr.Requests()
	if len(reqs) == 0 {
		return nil, fmt.Errorf("the SDK sent no request: %v", err)
	}
	return reqs[len(reqs)-1].Body, nil
}

// checkSeedText asserts the designs' exact texts (docs/) in the wire body (as JSON
// strings) and the Anthropic breakpoint limit.
func checkSeedText(t *testing.T, layout, provider, body string) {
	t.Helper()
	has := func(s string) {
		t.Helper()
		q, _ := json.Marshal(s)
		if !strings.Contains(body, strings.Trim(string(q), `"`)) {
			t.Errorf("body lacks the design's exact text %q", s)
		}
	}
	switch layout {
	case "kiro": // docs/kiro.md, "context message"
		for _, s := range []string{kiro.EntryBegin, kiro.EntryEnd, kiro.SkillsHeader, kiro.Ack, kiro.PromptPrefix} {
			has(s)
		}
		if n := strings.Count(body, "--- CONTEXT ENTRY BEGIN ---"); n != 6 {
			t.Errorf("%d context entries; want 6 (layers 1–6 all non-empty)", n)
		}
	case "panels": // docs/panels.md, rules 10–12
		for _, s := range []string{panels.Header, panels.TimestampPrefix, panels.FooterPrefix, panels.FooterAck, panels.ToolName} {
			has(s)
		}
		if provider == "anthropic" {
			has(panels.SeedPrefix)
			has(panels.SeedAck)
		} else if strings.Contains(body, "repeated for emphasis") {
			t.Error("seed re-injection outside Anthropic (docs/panels.md, rule 12: Anthropic only)")
		}
	case "tiered": // docs/tiered.md
		for _, s := range []string{tiered.FileTreeHeader, tiered.Ok, "Answer in English."} {
			has(s)
		}
	}
	n := strings.Count(body, `"cache_control"`)
	if provider != "anthropic" && n > 0 {
		t.Errorf("%d cache_control fields in a %s body", n, provider)
	}
	points := strings.Count(body, `"cachePoint"`)
	if provider != "bedrock" && points > 0 {
		t.Errorf("%d cachePoint blocks in a %s body", points, provider)
	}
	if provider == "bedrock" {
		n = points // Bedrock docs: a cachePoint block ends each cached prefix
	}
	if n > llm.MaxBreakpoints {
		t.Errorf("%d cache breakpoints; Anthropic allows %d", n, llm.MaxBreakpoints)
	}
	if layout == "tiered" && (provider == "anthropic" || provider == "bedrock") && n == 0 {
		t.Error("tiered sent no cache breakpoint")
	}
}

// TestRenderEveryRealAgent renders every real agent config in data/agents, run
// from its project root as kiro does, in every registered layout for every
// provider, twice: no errors, byte-identical output; and --explain lists
// every layer with a token count.
func TestRenderEveryRealAgent(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(shared.Path(t, "data/agents/projects"), "*", ".kiro", "agents", "*.json"))
	if len(files) < 9 {
		t.Fatalf("found %d real agent files; want ≥ 9", len(files))
	}
	_, golden := goldenProject(t)
	files = append(files, golden)
	quietStderr(t)
	for _, file := range files {
		proj := filepath.Dir(filepath.Dir(filepath.Dir(file)))
		for _, layout := range prompt.Names() {
			for _, prov := range wireProviders {
				f := renderFlags{provider: prov, layout: layout, format: "table", agentFile: file, now: goldenNow, tokens: "exact", dir: proj}
				var a, b bytes.Buffer
				if err := renderMain(context.Background(), &a, f, "summarise this project"); err != nil {
					t.Fatalf("%s %s %s: %v", file, layout, prov, err)
				}
				if err := renderMain(context.Background(), &b, f, "summarise this project"); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(a.Bytes(), b.Bytes()) {
					t.Errorf("%s %s %s: two renders differ", file, layout, prov)
				}
			}
			f := renderFlags{provider: "anthropic", layout: layout, format: "json", agentFile: file, now: goldenNow, tokens: "exact", dir: proj, explain: true}
			var out bytes.Buffer
			if err := renderMain(context.Background(), &out, f, "summarise this project"); err != nil {
				t.Fatal(err)
			}
			var bd struct {
				Layers []struct {
					Name, Role string
					Tokens     int
					Breakpoint bool
				}
				TotalTokens int    `json:"total_tokens"`
				Counter     string `json:"counter"`
			}
			if err := json.Unmarshal(out.Bytes(), &bd); err != nil {
				t.Fatalf("explain json: %v\n%s", err, out.String())
			}
			sum := 0
			for _, l := range bd.Layers {
				if l.Name == "" || l.Tokens <= 0 {
					t.Errorf("%s %s: layer %+v has no name or tokens", file, layout, l)
				}
				sum += l.Tokens
			}
			if sum != bd.TotalTokens || !strings.Contains(bd.Counter, "cl100k") {
				t.Errorf("%s %s: layers sum to %d, total %d, counter %q", file, layout, sum, bd.TotalTokens, bd.Counter)
			}
		}
	}
}

// TestRenderExplainRealAgent runs the binary: `render --explain` on a real
// agent config shows every kiro layer the config fills, with tokens.
func TestRenderExplainRealAgent(t *testing.T) {
	proj := shared.Path(t, "data/agents/projects/johnmbergman__kiro-agents")
	r := runCLI(t, proj, nil, "render", "--layout", "kiro", "--agent", ".kiro/agents/researcher.json", "--explain", "what is new?")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"tools", "context: resources", "context: agent prompt", "ack", "history", "TOTAL", "cl100k_base"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("explain output lacks %q:\n%s", want, r.stdout)
		}
	}
}

func lookupProvider(t *testing.T, name string) providers.Spec {
	t.Helper()
	spec, err := providers.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// quietStderr sends the config warnings loadAgent prints to a discarded pipe
// for the test's duration.
func quietStderr(t *testing.T) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	go io.Copy(io.Discard, r)
	t.Cleanup(func() { os.Stderr = old; w.Close() })
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return "line " + strconv.Itoa(i+1) + ":\n- " + x + "\n+ " + y
		}
	}
	return "(no line differs)"
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		copyFile(t, p, filepath.Join(dst, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The request-knob flags reach the wire body of every provider as its API
// names them; a bad value, or a knob the wire API cannot express, is a usage
// error (exit 2) naming the flag or field.
func TestRenderKnobFlags(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want []string // JSON fragments of the body
	}{
		{[]string{"--provider", "anthropic", "--temperature", "0.2", "--tool-choice", "tool:glob", "--thinking-budget", "2048", "--max-tokens", "4096"},
			[]string{`"temperature":0.2`, `"tool_choice":{"name":"glob","type":"tool"}`, `"thinking":{"budget_tokens":2048,"type":"enabled"}`, `"max_tokens":4096`}},
		{[]string{"--provider", "openai-chat", "--reasoning-effort", "high", "--tool-choice", "any", "--top-p", "0.5"},
			[]string{`"reasoning_effort":"high"`, `"tool_choice":"required"`, `"top_p":0.5`}},
		{[]string{"--provider", "openai-responses", "--reasoning-effort", "low", "--tool-choice", "none"},
			[]string{`"reasoning":{"effort":"low"}`, `"tool_choice":"none"`}},
		{[]string{"--provider", "gemini", "--thinking-budget", "1024", "--temperature", "1"},
			[]string{`"thinkingBudget":1024`, `"temperature":1`}},
		{[]string{"--provider", "bedrock", "--temperature", "0.7", "--tool-choice", "any"},
			[]string{`"temperature":0.7`, `"toolChoice":{"any":{}}`}},
	} {
		r := runCLI(t, dir, nil, append(append([]string{"render"}, c.args...), "hi")...)
		if r.code != 0 {
			t.Fatalf("render %v: exit %d: %s", c.args, r.code, r.stderr)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(r.stdout)); err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(compact.String(), w) {
				t.Errorf("render %v: body lacks %s:\n%s", c.args, w, compact.String())
			}
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--temperature", "hot"}, "--temperature"},
		{[]string{"--tool-choice", "maybe"}, "--tool-choice"},
		{[]string{"--reasoning-effort", "extreme"}, "--reasoning-effort"},
		{[]string{"--provider", "openai-chat", "--thinking-budget", "2048"}, "budget_tokens"},
	} {
		r := runCLI(t, dir, nil, append(append([]string{"render"}, c.args...), "hi")...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("render %v: exit %d, stderr %q; want exit 2 naming %s", c.args, r.code, r.stderr, c.want)
		}
	}
}
