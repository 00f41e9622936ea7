package config

import (
	"sort"
	"strings"
)

// toolTable maps every known built-in tool name of both generations to
// strata's canonical name. Sources: Amazon Q built-in-tools.md and
// tool-index/tool_index.json (fs_read, fs_write, execute_bash, use_aws,
// report_issue/gh_issue, knowledge, thinking, todo_list, introspect,
// delegate); the kiro CLI built-in tools page (read, write, shell, aws, grep,
// glob, web_search, web_fetch, code, subagent/use_subagent, report); the
// draft v2 format's hyphenated names (the-agent-format-2.md: fs-read,
// execute-bash, …).
var toolTable = map[string]string{
	// Amazon Q Developer CLI.
	"fs_read": "fs_read", "fs_write": "fs_write", "execute_bash": "execute_bash",
	"execute_cmd": "execute_bash", "use_aws": "use_aws", "report_issue": "report_issue",
	"gh_issue": "report_issue", "knowledge": "knowledge", "thinking": "thinking",
	"todo_list": "todo_list", "introspect": "introspect", "delegate": "delegate",
	// kiro CLI.
	"read": "fs_read", "write": "fs_write", "shell": "execute_bash", "aws": "use_aws",
	"grep": "grep", "glob": "glob", "web_search": "web_search", "web_fetch": "web_fetch",
	"code": "code", "subagent": "use_subagent", "use_subagent": "use_subagent",
	"report": "report_issue", "todo": "todo_list",
	// Draft v2 agent format.
	"fs-read": "fs_read", "fs-write": "fs_write", "execute-bash": "execute_bash",
	"use-aws": "use_aws", "report-issue": "report_issue", "todo-list": "todo_list",
	"web-search": "web_search", "web-fetch": "web_fetch", "use-subagent": "use_subagent",
}

// defaultTrusted are built-in tools run without prompting even when
// allowedTools does not name them (built-in-tools.md "Tool Permissions":
// "fs_read and report_issue are trusted by default").
var defaultTrusted = map[string]bool{"fs_read": true, "report_issue": true}

// ToolAliasTable returns a copy of the table mapping every known built-in tool
// name (Amazon Q: fs_read, execute_bash, use_aws, …; kiro: read, write, shell,
// aws, subagent, …; draft v2: fs-read, …) to strata's canonical name.
func ToolAliasTable() map[string]string {
	out := make(map[string]string, len(toolTable))
	for k, v := range toolTable {
		out[k] = v
	}
	return out
}

