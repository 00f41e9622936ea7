package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/internal/shared"
)

// `agents list` loads every real project's agents as kiro finds them in
// <workspace>/.kiro/agents (a project stored without its .kiro prefix is
// installed as a workspace's .kiro, as its README says) without error, each
// warning once; pointed at such a project folder itself it lists nothing and
// says why; an invalid agent file makes it exit 1 with the error naming the
// field.
func TestAgentsList(t *testing.T) {
	home := t.TempDir()
	projects := shared.AgentProjects(t)
	if len(projects) < 4 {
		t.Fatalf("%d projects", len(projects))
	}
	for _, p := range projects {
		ws := shared.KiroWorkspace(t, p)
		files, _ := filepath.Glob(filepath.Join(ws, ".kiro/agents/*.json"))
		r := runCLI(t, t.TempDir(), []string{"HOME=" + home}, "agents", "list", "--dir", ws, "--format", "json")
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s %s", p, r.code, r.stdout, r.stderr)
		}
		var infos []agentInfo
		if err := json.Unmarshal([]byte(r.stdout), &infos); err != nil {
			t.Fatal(err)
		}
		if len(infos) != len(files) || len(files) == 0 {
			t.Errorf("%s: %d agents listed, %d files", p, len(infos), len(files))
		}
		for _, a := range infos {
			seen := map[string]bool{}
			for _, w := range a.Warnings {
				if seen[w] {
					t.Errorf("%s: warning twice: %s", a.Name, w)
				}
				seen[w] = true
			}
			if a.Error != "" || a.Scope != "workspace" {
				t.Errorf("%+v", a)
			}
		}
		if ws != p {
			checkMultiAgentList(t, infos)
			r := runCLI(t, t.TempDir(), []string{"HOME=" + home}, "agents", "list", "--dir", p)
			if r.code != 0 || !strings.Contains(r.stdout, "no agent files in "+p) ||
				!strings.Contains(r.stdout, "holds 6 agent file(s) in agents/ but kiro reads only <workspace>/.kiro/agents") {
				t.Errorf("--dir %s: exit %d\n%s%s", p, r.code, r.stdout, r.stderr)
			}
		}
	}
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".kiro/agents"), 0o755)
	os.WriteFile(filepath.Join(ws, ".kiro/agents/bad.json"), []byte(`{"name":"bad","tools":"fs_read"}`), 0o644)
	r := runCLI(t, t.TempDir(), []string{"HOME=" + home}, "agents", "list", "--dir", ws)
	if r.code != 1 || !strings.Contains(r.stdout, "INVALID") || !strings.Contains(r.stdout, "/tools") {
		t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// checkMultiAgentList checks what `agents list` reports for the six agents
// of the multi-agent project: the ten steering files (file:// resources), the
// seven skills, the MCP servers, and warnings naming the prompt files kiro
// cannot resolve, the hook scripts not stored, and the skill without front
// matter.
func checkMultiAgentList(t *testing.T, infos []agentInfo) {
	t.Helper()
	servers := map[string]string{
		"coder":             "aws-knowledge-mcp-server,awslabs.aws-iac-mcp-server,context7",
		"docs":              "",
		"leader":            "aws-knowledge-mcp-server,awslabs.aws-iac-mcp-server,awslabs.document-loader-mcp-server,context7,deepwiki",
		"ops":               "aws-knowledge-mcp-server,awslabs.aws-iac-mcp-server",
		"reviewer":          "aws-knowledge-mcp-server,context7",
		"security-reviewer": "aws-knowledge-mcp-server,context7",
	}
	if len(infos) != len(servers) {
		t.Fatalf("%d agents, want %d", len(infos), len(servers))
	}
	for _, a := range infos {
		want, ok := servers[a.Name]
		if !ok || strings.Join(a.MCPServers, ",") != want || a.Resources != 10 || a.Skills != 7 || a.Steering != 0 {
			t.Errorf("%s: servers %v resources %d skills %d steering %d", a.Name, a.MCPServers, a.Resources, a.Skills, a.Steering)
		}
		all := strings.Join(a.Warnings, "\n")
		for _, w := range []string{
			`/prompt: prompt file not readable`, `write "file://` + a.Name + `.md"`,
			"/hooks/agentSpawn/0/command: hook script not found",
			"/resources/1: SKILL.md has no YAML front matter",
		} {
			if !strings.Contains(all, w) {
				t.Errorf("%s: no warning %q among\n%s", a.Name, w, all)
			}
		}
	}
}
