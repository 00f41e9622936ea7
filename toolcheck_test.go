package strata_test

import (
	"github.com/strata-agent/strata/agentfile"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/internal/shared"
)

// realAgents loads every agent of the real projects as kiro finds them
// (each project as the .kiro of a workspace), keyed "project/agent".
func realAgents(t *testing.T) map[string]*agentfile.File {
	t.Helper()
	out := map[string]*agentfile.File{}
	for _, p := range shared.AgentProjects(t) {
		ws := shared.KiroWorkspace(t, p)
		for _, f := range agentfile.Find(ws) {
			if f.Scope != "workspace" {
				continue
			}
			a, err := agentfile.Load(f.Path, ws)
			if err != nil {
				t.Fatalf("%s: %v", f.Path, err)
			}
			out[filepath.Base(p)+"/"+f.Name] = a
		}
	}
	return out
}

// toolWarnings returns the agent's warnings about tool names, as
// "field: message".
func toolWarnings(a *agentfile.File) []string {
	var out []string
	for _, w := range a.Warnings {
		if strings.HasPrefix(w.Field, "/tools/") || strings.HasPrefix(w.Field, "/allowedTools/") {
			if !strings.Contains(w.Message, "is not supported in allowedTools") {
				out = append(out, w.Field+": "+w.Message)
			}
		}
	}
	return out
}

// The kiro-cli turn anatomy builds the tool list from built-in and MCP tools
// and "filters the result against the agent's tools and allowedTools
// configuration"; a name in those fields that strata cannot offer is a
// warning, never a silent drop. Every real agent is checked: the ones that
// list kiro built-ins strata lacks (web_search, code) get one warning per
// name (reported under tools even when allowedTools repeats it), naming why;
// the others none.
func TestRealAgentsWarnAboutToolsStrataLacks(t *testing.T) {
	agents := realAgents(t)
	if len(agents) < 15 {
		t.Fatalf("found %d real agents, want 15", len(agents))
	}
	want := map[string][]string{
		"johnmbergman__kiro-agents/coder":      {`/tools/3: "code" is a kiro built-in strata does not implement (kiro's code intelligence needs its LSP integration`},
		"johnmbergman__kiro-agents/default":    {`/tools/4: "web_search" is a kiro built-in strata does not implement (kiro's web search runs on AWS's search back end`},
		"johnmbergman__kiro-agents/researcher": {`/tools/0: "web_search" is a kiro built-in`, `/tools/6: "code" is a kiro built-in`},
	}
	for name, a := range agents {
		got := toolWarnings(a)
		w := want[name]
		if len(got) != len(w) {
			t.Errorf("%s: want %d tool warnings, got %q", name, len(w), got)
			continue
		}
		for i := range w {
			if !strings.HasPrefix(got[i], w[i]) || !strings.HasSuffix(got[i], "not offered to the model") {
				t.Errorf("%s: warning %d = %q, want it to start with %q", name, i, got[i], w[i])
			}
		}
	}
}

// Names that match no tool, one per kind: kiro built-ins strata lacks,
// names of no built-in at all (fs_list, use_mcp, a bare MCP tool name), a
// server the agent does not configure, "@builtin/NAME" of a missing
// built-in. Supported built-ins in either generation, configured servers,
// aliases and patterns pass.
func TestToolWarningsPerKind(t *testing.T) {
	dir := t.TempDir()
	agentFile := filepath.Join(dir, "a.json")
	writeFile(t, agentFile, `{"name":"a","tools":["read","shell","thinking","web_fetch","introspect","knowledge","subagent","todo",
		"web_search","use_aws","fs_list","use_mcp","git_status","@git","@git/git_log","@nosuch","@nosuch/x","@builtin/code","fs_*","@builtin","*","status"],
		"allowedTools":["fs_list","report_issue","delegate"],
		"toolAliases":{"@git/git_status":"status"},
		"mcpServers":{"git":{"command":"true"}}}`)
	a, err := agentfile.Load(agentFile, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`/tools/8: "web_search" is a kiro built-in strata does not implement`,
		`/tools/9: "use_aws" is a kiro built-in strata does not implement`,
		`/tools/10: "fs_list" is not a built-in tool of strata or kiro`,
		`/tools/11: "use_mcp" is not a built-in tool of strata or kiro`,
		`/tools/12: "git_status" is not a built-in tool of strata or kiro`,
		`/tools/15: "@nosuch": no MCP server "nosuch" is configured`,
		`/tools/16: "@nosuch/x": no MCP server "nosuch" is configured`,
		`/tools/17: "code" is a kiro built-in strata does not implement`,
		`/allowedTools/1: "report_issue" is a kiro built-in strata does not implement`,
		`/allowedTools/2: "delegate" is a kiro built-in strata does not implement`,
	}
	got := toolWarnings(a)
	if len(got) != len(want) {
		t.Fatalf("want %d warnings, got %d:\n%s", len(want), len(got), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("warning %d = %q, want prefix %q", i, got[i], want[i])
		}
	}
}

// The kiro-cli turn anatomy: "If your agent config disables the fs_read
// tool, skills become a menu the LLM can read but never order from." An
// agent with skills and no fs_read is warned; with fs_read it is not.
func TestSkillsWithoutFSReadWarn(t *testing.T) {
	for _, tc := range []struct {
		tools string
		warn  bool
	}{{`["shell"]`, true}, {`["read"]`, false}} {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, ".kiro", "skills", "deploy", "SKILL.md"), "---\nname: deploy\ndescription: how to deploy\n---\nsteps\n")
		writeFile(t, filepath.Join(dir, ".kiro", "agents", "a.json"), `{"name":"a","tools":`+tc.tools+`,"resources":["skill://.kiro/skills/*/SKILL.md"]}`)
		a, err := agentfile.Load(filepath.Join(dir, ".kiro", "agents", "a.json"), dir)
		if err != nil {
			t.Fatal(err)
		}
		got := false
		for _, w := range a.Warnings {
			got = got || strings.Contains(w.Message, "skill(s) but no fs_read")
		}
		if got != tc.warn {
			t.Errorf("tools %s: warned %v, want %v (%v)", tc.tools, got, tc.warn, a.Warnings)
		}
	}
}