// BuiltinTools returns strata's canonical built-in tool names, sorted.
func BuiltinTools() []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range toolTable {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

// CanonicalTool maps a tool name to strata's canonical name: a built-in name
// of either generation ("read", "shell", "fs_read", "subagent", …) to its
// canonical form ("fs_read", "execute_bash", "use_subagent", …); a
// "@builtin/NAME" or "@native/NAME" reference to NAME's canonical form.
// MCP references ("@server", "@server/tool"), "*", "@builtin" and unknown
// names are returned unchanged (trimmed). Matching is case-sensitive
// (agent-format.md "Pattern Matching Rules").
func CanonicalTool(name string) string {
	name = strings.TrimSpace(name)
	for _, ns := range []string{"@builtin/", "@native/"} {
		if rest, ok := strings.CutPrefix(name, ns); ok {
			if hasWildcard(rest) {
				return rest
			}
			return CanonicalTool(rest)
		}
	}
	if c, ok := toolTable[name]; ok {
		return c
	}
	return name
}

// CanonicalName is CanonicalTool with the agent's toolAliases applied first:
// a name the agent aliased ("status" for "@git/git_status") maps back to the
// original tool. When several originals share an alias the smallest wins.
func (a *Agent) CanonicalName(name string) string {
	name = strings.TrimSpace(name)
	orig := ""
	for k, v := range a.ToolAliases {
		if v == name && (orig == "" || k < orig) {
			orig = k
		}
	}
	if orig != "" {
		return CanonicalTool(orig)
	}
	return CanonicalTool(name)
}

// ToolAllowed reports whether the model may see and call the tool name
// (agent-format.md "Tools Field"): some entry of tools is "*" (everything),
// "@builtin" (every built-in), "@server" (every tool of that MCP server),
// "@server/tool", or names the same built-in in either generation ("read" and
// "fs_read" are one tool). Entries may use the "*" / "?" wildcards of
// allowedTools. Names the agent aliased are mapped back first.
//
// A tool an allowedTools entry matches (exactly, by pattern, "@server" or
// "@builtin"; never the tools kiro trusts by default) is allowed too: the
// kiro-cli turn anatomy's make_tool_spec filters the tool list "against the
// agent's tools and allowedTools configuration", and allowedTools names
// "tools that can be used without prompting" (agent-format.md), so a tool
// listed there only is offered rather than dropped. An agent with neither
// has none (agent-v1.json: tools default []).
func (a *Agent) ToolAllowed(name string) bool {
	n := a.CanonicalName(name)
	for _, e := range a.Tools {
		if matchToolEntry(e, n, true) {
			return true
		}
	}
	for _, e := range a.AllowedTools {
		if matchToolEntry(e, n, false) {
			return true
		}
	}
	return false
}

// ToolAutoApproved reports whether the tool runs without prompting
// (agent-format.md "AllowedTools Field"): an allowedTools entry matches it
// exactly, by "*"/"?" pattern ("fs_*", "@server/read_*", "@*-mcp/read_*",
// "@git-*"), as "@server" or "@builtin" ("@builtin/" too); or it is trusted by default
// (fs_read, report_issue; built-in-tools.md). A bare "*" entry approves
// nothing: the docs say allowedTools does not support it (LoadAgent warns).
// It does not check ToolAllowed; per-call toolsSettings rules
// (allowedCommands, allowedPaths, …) are the caller's to apply.
func (a *Agent) ToolAutoApproved(name string) bool {
	n := a.CanonicalName(name)
	if defaultTrusted[n] {
		return true
	}
	for _, e := range a.AllowedTools {
		if matchToolEntry(e, n, false) {
			return true
		}
	}
	return false
}

// HookMatches reports whether a preToolUse/postToolUse hook applies to the
// tool (hooks.md "Tool Matching"): no matcher, "*", "@builtin", "@server",
// "@server/tool", a name or a "*"/"?" pattern, compared canonically so a
// matcher "execute_bash" covers a tool listed as "shell".
func (a *Agent) HookMatches(h Hook, tool string) bool {
	if strings.TrimSpace(h.Matcher) == "" {
		return true
	}
	return matchToolEntry(h.Matcher, a.CanonicalName(tool), true)
}

// MatchTool reports whether the tools/allowedTools entry pattern matches the
// tool name, both compared canonically; star says whether a bare "*" matches
// everything (true for tools and hook matchers, false for allowedTools).
func MatchTool(pattern, name string, star bool) bool {
	return matchToolEntry(pattern, CanonicalTool(name), star)
}

// matchToolEntry matches one entry against a canonical tool name.
func matchToolEntry(entry, name string, star bool) bool {
	entry = strings.TrimSpace(entry)
	switch {
	case entry == "":
		return false
	case entry == "*":
		return star
	case entry == "@builtin" || entry == "@native" || entry == "@builtin/" || entry == "@native/":
		// kiro's tool_permission_checker: "@builtin", "@builtin/" and
		// "@builtin/*" all name every built-in.
		return !strings.HasPrefix(name, "@")
	}
	if strings.HasPrefix(entry, "@") && !strings.HasPrefix(entry, "@builtin/") && !strings.HasPrefix(entry, "@native/") {
		if !strings.HasPrefix(name, "@") {
			return false
		}
		srvPat, toolPat, hasTool := strings.Cut(entry[1:], "/")
		srv, tool, _ := strings.Cut(name[1:], "/")
		if !wildcardMatch(srvPat, srv) {
			return false
		}
		return !hasTool || wildcardMatch(toolPat, tool)
	}
	if strings.HasPrefix(name, "@") {
		return false
	}
	e := CanonicalTool(entry)
	if !hasWildcard(e) {
		return e == name
	}
	for _, n := range toolNames(name) {
		if wildcardMatch(e, n) {
			return true
		}
	}
	return false
}

// toolNames returns a canonical built-in's name and all its aliases, sorted.
func toolNames(canon string) []string {
	out := []string{canon}
	for k, v := range toolTable {
		if v == canon && k != canon {
			out = append(out, k)
		}
	}
	sort.Strings(out[1:])
	return out
}

func hasWildcard(s string) bool { return strings.ContainsAny(s, "*?") }

// wildcardMatch matches s against a pattern where "*" is any run of
// characters (including none) and "?" exactly one character.
func wildcardMatch(pattern, s string) bool {
	p, str := []rune(pattern), []rune(s)
	pi, si, starP, starS := 0, 0, -1, 0
	for si < len(str) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == str[si]):
			pi++
			si++
		case pi < len(p) && p[pi] == '*':
			starP, starS = pi, si
			pi++
		case starP >= 0:
			starS++
			pi, si = starP+1, starS
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
