package config

import (
	"testing"
)

func TestCanonicalTool(t *testing.T) {
	cases := map[string]string{
		// Amazon Q generation.
		"fs_read": "fs_read", "fs_write": "fs_write", "execute_bash": "execute_bash", "use_aws": "use_aws",
		"report_issue": "report_issue", "gh_issue": "report_issue", "knowledge": "knowledge", "thinking": "thinking",
		"todo_list": "todo_list", "introspect": "introspect", "delegate": "delegate",
		// kiro generation.
		"read": "fs_read", "write": "fs_write", "shell": "execute_bash", "aws": "use_aws", "grep": "grep",
		"glob": "glob", "web_search": "web_search", "web_fetch": "web_fetch", "code": "code",
		"subagent": "use_subagent", "use_subagent": "use_subagent", "report": "report_issue",
		// Draft v2 and namespaces.
		"fs-read": "fs_read", "execute-bash": "execute_bash", "@builtin/shell": "execute_bash",
		"@native/execute-bash": "execute_bash", " read ": "fs_read",
		// Kept unchanged.
		"@git": "@git", "@git/git_status": "@git/git_status", "*": "*", "@builtin": "@builtin",
		"my_tool": "my_tool", "Read": "Read", "": "",
	}
	for in, want := range cases {
		if got := CanonicalTool(in); got != want {
			t.Errorf("CanonicalTool(%q) = %q, want %q", in, got, want)
		}
	}
	table := ToolAliasTable()
	table["read"] = "changed"
	if CanonicalTool("read") != "fs_read" {
		t.Error("ToolAliasTable must return a copy")
	}
	for _, b := range BuiltinTools() {
		if CanonicalTool(b) != b {
			t.Errorf("canonical name %q is not a fixed point", b)
		}
	}
}

func TestToolAllowed(t *testing.T) {
	a := &Agent{
		Tools:       []string{"read", "execute_bash", "@git", "@fetch/fetch_url", "web_*"},
		ToolAliases: map[string]string{"@fetch/fetch_url": "get", "@git/git_status": "status"},
	}
	for name, want := range map[string]bool{
		"fs_read": true, "read": true, "@builtin/fs_read": true, "shell": true, "execute_bash": true,
		"fs_write": false, "write": false, "@git/git_log": true, "@git": true, "@gitlab/x": false,
		"@fetch/fetch_url": true, "@fetch/other": false, "get": true, "status": true,
		"web_search": true, "web_fetch": true, "grep": false, "": false,
	} {
		if got := a.ToolAllowed(name); got != want {
			t.Errorf("ToolAllowed(%q) = %v, want %v", name, got, want)
		}
	}
	all := &Agent{Tools: []string{"*"}}
	if !all.ToolAllowed("anything") || !all.ToolAllowed("@s/t") {
		t.Error(`"*" allows everything`)
	}
	builtin := &Agent{Tools: []string{"@builtin"}}
	if !builtin.ToolAllowed("shell") || builtin.ToolAllowed("@s/t") {
		t.Error(`"@builtin" allows built-ins only`)
	}
	if (&Agent{}).ToolAllowed("fs_read") {
		t.Error("no tools, no tool")
	}
}

// The kiro-cli turn anatomy's make_tool_spec filters "against the agent's
// tools and allowedTools configuration": a tool allowedTools names is
// offered even when tools does not list it; "*" in allowedTools (not
// supported there) and the tools trusted by default add nothing.
func TestToolAllowedByAllowedTools(t *testing.T) {
	a := &Agent{Tools: []string{"read"}, AllowedTools: []string{"shell", "@git", "fs_w*"}}
	for name, want := range map[string]bool{
		"fs_read": true, "execute_bash": true, "@git/git_log": true, "fs_write": true,
		"report_issue": false, "grep": false, "@fetch/x": false,
	} {
		if got := a.ToolAllowed(name); got != want {
			t.Errorf("ToolAllowed(%q) = %v, want %v", name, got, want)
		}
	}
	if (&Agent{AllowedTools: []string{"*"}}).ToolAllowed("fs_read") {
		t.Error(`"*" in allowedTools must not offer every tool`)
	}
}

