package config

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/strata-agent/strata/internal/shared"
)

// realFiles walks dir and returns the files keep selects, sorted.
func realFiles(t *testing.T, dir string, keep func(path string) bool) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && keep(filepath.ToSlash(p)) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	sort.Strings(out)
	return out
}

func isAgentFile(p string) bool {
	return strings.HasSuffix(p, ".json") &&
		(strings.Contains(p, "/.kiro/agents/") || strings.Contains(p, "/.amazonq/cli-agents/"))
}

// realAgentFiles returns every real agent file as kiro finds it, sorted:
// those stored inside a .kiro/ or .amazonq/ folder where they are, and those
// of projects stored without their .kiro prefix through a workspace whose
// .kiro links to the project (shared.KiroWorkspace).
func realAgentFiles(t *testing.T) []string {
	t.Helper()
	files := realFiles(t, shared.Path(t, "data"), isAgentFile)
	for _, p := range shared.AgentProjects(t) {
		if ws := shared.KiroWorkspace(t, p); ws != p {
			found, _ := filepath.Glob(filepath.Join(ws, ".kiro", "agents", "*.json"))
			files = append(files, found...)
		}
	}
	return files
}

// isSteeringFile selects the real steering files: every Markdown file of
// data/steering but the folders' INDEX.md, SOURCE.md and the one file
// data/steering/INDEX.md calls "not a steering file" (METADATA_REFERENCE.md),
// and the .kiro/steering/ or steering/ files of the agent projects.
func isSteeringFile(p string) bool {
	if !strings.HasSuffix(p, ".md") {
		return false
	}
	switch path.Base(p) {
	case "INDEX.md", "SOURCE.md", "README.md", "METADATA_REFERENCE.md":
		return false
	}
	return strings.Contains(p, "/data/steering/") || strings.Contains(p, "/.kiro/steering/") ||
		strings.Contains(p, "/data/agents/projects/") && path.Base(path.Dir(p)) == "steering"
}

func TestEmbeddedSchemaEqualsShared(t *testing.T) {
	want, err := os.ReadFile(shared.Path(t, "data/agents/amazon-q-developer-cli/schemas/agent-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(AgentSchemaV1, want) {
		t.Fatal("config/schema/agent-v1.json differs from ../shared/data/agents/amazon-q-developer-cli/schemas/agent-v1.json")
	}
}

func TestRealAgents(t *testing.T) {
	files := realAgentFiles(t)
	if len(files) < 15 {
		t.Fatalf("found %d agent files, want the 15 real ones at least", len(files))
	}
	for _, f := range files {
		rel, err := filepath.Rel(shared.Path(t, "data"), f)
		if err != nil || strings.HasPrefix(rel, "..") { // in a temporary workspace
			rel = filepath.Join("workspace", filepath.Base(f))
		}
		t.Run(rel, func(t *testing.T) {
			a, err := LoadAgent(f)
			if err != nil {
				t.Fatalf("LoadAgent: %v", err)
			}
			if a.Name == "" || a.Path != f || a.ProjectRoot == "" {
				t.Fatalf("name %q path %q root %q", a.Name, a.Path, a.ProjectRoot)
			}
			if filepath.Base(filepath.Dir(filepath.Dir(f))) != ".kiro" || a.ProjectRoot != filepath.Dir(filepath.Dir(filepath.Dir(f))) {
				t.Errorf("project root %s for %s", a.ProjectRoot, f)
			}
			for _, w := range a.Warnings {
				if w.File == "" || w.Message == "" {
					t.Errorf("incomplete warning %+v", w)
				}
			}
			if a.PromptRef != "" && a.Prompt == "" && len(a.Warnings) == 0 {
				t.Errorf("prompt %q resolved to nothing without a warning", a.PromptRef)
			}
			for ev, hooks := range a.Hooks {
				for i, h := range hooks {
					if h.Command == "" || h.Timeout() <= 0 {
						t.Errorf("hook %s/%d: %+v", ev, i, h)
					}
				}
			}
			r, err := Resolve(a, "")
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			for _, s := range r.MCPServers {
				if s.Server.Command == "" && s.Server.URL == "" {
					t.Errorf("server %s has neither command nor url", s.Name)
				}
			}
			checkRoundTrip(t, f, a)
		})
	}
}

// checkRoundTrip encodes a loaded agent and compares it with the file, with
// empty members (e.g. "env": {}) and explicit false members pruned from the
// file: false is the default of every boolean key strata keeps as a plain
// bool (useLegacyMcpJson, an MCP server's disabled; agent-v1.json), so
// "disabled": false and no "disabled" mean the same.
func checkRoundTrip(t *testing.T, file string, a *Agent) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(a)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if want = prune(want); !reflect.DeepEqual(want, got) {
		t.Errorf("round trip differs:\nfile %v\ngot  %s", want, out)
	}
}

