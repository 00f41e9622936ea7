package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeTree writes files (slash paths relative to root) and returns root.
func writeTree(t *testing.T, root string, files map[string]string) string {
	t.Helper()
	for rel, body := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func skillMD(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n# " + name + "\n"
}

func TestResolve(t *testing.T) {
	home := writeTree(t, t.TempDir(), map[string]string{
		"notes.md":                               "home notes",
		".kiro/skills/global/SKILL.md":           skillMD("global", "user-wide skill"),
		".kiro/steering/personal.md":             "# personal",
		".kiro/steering/product.md":              "# global product (shadowed)",
		".kiro/settings/mcp.json":                `{"mcpServers":{"git":{"command":"global-git"},"home":{"command":"h"}}}`,
		".aws/amazonq/mcp.json":                  `{"mcpServers":{"legacy":{"url":"https://x/mcp","type":"http"}}}`,
		".kiro/prompts/unused.md":                "unused",
		".kiro/skills/nofm/SKILL.md":             "# no front matter",
		".kiro/skills/unclosed/SKILL.md":         "---\nname: unclosed\n",
		".kiro/skills/nodesc/SKILL.md":           "---\nname: nodesc\n---\nbody",
		".kiro/steering/broken-filematch.md":     "---\ninclusion: fileMatch\n---\nbody",
		".kiro/agents/ignored-global-agent.json": `{}`,
	})
	t.Setenv("HOME", home)
	root := writeTree(t, t.TempDir(), map[string]string{
		"README.md":                   "readme",
		"docs/b.md":                   "b",
		"docs/a.md":                   "a",
		"docs/deep/c.md":              "c",
		"docs/deep/x.txt":             "not md",
		"prompts/main.md":             "You are the main agent.",
		".kiro/agents/prompt.md":      "beside the agent",
		".kiro/skills/alpha/SKILL.md": skillMD("alpha", "first skill"),
		".kiro/skills/beta/SKILL.md":  skillMD("beta", "second skill"),
		".kiro/steering/product.md":   "# product",
		".kiro/steering/tech.md":      "---\ninclusion: always\n---\n# tech",
		".kiro/steering/ts.md":        "---\ninclusion: fileMatch\nfileMatchPattern: \"**/*.ts\"\n---\n# ts rules",
		".kiro/steering/manual.md":    "---\ninclusion: manual\n---\n# manual",
		".kiro/settings/mcp.json":     `{"mcpServers":{"git":{"command":"project-git"},"rg":{"command":"rg-mcp","disabled":true}}}`,
		".amazonq/mcp.json":           `{"mcpServers":{"q":{"command":"q-mcp"}}}`,
		"hooks/ok.sh":                 "#!/bin/sh\n",
		".kiro/agents/main.json": `{
  "name": "main",
  "prompt": "file://../../prompts/main.md",
  "resources": ["file://README.md", "file://docs/**/*.md", "file://README.md", "file://~/notes.md",
                "file://missing.md", "file://nothing/**/*.md", "skill://.kiro/skills/beta/SKILL.md",
                "skill://.kiro/skills/*/SKILL.md", "skill://absent/SKILL.md", "file://.kiro/steering/product.md",
                {"type": "knowledgeBase", "source": "file://./docs", "name": "Docs"}],
  "mcpServers": {"git": {"command": "agent-git"}},
  "includeMcpJson": true,
  "hooks": {"agentSpawn": [{"command": "hooks/ok.sh"}, {"command": "./hooks/missing.sh --flag"},
                           {"command": "echo hi | tee x"}, {"command": "definitely-not-a-program-xyz"}],
            "stop": [{"command": "true", "matcher": "fs_write"}], "onWhatever": [{"command": "true"}]}
}`,
	})
	a, err := LoadAgent(filepath.Join(root, ".kiro/agents/main.json"))
	if err != nil {
		t.Fatal(err)
	}
	if a.ProjectRoot != root || a.Prompt != "You are the main agent." || a.PromptSource != filepath.Join(root, "prompts/main.md") {
		t.Errorf("root %s prompt %q from %s", a.ProjectRoot, a.Prompt, a.PromptSource)
	}
	wantWarning(t, a.Warnings, filepath.Join(root, "missing.md"), "/resources/4", "resource file not found")
	wantWarning(t, a.Warnings, filepath.Join(root, "nothing/**/*.md"), "/resources/5", "matches no file")
	wantWarning(t, a.Warnings, filepath.Join(root, "absent/SKILL.md"), "/resources/8", "skill file not found")
	wantWarning(t, a.Warnings, filepath.Join(root, "hooks/missing.sh"), "/hooks/agentSpawn/1/command", "hook script not found")
	wantWarning(t, a.Warnings, a.Path, "/hooks/agentSpawn/3/command", `"definitely-not-a-program-xyz" not found on $PATH`)
	wantWarning(t, a.Warnings, a.Path, "/hooks/stop/0/matcher", "do not use matchers")
	wantWarning(t, a.Warnings, a.Path, "/hooks/onWhatever", "unknown hook event")
	for _, w := range a.Warnings {
		if strings.Contains(w.Field, "/hooks/agentSpawn/0") || strings.Contains(w.Field, "/hooks/agentSpawn/2") {
			t.Errorf("unexpected warning %v", w)
		}
	}

	r, err := Resolve(a, "")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range r.Files {
		files = append(files, f.Path+"="+f.Content)
	}
	notes := filepath.ToSlash(filepath.Join(home, "notes.md"))
	want := []string{"README.md=readme", "docs/a.md=a", "docs/b.md=b", "docs/deep/c.md=c", notes + "=home notes",
		".kiro/steering/product.md=# product"}
	if !reflect.DeepEqual(files, want) {
		t.Errorf("files\n got %q\nwant %q", files, want)
	}
	hints := r.SkillHints()
	wantHints := []string{
		"beta: second skill (file: .kiro/skills/beta/SKILL.md)",
		"alpha: first skill (file: .kiro/skills/alpha/SKILL.md)",
		"global: user-wide skill (file: " + filepath.ToSlash(filepath.Join(home, ".kiro/skills/global/SKILL.md")) + ")",
		"nodesc:  (file: " + filepath.ToSlash(filepath.Join(home, ".kiro/skills/nodesc/SKILL.md")) + ")",
		"nofm:  (file: " + filepath.ToSlash(filepath.Join(home, ".kiro/skills/nofm/SKILL.md")) + ")",
	}
	if !reflect.DeepEqual(hints, wantHints) {
		t.Errorf("hints\n got %q\nwant %q", hints, wantHints)
	}
	wantWarning(t, r.Warnings, filepath.Join(home, ".kiro/skills/nofm/SKILL.md"), "", `no YAML front matter, so no name or description`)
	wantWarning(t, r.Warnings, filepath.Join(home, ".kiro/skills/unclosed/SKILL.md"), "", "skill skipped: ")
	wantWarning(t, r.Warnings, filepath.Join(home, ".kiro/skills/nodesc/SKILL.md"), "", "no description")
	wantWarning(t, r.Warnings, filepath.Join(home, ".kiro/steering/broken-filematch.md"), "", "without fileMatchPattern")

	var steer, cond []string
	for _, s := range r.Steering {
		steer = append(steer, s.Name+"="+strings.TrimSpace(s.Body))
	}
	for _, s := range r.ConditionalSteering {
		cond = append(cond, s.Name+":"+s.Inclusion)
	}
	// product.md is a resource already; the global product.md is shadowed.
	if want := []string{"tech=# tech", "personal=# personal"}; !reflect.DeepEqual(steer, want) {
		t.Errorf("steering %q, want %q", steer, want)
	}
	if want := []string{"manual:manual", "ts:fileMatch"}; !reflect.DeepEqual(cond, want) {
		t.Errorf("conditional steering %q, want %q", cond, want)
	}
	if len(r.KnowledgeBases) != 1 || r.KnowledgeBases[0].Scheme() != "knowledgeBase" {
		t.Errorf("knowledge bases %+v", r.KnowledgeBases)
	}

	var servers []string
	for _, s := range r.MCPServers {
		rel, _ := filepath.Rel(filepath.Dir(filepath.Dir(s.Source)), s.Source)
		servers = append(servers, s.Name+"="+s.Server.Command+s.Server.URL+"<"+filepath.ToSlash(rel))
	}
	wantServers := []string{"git=agent-git<agents/main.json", "home=h<settings/mcp.json",
		"legacy=https://x/mcp<amazonq/mcp.json", "q=q-mcp<.amazonq/mcp.json", "rg=rg-mcp<settings/mcp.json"}
	if !reflect.DeepEqual(servers, wantServers) {
		t.Errorf("servers\n got %q\nwant %q", servers, wantServers)
	}
	if !r.MCPServers[4].Server.Disabled {
		t.Error("disabled server must keep Disabled")
	}

	// Without includeMcpJson only the agent's own servers count; another root
	// changes what relative paths mean.
	off := false
	a.IncludeMcpJson = &off
	r2, err := ResolveWith(a, filepath.Join(root, "docs"), ResolveOptions{Home: t.TempDir(), NoDefaultSkills: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r2.MCPServers) != 1 || r2.MCPServers[0].Name != "git" {
		t.Errorf("servers without includeMcpJson: %+v", r2.MCPServers)
	}
	if len(r2.Skills) != 0 || len(r2.Files) != 0 {
		t.Errorf("under docs/: files %+v skills %+v", r2.Files, r2.Skills)
	}
	if _, err := Resolve(nil, root); err == nil {
		t.Error("nil agent must be an error")
	}
}

func TestResolveBadMCPJSON(t *testing.T) {
	root := writeTree(t, t.TempDir(), map[string]string{
		".kiro/settings/mcp.json": `{"mcpServers": [1]}`,
		".kiro/agents/a.json":     `{"useLegacyMcpJson": true}`,
	})
	a, err := LoadAgent(filepath.Join(root, ".kiro/agents/a.json"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "a" || !a.MCPIncluded() {
		t.Errorf("name %q included %v", a.Name, a.MCPIncluded())
	}
	_, err = ResolveWith(a, "", ResolveOptions{Home: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(root, ".kiro/settings/mcp.json")) {
		t.Errorf("want an error naming mcp.json, got %v", err)
	}
}

func TestPromptReferences(t *testing.T) {
	home := writeTree(t, t.TempDir(), map[string]string{".kiro/prompts/shared.md": "global prompt", "abs.md": "tilde prompt"})
	t.Setenv("HOME", home)
	root := writeTree(t, t.TempDir(), map[string]string{
		".kiro/prompts/local.md":   "local prompt",
		".kiro/prompts/shared.md":  "project wins",
		".amazonq/cli-agents/p.md": "relative to agent dir",
	})
	cases := []struct{ prompt, want, warn string }{
		{"@local", "local prompt", ""},
		{"@shared", "project wins", ""},
		{"@nobody", "@nobody", "names no prompt file"},
		{"file://./p.md", "relative to agent dir", ""},
		{"file://~/abs.md", "tilde prompt", ""},
		{"file://" + filepath.Join(home, "abs.md"), "tilde prompt", ""},
		{"file://gone.md", "", "not readable"},
		{"Be brief. @mention stays", "Be brief. @mention stays", ""},
	}
	for _, c := range cases {
		p := filepath.Join(root, ".amazonq/cli-agents/p.json")
		if err := os.WriteFile(p, []byte(`{"prompt":`+quote(c.prompt)+`}`), 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := LoadAgent(p)
		if err != nil {
			t.Fatal(err)
		}
		if a.Prompt != c.want || a.PromptRef != c.prompt || a.ProjectRoot != root {
			t.Errorf("%q: prompt %q (root %s)", c.prompt, a.Prompt, a.ProjectRoot)
		}
		if c.warn != "" {
			found := false
			for _, w := range a.Warnings {
				found = found || (w.Field == "/prompt" && strings.Contains(w.Message, c.warn))
			}
			if !found {
				t.Errorf("%q: no warning %q in %v", c.prompt, c.warn, a.Warnings)
			}
		}
	}
}

func quote(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}
