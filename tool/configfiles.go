package tool

import (
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// configNames are the file names (any folder, any case) agents read as
// instructions or server configuration: a model that writes one changes
// what the next agent (or sub-agent) is told or runs.
var configNames = map[string]string{
	"agents.md":          "a project instruction file (AGENTS.md)",
	"agents.override.md": "a project instruction file (AGENTS.override.md)",
	"claude.md":          "a project instruction file (CLAUDE.md)",
	"claude.local.md":    "a project instruction file (CLAUDE.local.md)",
	".mcp.json":          "an MCP server configuration (.mcp.json)",
}

// ConfigPath returns what agent configuration the absolute path p is, or ""
// when it is none. Agent configuration is what decides what an agent is
// told, may do or runs: anything inside a folder named .kiro (agents,
// settings and MCP servers, steering, hooks, skills, prompts), .amazonq
// (but its cli-todo-lists, todo_list's own data), .strata (strata's
// project files) or .aws/amazonq; files named AGENTS.md,
// AGENTS.override.md, CLAUDE.md, CLAUDE.local.md or .mcp.json; names are
// compared case-insensitively. docs/security.md, "Agent configuration
// files".
func ConfigPath(p string) string {
	parts := splitPath(p)
	for i, c := range parts {
		c = strings.ToLower(c)
		switch {
		case c == ".kiro":
			return "inside a .kiro folder (agent configuration: agents, settings, steering, hooks, skills)"
		case c == ".amazonq" && !(i+1 < len(parts) && parts[i+1] == "cli-todo-lists"):
			return "inside a .amazonq folder (agent configuration)"
		case c == ".strata":
			return "inside a .strata folder (strata's project files)"
		case c == "amazonq" && i > 0 && strings.EqualFold(parts[i-1], ".aws"):
			return "inside ~/.aws/amazonq (agent configuration)"
		}
	}
	if len(parts) > 0 {
		return configNames[strings.ToLower(parts[len(parts)-1])]
	}
	return ""
}

// configKind returns what agent configuration r is (ConfigPath of its
// lexical or resolved form, or an Env.ConfigPaths entry covering it), or "".
func (e *Env) configKind(r resolvedPath) string {
	for _, p := range []string{r.abs, r.real} {
		if k := ConfigPath(p); k != "" {
			return k
		}
	}
	if e != nil && allowedBy(e.ConfigPaths, r.root, r.real) {
		return "strata's own configuration"
	}
	return ""
}

// protectedWrite reports whether writing r needs a person's approval: it is
// agent configuration and no fs_write allowedPaths entry names agent
// configuration that covers it (an entry such as "~" or "/" covers it only
// by accident and does not count).
func (e *Env) protectedWrite(r resolvedPath) bool {
	if e.configKind(r) == "" {
		return false
	}
	var explicit []string
	for _, a := range e.Policy(AccessWrite).AllowedPaths {
		if ap, err := absPath(r.root, filepath.FromSlash(strings.TrimSuffix(a, "/"))); err == nil &&
			(ConfigPath(ap) != "" || (e != nil && allowedBy(e.ConfigPaths, r.root, ap))) {
			explicit = append(explicit, a)
		}
	}
	return !allowedBy(explicit, r.root, r.real)
}

// fileWriters are commands whose arguments name files they create, change
// or remove; with execute_bash in allowedTools, one naming agent
// configuration still needs a person's approval (shellConfigWrite). sed
// and perl write only with -i, dd only with of=.
var fileWriters = map[string]bool{
	"tee": true, "cp": true, "mv": true, "install": true, "ln": true, "touch": true, "rm": true,
	"truncate": true, "rsync": true, "sed": true, "perl": true, "dd": true, "chmod": true, "mkdir": true,
}

// writes reports whether the command name with args writes the files its
// arguments name (fileWriters).
func writes(name string, args []*syntax.Word) bool {
	if !fileWriters[name] {
		return false
	}
	if name != "sed" && name != "perl" && name != "dd" {
		return true
	}
	for _, a := range args {
		l := literalText(a)
		if (name == "dd" && strings.HasPrefix(l, "of=")) || (name != "dd" && (strings.HasPrefix(l, "-i") || strings.HasPrefix(l, "--in-place"))) {
			return true
		}
	}
	return false
}

// shellConfigWrite returns why command writes agent configuration, where
// its text shows it: a redirection (>, >>, >|, <>, &>, &>>) to such a path,
// or a file-writing command (fileWriters) with an argument naming one; ""
// otherwise. Paths built by expansions or written by other programs are
// not seen (docs/security.md says so).
func shellConfigWrite(env *Env, command string) string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		if mentionsConfig(command) {
			return "the command names agent configuration and cannot be parsed to tell whether it writes it: that needs a person's approval of this call"
		}
		return ""
	}
	why := ""
	check := func(w *syntax.Word) {
		if w == nil || why != "" {
			return
		}
		v, bad := plainWord(w)
		if bad != "" {
			if text := literalText(w); mentionsConfig(text) {
				why = "the command writes a path built from " + text + ", which names agent configuration: that needs a person's approval of this call"
			}
			return
		}
		v = strings.TrimPrefix(v, "of=")
		if v == "" {
			return
		}
		if r, err := resolve(env, v); err == nil && env.protectedWrite(r) {
			why = "the command writes " + v + ", " + env.configKind(r) + ": that needs a person's approval of this call"
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Redirect:
			switch n.Op {
			case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrInOut, syntax.RdrAll, syntax.AppAll:
				check(n.Word)
			}
		case *syntax.CallExpr:
			if len(n.Args) > 0 && writes(filepath.Base(n.Args[0].Lit()), n.Args[1:]) {
				for _, a := range n.Args[1:] {
					check(a)
				}
			}
		}
		return why == ""
	})
	return why
}

// configMarkers are the names ConfigPath looks for, lower case: text that
// holds one may name agent configuration.
var configMarkers = []string{".kiro", ".amazonq", "amazonq", ".strata", ".mcp.json", "agents.md", "agents.override.md", "claude.md", "claude.local.md"}

// mentionsConfig reports whether text (compared in lower case) holds a
// name of agent configuration: the over-eager fallback where a path is not
// known exactly.
func mentionsConfig(text string) bool {
	text = strings.ToLower(text)
	for _, m := range configMarkers {
		if strings.Contains(text, m) {
			return true
		}
	}
	return false
}

// literalText returns the literal parts of w (unquoted, single- and
// double-quoted text), leaving out its expansions.
func literalText(w *syntax.Word) string {
	var b strings.Builder
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Lit:
			b.WriteString(n.Value)
		case *syntax.SglQuoted:
			b.WriteString(n.Value)
		}
		return true
	})
	return b.String()
}