func prune(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			e = prune(e)
			if m, ok := e.(map[string]any); ok && len(m) == 0 {
				delete(x, k)
				continue
			}
			if s, ok := e.([]any); ok && len(s) == 0 {
				delete(x, k)
				continue
			}
			if b, ok := e.(bool); ok && !b && k != "includeMcpJson" {
				delete(x, k)
				continue
			}
			x[k] = e
		}
	case []any:
		for i := range x {
			x[i] = prune(x[i])
		}
	}
	return v
}

// TestRealAgentDetails pins what the real projects must yield.
func TestRealAgentDetails(t *testing.T) {
	projects := shared.Path(t, "data/agents/projects")
	omc := filepath.Join(projects, "KaimingWan__oh-my-claude-code")

	a, err := LoadAgent(filepath.Join(omc, ".kiro/agents/default.json"))
	if err != nil {
		t.Fatal(err)
	}
	wantWarning(t, a.Warnings, filepath.Join(omc, "AGENTS.md"), "/resources/0", "not found")
	wantWarning(t, a.Warnings, filepath.Join(omc, "skills/planning/SKILL.md"), "/resources/2", "not found")
	wantWarning(t, a.Warnings, filepath.Join(omc, "hooks/security/block-dangerous.sh"), "/hooks/preToolUse/0/command", "not found")
	wantWarning(t, a.Warnings, a.Path, "/allowedTools/0", `"*" is not supported`)
	if got := len(a.Hooks[HookPreToolUse]); got != 8 {
		t.Errorf("preToolUse hooks: %d, want 8", got)
	}
	if h := a.Hooks[HookPreToolUse][0]; h.Matcher != "execute_bash" || h.Timeout().Milliseconds() != 30000 {
		t.Errorf("preToolUse[0] = %+v", h)
	}
	sh := a.ToolSettings("shell")
	if !sh.AutoAllowReadonly || len(sh.DeniedCommands) != 18 || sh.Keys[0] != "shell" {
		t.Errorf("shell settings %+v", sh)
	}
	if same := a.ToolSettings("execute_bash"); !reflect.DeepEqual(same, sh) {
		t.Errorf("execute_bash settings differ from shell's")
	}
	sub := a.ToolSettings("use_subagent")
	if !reflect.DeepEqual(sub.TrustedAgents, []string{"researcher", "reviewer", "executor"}) {
		t.Errorf("subagent settings %+v", sub)
	}
	if !a.ToolAllowed("@ripgrep/search") || !a.ToolAllowed("shell") {
		t.Error(`tools ["*"] must allow everything`)
	}
	if a.ToolAutoApproved("execute_bash") || !a.ToolAutoApproved("read") {
		t.Error(`allowedTools ["*"] must approve nothing beyond default-trusted fs_read`)
	}

	res, err := LoadAgent(filepath.Join(omc, ".kiro/agents/researcher.json"))
	if err != nil {
		t.Fatal(err)
	}
	wantWarning(t, res.Warnings, filepath.Join(omc, "agents/researcher-prompt.md"), "/prompt", "not readable")
	if !res.MCPIncluded() || res.Prompt != "" {
		t.Errorf("includeMcpJson %v prompt %q", res.MCPIncluded(), res.Prompt)
	}
	r, err := ResolveWith(res, "", ResolveOptions{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range r.MCPServers {
		names = append(names, s.Name+"<"+filepath.Base(s.Source))
	}
	if want := []string{"fetch<researcher.json", "o<mcp.json", "ripgrep<mcp.json"}; !reflect.DeepEqual(names, want) {
		t.Errorf("servers %v, want %v", names, want)
	}
	if !res.ToolAllowed("@fetch/fetch") || !res.ToolAllowed("fs_read") || res.ToolAllowed("fs_write") {
		t.Error("researcher tools")
	}
	if !res.HookMatches(res.Hooks[HookPreToolUse][0], "shell") || res.HookMatches(res.Hooks[HookPreToolUse][0], "read") {
		t.Error("matcher execute_bash must cover shell only")
	}

	jb := filepath.Join(projects, "johnmbergman__kiro-agents")
	rs, err := LoadAgent(filepath.Join(jb, ".kiro/agents/researcher.json"))
	if err != nil {
		t.Fatal(err)
	}
	if rs.PromptRef != "@researcher" || rs.PromptSource != filepath.Join(jb, ".kiro/prompts/researcher.md") ||
		!strings.HasPrefix(rs.Prompt, "You are a research specialist") {
		t.Errorf("@researcher prompt: source %q prompt %.40q", rs.PromptSource, rs.Prompt)
	}
	if rs.WelcomeMessage == "" || !rs.ToolAutoApproved("web_fetch") || rs.ToolAutoApproved("fs_write") || !rs.ToolAllowed("write") {
		t.Errorf("researcher: welcome %q / allowedTools", rs.WelcomeMessage)
	}
	rr, err := ResolveWith(rs, "", ResolveOptions{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Steering) != 1 || rr.Steering[0].Name != "update-readme" || !strings.Contains(rr.Steering[0].Body, "README.md") {
		t.Errorf("steering %+v", rr.Steering)
	}

	tk := filepath.Join(projects, "takemi-ohama__ai-plugins")
	d, err := LoadAgent(filepath.Join(tk, ".kiro/agents/default.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Hooks[HookStop][0].Timeout().Milliseconds(); got != 70000 {
		t.Errorf("stop timeout %d ms, want 70000", got)
	}
	wantWarning(t, d.Warnings, filepath.Join(tk, ".kiro/skills/**/SKILL.md"), "/resources/3", "matches no file")
	wantWarning(t, d.Warnings, filepath.Join(tk, "plugins/ndf/scripts/slack-notify.js"), "/hooks/stop/0/command", "not found")
	if d.ToolAllowed("fs_read") {
		t.Error("an agent without tools has none (agent-v1.json tools default [])")
	}
}

func wantWarning(t *testing.T, ws []Warning, file, field, msg string) {
	t.Helper()
	for _, w := range ws {
		if w.File == file && w.Field == field && strings.Contains(w.Message, msg) {
			return
		}
	}
	t.Errorf("no warning %s %s %q among:\n%v", file, field, msg, ws)
}

func TestRealMCPConfigs(t *testing.T) {
	files := realFiles(t, shared.Path(t, "data"), func(p string) bool { return filepath.Base(p) == "mcp.json" })
	if len(files) == 0 {
		t.Fatal("no mcp.json found")
	}
	for _, f := range files {
		c, err := LoadMCPConfig(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(c.Servers) == 0 {
			t.Errorf("%s: no servers", f)
		}
		for name, s := range c.Servers {
			if s.Command == "" && s.URL == "" || s.Transport() != "stdio" && s.URL == "" {
				t.Errorf("%s: server %s: %+v", f, name, s)
			}
		}
	}
}

// Every real SKILL.md loads. One with front matter has a name equal to its
// folder (as the Agent Skills spec requires), a description and the text after
// the front matter as body; one without (data/skills/INDEX.md names the only
// one) is kept with its folder name, no description and the whole file as
// body, as kiro-cli keeps it.
func TestRealSkills(t *testing.T) {
	data := shared.Path(t, "data")
	files := realFiles(t, data, func(p string) bool { return filepath.Base(p) == "SKILL.md" })
	if len(files) < 19 {
		t.Fatalf("found %d SKILL.md, want the 19 real ones at least", len(files))
	}
	var bare []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s, err := LoadSkill(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if s.Name != filepath.Base(filepath.Dir(f)) || strings.TrimSpace(s.Body) == "" || !strings.HasSuffix(string(raw), s.Body) {
			t.Errorf("%s: name %q body %d of %d bytes", f, s.Name, len(s.Body), len(raw))
		}
		if s.FrontMatter != bytes.HasPrefix(raw, []byte("---")) {
			t.Errorf("%s: FrontMatter %v", f, s.FrontMatter)
		}
		if !s.FrontMatter {
			rel, _ := filepath.Rel(data, f)
			bare = append(bare, filepath.ToSlash(rel))
			if s.Description != "" || s.Body != string(raw) || len(s.Meta) != 0 {
				t.Errorf("%s without front matter: description %q meta %v body %d bytes", f, s.Description, s.Meta, len(s.Body))
			}
		} else if s.Description == "" || strings.HasPrefix(s.Body, "---") {
			t.Errorf("%s: description %.30q body starts %.10q", f, s.Description, s.Body)
		}
		hint := SkillHint(*s)
		if !strings.HasPrefix(hint, s.Name+": "+s.Description) || !strings.HasSuffix(hint, " (file: "+f+")") {
			t.Errorf("hint %q", hint)
		}
	}
	want := []string{"agents/projects/aws-samples__sample-kiro-cli-multiagent-development/skills/agentcore-patterns/SKILL.md"}
	if !reflect.DeepEqual(bare, want) {
		t.Errorf("skills without front matter %q, want %q (data/skills/INDEX.md)", bare, want)
	}
}

var inclusionRE = regexp.MustCompile(`(?m)^inclusion:\s*["']?([A-Za-z]+)`)

// Every real steering file loads as kiro reads it: the inclusion its front
// matter names ("always" without one), the body after the front matter byte
// for byte (valid UTF-8, whatever its language or first heading), the name of
// the file; and the real files exercise all three inclusion modes.
func TestRealSteering(t *testing.T) {
	files := realFiles(t, shared.Path(t, "data"), isSteeringFile)
	if len(files) < 26 {
		t.Fatalf("found %d steering files, want the 26 real ones at least", len(files))
	}
	modes := map[string]int{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(strings.TrimPrefix(string(raw), "\ufeff"), "\r\n", "\n")
		s, err := LoadSteering(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if strings.TrimSpace(s.Body) == "" || !utf8.ValidString(s.Body) || !strings.HasSuffix(text, s.Body) {
			t.Errorf("%s: body %d bytes is not the end of the file", f, len(s.Body))
			continue
		}
		want := InclusionAlways
		if head := strings.TrimSuffix(text, s.Body); head != "" {
			if !strings.HasPrefix(head, "---\n") || !strings.HasSuffix(head, "---\n") {
				t.Errorf("%s: front matter %q is not all that precedes the body", f, head)
			}
			if m := inclusionRE.FindStringSubmatch(head); m != nil {
				want = m[1]
			}
		}
		modes[s.Inclusion]++
		if s.Inclusion != want || s.Name != strings.TrimSuffix(filepath.Base(f), ".md") {
			t.Errorf("%s: inclusion %q (want %q) name %q", f, s.Inclusion, want, s.Name)
		}
		switch s.Inclusion {
		case InclusionAlways:
			if !s.Always() || !s.Matches("anything.go") {
				t.Errorf("%s: always-included file does not apply everywhere", f)
			}
		case InclusionFileMatch:
			if s.Always() || len(s.FileMatchPatterns) == 0 {
				t.Errorf("%s: fileMatch without patterns %+v", f, s.FileMatchPatterns)
			}
		default:
			if s.Always() || s.Matches("anything.go") {
				t.Errorf("%s: %s file applies automatically", f, s.Inclusion)
			}
		}
		if filepath.Base(f) == "tasks-md-structure.md" && (!s.Matches(".kiro/specs/login/tasks.md") || s.Matches("tasks.go")) {
			t.Errorf("%s: fileMatch %q", f, s.FileMatchPatterns)
		}
	}
	if modes[InclusionAlways] == 0 || modes[InclusionFileMatch] == 0 || modes[InclusionManual] == 0 {
		t.Errorf("inclusion modes %v: want every mode among the real files", modes)
	}
}
