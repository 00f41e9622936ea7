package agentfile_test

import (
	"github.com/strata-agent/strata/agentfile"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/internal/shared"
)

const multiAgentProject = "data/agents/projects/aws-samples__sample-kiro-cli-multiagent-development"

var multiAgents = []string{"coder", "docs", "leader", "ops", "reviewer", "security-reviewer"}

func agentNames(found []agentfile.Entry, scope string) []string {
	var names []string
	for _, a := range found {
		if a.Scope == scope {
			names = append(names, a.Name)
		}
	}
	return names
}

// The multi-agent project installed as a workspace's .kiro (its README's
// Quick Start) is found by name as kiro finds it; its agents resolve their
// steering and skills through the workspace, and their "file://agents/NAME.md"
// prompts, which kiro resolves against the agent file's folder, are missing
// with a warning that says where the file is. Pointed at the project folder
// itself, name resolution fails with an error that says how to install it.
func TestAgentsOfAKiroWorkspace(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	project := shared.Path(t, multiAgentProject)
	ws := shared.KiroWorkspace(t, project)
	if got := agentNames(agentfile.Find(ws), "workspace"); strings.Join(got, " ") != strings.Join(multiAgents, " ") {
		t.Fatalf("FindAgents: %q, want %q", got, multiAgents)
	}
	path, err := agentfile.Resolve(ws, "coder")
	if err != nil || path != filepath.Join(ws, ".kiro", "agents", "coder.json") {
		t.Fatalf("Resolve(coder) = %s, %v", path, err)
	}
	ag, err := agentfile.Load(path, "")
	if err != nil {
		t.Fatal(err)
	}
	c := ag.Context
	if c.System != "" || len(c.Files) != 10 || len(c.Skills) != 7 {
		t.Fatalf("system %.20q, %d files, %d skills", c.System, len(c.Files), len(c.Skills))
	}
	for _, f := range c.Files {
		want, err := os.ReadFile(filepath.Join(project, "steering", filepath.Base(f.Path)))
		if err != nil || !strings.HasPrefix(f.Path, ".kiro/steering/") || f.Content != string(want) {
			t.Errorf("file %s: %v", f.Path, err)
		}
	}
	if s := c.Skills[0]; s.Name != "agentcore-patterns" || s.Description != "" || s.Path != ".kiro/skills/agentcore-patterns/SKILL.md" {
		t.Errorf("skill without front matter: %+v", s)
	}
	if s := c.Skills[1]; s.Name != "aws-cli" || !strings.HasPrefix(s.Description, "AWS CLI best practices") {
		t.Errorf("skill: %+v", s)
	}
	var prompt string
	for _, w := range ag.Warnings {
		if w.Field == "/prompt" {
			prompt = w.File + ": " + w.Message
		}
	}
	if want := filepath.Join(ws, ".kiro", "agents", "agents", "coder.md") + ": prompt file not readable"; !strings.HasPrefix(prompt, want) ||
		!strings.HasSuffix(prompt, `the file exists at `+filepath.Join(ws, ".kiro", "agents", "coder.md")+`: write "file://coder.md" or an absolute path)`) {
		t.Errorf("prompt warning %q", prompt)
	}

	_, err = agentfile.Resolve(project, "coder")
	if err == nil || !strings.Contains(err.Error(), project+" holds 6 agent file(s) in agents/ but kiro reads only <workspace>/.kiro/agents") {
		t.Errorf("Resolve on the project folder: %v", err)
	}
	if h := agentfile.MisplacedHint(filepath.Join(ws, ".kiro")); h != filepath.Join(ws, ".kiro")+" is a .kiro folder: use its workspace "+ws+" as the directory" {
		t.Errorf("hint for a .kiro folder: %q", h)
	}
	if h := agentfile.MisplacedHint(ws); h != "" {
		t.Errorf("hint for a workspace: %q", h)
	}
}

// Installed globally as the project's README says ("Moving to Global
// Configuration": copy agents/ steering/ skills/ prompts/ settings/ to ~/.kiro
// and make the prompt paths absolute), every agent is found by name from any
// workspace and its prompt is the text of agents/NAME.md; global steering and
// the default ~/.kiro/skills path supply steering and skills, while the
// agents' workspace-relative resources match nothing, as in kiro.
func TestAgentsInstalledGlobally(t *testing.T) {
	project := shared.Path(t, multiAgentProject)
	home := t.TempDir()
	t.Setenv("HOME", home)
	kiro := filepath.Join(home, ".kiro")
	for _, d := range []string{"agents", "steering", "skills", "prompts", "settings"} {
		if err := os.CopyFS(filepath.Join(kiro, d), os.DirFS(filepath.Join(project, d))); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range multiAgents {
		file := filepath.Join(kiro, "agents", name+".json")
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel := `"file://agents/` + name + `.md"`
		if strings.Count(string(raw), rel) != 1 {
			t.Fatalf("%s: no %s prompt to make absolute", file, rel)
		}
		abs := `"file://` + filepath.ToSlash(filepath.Join(kiro, "agents", name+".md")) + `"`
		if err := os.WriteFile(file, []byte(strings.Replace(string(raw), rel, abs, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws := t.TempDir()
	if got := agentNames(agentfile.Find(ws), "global"); strings.Join(got, " ") != strings.Join(multiAgents, " ") {
		t.Fatalf("FindAgents: global %q, want %q", got, multiAgents)
	}
	for _, name := range multiAgents {
		path, err := agentfile.Resolve(ws, name)
		if err != nil {
			t.Fatal(err)
		}
		ag, err := agentfile.Load(path, ws)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(project, "agents", name+".md"))
		if err != nil || ag.Context.System != string(want) || ag.Config.PromptSource != filepath.Join(kiro, "agents", name+".md") {
			t.Errorf("%s: prompt %.40q from %s, want agents/%s.md (%v)", name, ag.Context.System, ag.Config.PromptSource, name, err)
		}
		if len(ag.Context.Files) != 10 || len(ag.Context.Skills) != 7 || len(ag.Resolved.Steering) != 10 {
			t.Errorf("%s: %d files, %d skills, %d steering", name, len(ag.Context.Files), len(ag.Context.Skills), len(ag.Resolved.Steering))
		}
		for _, f := range ag.Context.Files {
			if !strings.HasPrefix(f.Path, filepath.ToSlash(filepath.Join(kiro, "steering"))+"/") {
				t.Errorf("%s: file %s is not global steering", name, f.Path)
			}
		}
		matched := false
		for _, w := range ag.Warnings {
			matched = matched || w.Field == "/resources/0" && strings.Contains(w.Message, "matches no file")
		}
		if !matched {
			t.Errorf("%s: no warning for the workspace-relative steering resource: %v", name, ag.Warnings)
		}
	}
}