// TestToolAutoApproved follows agent-format.md "AllowedTools Field".
func TestToolAutoApproved(t *testing.T) {
	cases := []struct {
		pattern string
		yes, no []string
	}{
		{"fs_*", []string{"fs_write", "write", "fs_anything"}, []string{"execute_bash", "@fs/x"}},
		{"*_bash", []string{"execute_bash", "shell", "run_bash"}, []string{"use_aws"}},
		{"fs_*_tool", []string{"fs_read_tool"}, []string{"fs_write"}},
		{"fs_?ead", []string{"fs_head"}, []string{"fs_write"}},
		{"fs_?rite", []string{"fs_write"}, []string{"execute_bash"}},
		{"@server/read_*", []string{"@server/read_file", "@server/read_config"}, []string{"@server/write", "@other/read_x"}},
		{"@server/*_get", []string{"@server/issue_get"}, []string{"@server/get_issue"}},
		{"@*-mcp/read_*", []string{"@git-mcp/read_file", "@db-mcp/read_data"}, []string{"@git/read_file", "@git-mcp/write"}},
		{"@git-*/*", []string{"@git-server/anything"}, []string{"@git/x"}},
		{"@git-*", []string{"@git-hub/x"}, []string{"@gitlab/x"}},
		{"@*/status", []string{"@a/status", "@b/status"}, []string{"@a/stat"}},
		{"@fetch", []string{"@fetch/fetch"}, []string{"@fetcher/x"}},
		{"@builtin", []string{"shell", "use_aws"}, []string{"@s/t"}},
		// kiro's tool_permission_checker.rs test_builtin_namespace.
		{"@builtin/", []string{"fs_read", "execute_bash"}, []string{"@s/t"}},
		{"@builtin/*", []string{"fs_read", "execute_bash"}, []string{"@s/t"}},
		{"@builtin/fs_read", []string{"fs_read"}, []string{"fs_write"}},
		{"@builtin/fs_*", []string{"fs_read", "fs_write"}, []string{"execute_bash"}},
		{"shell", []string{"execute_bash", "shell"}, []string{"fs_write"}},
		{"*", nil, []string{"execute_bash", "@s/t"}},
		{"FS_*", nil, []string{"fs_write"}},
	}
	for _, c := range cases {
		a := &Agent{AllowedTools: []string{c.pattern}}
		for _, n := range c.yes {
			if !a.ToolAutoApproved(n) {
				t.Errorf("%q should approve %q", c.pattern, n)
			}
		}
		for _, n := range c.no {
			if a.ToolAutoApproved(n) {
				t.Errorf("%q should not approve %q", c.pattern, n)
			}
		}
	}
	none := &Agent{}
	if !none.ToolAutoApproved("read") || !none.ToolAutoApproved("report_issue") || none.ToolAutoApproved("write") {
		t.Error("fs_read and report_issue are trusted by default (built-in-tools.md)")
	}
	aliased := &Agent{AllowedTools: []string{"@git/git_status"}, ToolAliases: map[string]string{"@git/git_status": "status"}}
	if !aliased.ToolAutoApproved("status") {
		t.Error("aliases map back to the original tool")
	}
	if !MatchTool("@builtin/fs_*", "write", false) || MatchTool("*", "x", false) || !MatchTool("*", "x", true) {
		t.Error("MatchTool")
	}
}

func TestHookMatches(t *testing.T) {
	a := &Agent{}
	for _, c := range []struct {
		matcher, tool string
		want          bool
	}{
		{"", "anything", true}, {"*", "@s/t", true}, {"@builtin", "read", true}, {"@builtin", "@s/t", false},
		{"fs_write", "write", true}, {"fs_*", "read", true}, {"@git", "@git/status", true},
		{"@git/status", "@git/log", false}, {"execute_bash", "shell", true}, {"shell", "execute_bash", true},
	} {
		if got := a.HookMatches(Hook{Matcher: c.matcher}, c.tool); got != c.want {
			t.Errorf("matcher %q tool %q = %v", c.matcher, c.tool, got)
		}
	}
}

func TestWildcardMatch(t *testing.T) {
	for _, c := range []struct {
		p, s string
		want bool
	}{
		{"", "", true}, {"*", "", true}, {"a*", "abc", true}, {"*c", "abc", true}, {"a?c", "abc", true},
		{"a?c", "ac", false}, {"a*b*c", "aXbYc", true}, {"a*b*c", "aXbY", false}, {"**", "x", true}, {"é?", "éa", true},
	} {
		if got := wildcardMatch(c.p, c.s); got != c.want {
			t.Errorf("wildcardMatch(%q, %q) = %v", c.p, c.s, got)
		}
	}
}
