package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/strata-agent/strata/internal/shared"
)

// multiAgentProject is the stored project whose repository is itself a .kiro
// folder (data/agents/INDEX.md).
const multiAgentProject = "data/agents/projects/aws-samples__sample-kiro-cli-multiagent-development"

// The six agents of the multi-agent project, installed as its README says
// (the repository cloned as <project>/.kiro), load and resolve as kiro reads
// them: every agent with its model, the steering files through their
// file://.kiro/steering resource, the seven skills through
// skill://.kiro/skills/**/SKILL.md (the one without front matter kept, with a
// warning), MCP servers over HTTP and stdio, hooks with matchers, subagent
// settings; the "file://agents/NAME.md" prompts, resolved against the agent
// file's folder as kiro does, are missing and the warning says where the file
// is.
func TestRealMultiAgentProject(t *testing.T) {
	project := shared.Path(t, multiAgentProject)
	ws := shared.KiroWorkspace(t, project)
	home := t.TempDir()
	models := map[string]string{"leader": "claude-opus-4.6", "coder": "claude-sonnet-4.6", "ops": "claude-sonnet-4.6",
		"reviewer": "claude-opus-4.6", "security-reviewer": "claude-opus-4.6", "docs": "claude-haiku-4.5"}
	files, _ := filepath.Glob(filepath.Join(ws, ".kiro", "agents", "*.json"))
	if len(files) != len(models) {
		t.Fatalf("%d agent files in %s/.kiro/agents, want %d", len(files), ws, len(models))
	}
	steering, _ := filepath.Glob(filepath.Join(project, "steering", "*.md"))
	sort.Strings(steering)
	if len(steering) != 10 {
		t.Fatalf("%d steering files, want 10", len(steering))
	}
	for _, f := range files {
		a, err := LoadAgent(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		if a.Name != name || a.Model != models[name] || a.ProjectRoot != ws {
			t.Errorf("%s: name %q model %q root %s", f, a.Name, a.Model, a.ProjectRoot)
		}
		missing := filepath.Join(ws, ".kiro", "agents", "agents", name+".md")
		if a.PromptRef != "file://agents/"+name+".md" || a.Prompt != "" {
			t.Errorf("%s: prompt %q resolved to %.30q", name, a.PromptRef, a.Prompt)
		}
		wantWarning(t, a.Warnings, missing, "/prompt", "the file exists at "+filepath.Join(ws, ".kiro", "agents", name+".md")+
			`: write "file://`+name+`.md"`)
		wantWarning(t, a.Warnings, filepath.Join(ws, ".kiro/hooks/validate-environment.sh"), "/hooks/agentSpawn/0/command", "hook script not found")

		r, err := ResolveWith(a, "", ResolveOptions{Home: home})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Files) != len(steering) {
			t.Fatalf("%s: %d resource files, want the %d steering files", name, len(r.Files), len(steering))
		}
		for i, rf := range r.Files {
			want, _ := os.ReadFile(steering[i])
			if rf.Path != ".kiro/steering/"+filepath.Base(steering[i]) || rf.Content != string(want) {
				t.Errorf("%s: file %d %s is not %s", name, i, rf.Path, steering[i])
			}
		}
		if len(r.Steering)+len(r.ConditionalSteering) != 0 {
			t.Errorf("%s: steering files listed twice (resources and steering)", name)
		}
		hints := r.SkillHints()
		wantHints := []string{
			"agentcore-patterns:  (file: .kiro/skills/agentcore-patterns/SKILL.md)",
			"aws-cli: AWS CLI best practices",
			"cloudwatch-dashboards: ", "docker-build: ", "documentation: ", "git-workflow: ", "shell-scripting: ",
		}
		if len(hints) != len(wantHints) {
			t.Fatalf("%s: skill hints %q", name, hints)
		}
		for i, h := range hints {
			if !strings.HasPrefix(h, wantHints[i]) || !strings.HasSuffix(h, " (file: .kiro/skills/"+r.Skills[i].Name+"/SKILL.md)") {
				t.Errorf("%s: hint %d %q, want it to start %q", name, i, h, wantHints[i])
			}
		}
		wantWarning(t, r.Warnings, filepath.Join(ws, ".kiro/skills/agentcore-patterns/SKILL.md"), "/resources/1",
			`no YAML front matter, so no name or description`)
		for _, w := range r.Warnings {
			if strings.Contains(w.Message, "skipped") || strings.Contains(w.Message, "has no description") {
				t.Errorf("%s: %v", name, w)
			}
		}
	}
}

