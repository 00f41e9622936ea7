// Package toolcheck checks a kiro agent file's tools and allowedTools
// against the tools strata can offer, so that no name vanishes silently
// (docs/kiro.md, "tool names").
package toolcheck

import (
	"fmt"
	"sort"
	"strings"

	"github.com/strata-agent/strata/config"
)

// Unsupported are the kiro / Amazon Q built-in tools strata does not
// implement, each with the reason. An agent that lists one gets a warning
// (Warnings) in `strata agents list`, `render` and `run`; the tool is
// not offered to the model.
var Unsupported = map[string]string{
	"web_search":   "kiro's web search runs on AWS's search back end, which has no public API; strata has no search provider (web_fetch reads a given URL)",
	"code":         "kiro's code intelligence needs its LSP integration (.kiro/settings/lsp.json, language servers); strata has none — use grep and glob, or an LSP MCP server",
	"use_aws":      "strata does not call AWS APIs with the user's credentials; run the aws CLI through execute_bash, where the command policy and approval apply, or use an AWS MCP server",
	"report_issue": "it files an issue against the Amazon Q / kiro CLI itself, which strata is not",
	"delegate":     "Amazon Q's asynchronous background agents are not modelled; use_subagent runs another agent synchronously",
}

// Warnings returns a warning for every entry of the agent's tools and
// allowedTools that names no tool strata can offer (have: the canonical
// names of the tools it implements) — the kiro-cli turn
// anatomy filters the tool list "against the agent's tools and allowedTools
// configuration", and a name that matches nothing must not vanish silently:
//
//   - a kiro built-in strata does not implement (Unsupported, with the
//     reason);
//   - a plain name that is no built-in of strata or kiro (an MCP tool
//     written without "@server/", a misspelling, a tool of another agent
//     format);
//   - "@server" or "@server/tool" whose server is not among servers (the
//     agent's mcpServers and the mcp.json files it includes).
//
// Patterns with "*" or "?", "*" and "@builtin" are not checked. A name
// listed in both fields is reported once, under the first field.
func Warnings(a *config.Agent, servers []string, have map[string]bool) []config.Warning {
	known := config.ToolAliasTable()
	srv := map[string]bool{}
	for _, s := range servers {
		srv[s] = true
	}
	seen := map[string]bool{}
	var out []config.Warning
	check := func(field string, entries []string) {
		for i, e := range entries {
			e = strings.TrimSpace(e)
			if e == "" || e == "*" || e == "@builtin" || e == "@builtin/" || e == "@native" || e == "@native/" || strings.ContainsAny(e, "*?") || seen[e] {
				continue
			}
			seen[e] = true
			msg := toolProblem(a, e, have, known, srv)
			if msg != "" {
				out = append(out, config.Warning{File: a.Path, Field: fmt.Sprintf("/%s/%d", field, i), Message: msg})
			}
		}
	}
	check("tools", a.Tools)
	check("allowedTools", a.AllowedTools)
	return out
}

// SkillsWithoutFSRead warns when the agent has skills (skills counts its
// resolved skill:// resources) but may not use fs_read: the kiro-cli turn
// anatomy, "If your agent config disables the fs_read tool, skills become a
// menu the LLM can read but never order from." nil otherwise.
func SkillsWithoutFSRead(a *config.Agent, skills int) []config.Warning {
	if skills == 0 || a.ToolAllowed("fs_read") {
		return nil
	}
	return []config.Warning{{File: a.Path, Field: "/tools", Message: fmt.Sprintf(
		"the agent has %d skill(s) but no fs_read: the model sees the skill hints and cannot read a SKILL.md (add \"fs_read\" to tools)", skills)}}
}

// toolProblem says what is wrong with one tools/allowedTools entry ("" =
// nothing).
func toolProblem(a *config.Agent, e string, have map[string]bool, known map[string]string, srv map[string]bool) string {
	if rest, ok := strings.CutPrefix(e, "@"); ok {
		server, _, _ := strings.Cut(rest, "/")
		if server == "builtin" || server == "native" {
			e = rest[len(server)+1:]
		} else if !srv[server] {
			return fmt.Sprintf("%q: no MCP server %q is configured for this agent (mcpServers or an included mcp.json); no tool matches it", e, server)
		} else {
			return ""
		}
	}
	name := a.CanonicalName(e)
	if strings.HasPrefix(name, "@") { // an alias of an MCP tool
		return ""
	}
	if have[name] {
		return ""
	}
	if why, ok := Unsupported[name]; ok {
		return fmt.Sprintf("%q is a kiro built-in strata does not implement (%s); not offered to the model", e, why)
	}
	if _, ok := known[e]; ok {
		return fmt.Sprintf("%q is a kiro built-in strata does not implement; not offered to the model", e)
	}
	return fmt.Sprintf("%q is not a built-in tool of strata or kiro (built-ins: %s); MCP tools are written \"@server/tool\", or \"@server\" for all of a server's tools; not offered to the model",
		e, strings.Join(sortedKeys(have), ", "))
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