// The leader and coder of the multi-agent project keep what the schema does
// not name (hook descriptions, autoApprove) and what kiro-cli's newer format
// adds (HTTP servers with disabled, stop hooks, subagent settings), and their
// tools, matchers and servers mean what kiro makes of them.
func TestRealMultiAgentDetails(t *testing.T) {
	ws := shared.KiroWorkspace(t, shared.Path(t, multiAgentProject))
	load := func(name string) *Agent {
		t.Helper()
		a, err := LoadAgent(filepath.Join(ws, ".kiro", "agents", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	leader := load("leader")
	sub := leader.ToolSettings("subagent")
	team := []string{"coder", "reviewer", "security-reviewer", "ops", "docs"}
	if !reflect.DeepEqual(sub.AvailableAgents, team) || !reflect.DeepEqual(sub.TrustedAgents, team) {
		t.Errorf("leader subagent settings %+v", sub)
	}
	if same := leader.ToolSettings("use_subagent"); !reflect.DeepEqual(same.AvailableAgents, team) {
		t.Errorf("use_subagent settings differ from subagent's: %+v", same)
	}

	coder := load("coder")
	if len(coder.Hooks[HookPreToolUse]) != 4 || len(coder.Hooks[HookStop]) != 1 || len(coder.Hooks[HookPostToolUse]) != 0 {
		t.Errorf("coder hooks %v", coder.Hooks)
	}
	pre := coder.Hooks[HookPreToolUse]
	if !coder.HookMatches(pre[0], "write") || coder.HookMatches(pre[0], "shell") ||
		!coder.HookMatches(pre[3], "shell") || coder.HookMatches(pre[3], "fs_write") {
		t.Errorf("matchers fs_write / execute_bash: %q %q", pre[0].Matcher, pre[3].Matcher)
	}
	var desc string
	if err := json.Unmarshal(pre[0].Extra["description"], &desc); err != nil || !strings.HasPrefix(desc, "Block writes to dependency files") {
		t.Errorf("hook description %q (%v)", desc, err)
	}
	if !coder.ToolAutoApproved("fs_write") || !coder.ToolAutoApproved("@context7/resolve-library-id") ||
		coder.ToolAutoApproved("@deepwiki/ask_question") || !coder.ToolAllowed("@deepwiki/ask_question") {
		t.Error(`allowedTools "@builtin", "@context7" approve built-ins and that server only; tools ["*"] allow all`)
	}
	srv := coder.MCPServers
	if h := srv["aws-knowledge-mcp-server"]; h.Transport() != "http" || h.URL != "https://knowledge-mcp.global.api.aws" || h.Disabled {
		t.Errorf("HTTP server %+v", h)
	}
	if s := srv["awslabs.aws-iac-mcp-server"]; s.Transport() != "stdio" || s.Command != "uvx" ||
		s.Env["FASTMCP_LOG_LEVEL"] != "ERROR" || s.TimeoutMS == nil || *s.TimeoutMS != 20000 {
		t.Errorf("stdio server %+v", s)
	}
	if c := srv["context7"]; !reflect.DeepEqual(c.AutoApprove, []string{"*"}) {
		t.Errorf("context7 autoApprove %v", c.AutoApprove)
	}
}

// The same six agents loaded in place, from the repository's own agents/
// folder (not installed as a .kiro folder): the folder is recognised as a
// kiro configuration folder (agents/ beside steering/, skills/, settings/,
// prompts/), so the ".kiro/…" resources resolve against it and each agent
// gets the steering files and skills it gets once installed. Before, the
// project root was agents/ and both globs matched nothing. The prompt stays
// missing, as kiro resolves it (against the agent file's folder), and the
// warning names the file, the field and the fix.
func TestRealMultiAgentProjectInPlace(t *testing.T) {
	project := shared.Path(t, multiAgentProject)
	ws := shared.KiroWorkspace(t, project)
	home := t.TempDir()
	files, _ := filepath.Glob(filepath.Join(project, "agents", "*.json"))
	if len(files) != 6 {
		t.Fatalf("%d agent files in %s/agents, want 6", len(files), project)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		a, err := LoadAgent(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if a.ProjectRoot != project || a.ConfigDir != project {
			t.Errorf("%s: project root %s, config dir %q; want both %s", name, a.ProjectRoot, a.ConfigDir, project)
		}
		for _, w := range a.Warnings {
			if strings.HasPrefix(w.Field, "/resources") && !strings.Contains(w.Message, "front matter") {
				t.Errorf("%s: resource warning %s", name, w)
			}
		}
		wantWarning(t, a.Warnings, filepath.Join(project, "agents", "agents", name+".md"), "/prompt",
			"the file exists at "+filepath.Join(project, "agents", name+".md")+`: write "file://`+name+`.md"`)
		r, err := ResolveWith(a, "", ResolveOptions{Home: home})
		if err != nil {
			t.Fatal(err)
		}
		installed, err := LoadAgent(filepath.Join(ws, ".kiro", "agents", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		ri, err := ResolveWith(installed, "", ResolveOptions{Home: home})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Files) != 10 || len(r.Files) != len(ri.Files) {
			t.Fatalf("%s in place: %d resource files, installed %d, want 10", name, len(r.Files), len(ri.Files))
		}
		for i := range r.Files {
			if r.Files[i].Content != ri.Files[i].Content || filepath.Base(r.Files[i].Path) != filepath.Base(ri.Files[i].Path) {
				t.Errorf("%s: file %d in place %s, installed %s", name, i, r.Files[i].Path, ri.Files[i].Path)
			}
		}
		var got, want []string
		for _, s := range r.Skills {
			got = append(got, s.Name+": "+s.Description)
		}
		for _, s := range ri.Skills {
			want = append(want, s.Name+": "+s.Description)
		}
		if len(got) != 7 || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: skills in place %q, installed %q (want 7)", name, got, want)
		}
	}
}

// A folder that only holds agents/ (no steering, skills, settings, prompts
// or hooks beside it) is not taken for a configuration folder: its agents
// resolve against their own folder, as before.
func TestAgentsFolderWithoutConfigFolders(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "agents", "a.json")
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, []byte(`{"name":"a","resources":["file://.kiro/steering/*.md"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := LoadAgent(f)
	if err != nil {
		t.Fatal(err)
	}
	if a.ConfigDir != "" || a.ProjectRoot != filepath.Dir(f) {
		t.Errorf("config dir %q, root %s; want none and %s", a.ConfigDir, a.ProjectRoot, filepath.Dir(f))
	}
	wantWarning(t, a.Warnings, filepath.Join(dir, "agents", ".kiro", "steering", "*.md"), "/resources/0", "matches no file")
}
