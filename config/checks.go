package config

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// checkResources warns about resources that match no file and skills whose
// SKILL.md cannot be read (paths relative to ProjectRoot).
func (a *Agent) checkResources(home string) {
	c := collector{root: a.ProjectRoot, home: home, agentFile: a.Path, configDir: a.ConfigDir}
	c.collect(a, false)
	a.Warnings = append(a.Warnings, c.warnings...)
}

// shellWords are commands a hook may start with that are not files to check:
// shell keywords and builtins.
var shellWords = map[string]bool{
	"if": true, "then": true, "for": true, "while": true, "until": true, "case": true, "{": true, "(": true,
	"[": true, "[[": true, "!": true, "echo": true, "printf": true, "cd": true, "test": true, "true": true,
	"false": true, "exit": true, "export": true, "source": true, ".": true, "set": true, "exec": true,
	"eval": true, "read": true, "cat": true, "env": true, "time": true, "command": true,
}

// interpreters run a script named by their first argument, which is checked.
var interpreters = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "node": true, "python": true, "python3": true,
	"ruby": true, "perl": true, "deno": true, "bun": true, "tsx": true, "ts-node": true,
}

// checkHooks warns about hook commands whose script or program is missing:
// hooks run through the shell with the project root as working directory
// (hooks.md "Hook Event": cwd), so relative script paths resolve there.
// Unknown events and matchers on stop hooks (hooks.md: "Stop hooks do not use
// matchers") are warned about too.
func (a *Agent) checkHooks(home string) {
	events := make([]string, 0, len(a.Hooks))
	for ev := range a.Hooks {
		events = append(events, ev)
	}
	sort.Slice(events, func(i, j int) bool {
		ri, rj := hookRank(events[i]), hookRank(events[j])
		if ri != rj {
			return ri < rj
		}
		return events[i] < events[j]
	})
	for _, ev := range events {
		base := "/hooks/" + escapePointer(ev)
		if hookRank(ev) == len(HookEvents) {
			a.warn(a.Path, base, "unknown hook event (hooks.md knows %s); kept, never run", strings.Join(HookEvents, ", "))
		}
		for i, h := range a.Hooks[ev] {
			field := fmt.Sprintf("%s/%d", base, i)
			if ev == HookStop && h.Matcher != "" {
				a.warn(a.Path, field+"/matcher", "stop hooks do not use matchers (hooks.md); ignored")
			}
			if strings.TrimSpace(h.Command) == "" {
				a.warn(a.Path, field+"/command", "empty hook command")
				continue
			}
			for _, m := range a.missingCommand(h.Command, home) {
				a.warn(m.file, field+"/command", "%s", m.msg)
			}
		}
	}
}

func hookRank(ev string) int {
	for i, e := range HookEvents {
		if e == ev {
			return i
		}
	}
	return len(HookEvents)
}

type missing struct{ file, msg string }

// missingCommand inspects the first words of a shell command line: a program
// path that does not exist, a program not on $PATH, or the script an
// interpreter is given. Lines using shell syntax it cannot follow
// (variables, keywords) are not judged.
func (a *Agent) missingCommand(line, home string) []missing {
	words := shellSplit(line)
	if len(words) == 0 || shellWords[words[0]] || strings.ContainsAny(words[0], "$`=") {
		return nil
	}
	var out []missing
	prog := words[0]
	if p, ok := a.checkPath(prog, home); !ok {
		return []missing{{p, "hook script not found; the hook will fail when run"}}
	} else if p == "" {
		if _, err := exec.LookPath(prog); err != nil {
			out = append(out, missing{a.Path, fmt.Sprintf("program %q not found on $PATH; the hook will fail when run", prog)})
		}
	}
	if interpreters[filepath.Base(prog)] && len(words) > 1 {
		arg := words[1]
		if !strings.HasPrefix(arg, "-") && !strings.ContainsAny(arg, "$`") &&
			(strings.Contains(arg, "/") || filepath.Ext(arg) != "") {
			p := expandHome(arg, home)
			if !filepath.IsAbs(p) {
				p = filepath.Join(a.ProjectRoot, p)
			}
			if _, err := os.Stat(p); err != nil {
				out = append(out, missing{filepath.Clean(p), fmt.Sprintf("script for %s not found; the hook will fail when run", filepath.Base(prog))})
			}
		}
	}
	return out
}

// checkPath resolves a word that looks like a path ("./x", "a/b", "~/x",
// "/x") against the project root. It returns ("", true) for bare words.
func (a *Agent) checkPath(word, home string) (string, bool) {
	if !strings.Contains(word, "/") && !strings.HasPrefix(word, "~") {
		return "", true
	}
	p := expandHome(word, home)
	if !filepath.IsAbs(p) {
		p = filepath.Join(a.ProjectRoot, p)
	}
	p = filepath.Clean(p)
	_, err := os.Stat(p)
	return p, err == nil
}

// shellSplit splits the start of a command line into words, honouring simple
// quotes; it stops at the first operator (;, |, &, <, >).
func shellSplit(line string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case strings.ContainsRune(";|&<>", r):
			if inWord {
				words = append(words, cur.String())
			}
			return words
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// checkMCP warns about enabled stdio servers whose command is missing (a path
// relative to the project root, or a program not on $PATH) and HTTP servers
// without a URL. kiro reports such servers as failing to start and goes on.
func (a *Agent) checkMCP(home string) {
	for _, name := range sortedKeys(a.MCPServers) {
		s := a.MCPServers[name]
		field := "/mcpServers/" + escapePointer(name)
		if s.Disabled {
			continue
		}
		if s.Transport() == "http" {
			if s.URL == "" {
				a.warn(a.Path, field+"/url", "HTTP server without url; it cannot start")
			}
			continue
		}
		if m := missingProgram(s.Command, a.ProjectRoot, home); m != "" {
			a.warn(a.Path, field+"/command", "%s; the server will fail to start", m)
		}
	}
}

// Check returns a Warning for every enabled server of the mcp.json file that
// cannot start, as Agent's checks do for an agent's own mcpServers: a stdio
// command that is missing (a path relative to root, "~" expanded with home,
// or a program not on $PATH) or not executable, and an HTTP server without
// a url. Each Warning names c.Path and the server's JSON pointer. Nothing
// is started.
func (c *MCPConfig) Check(root, home string) []Warning {
	var out []Warning
	for _, name := range c.Names() {
		out = append(out, c.CheckServer(name, root, home)...)
	}
	return out
}

// CheckServer is Check for the one server name (none for a name the file
// does not hold).
func (c *MCPConfig) CheckServer(name, root, home string) []Warning {
	s, ok := c.Servers[name]
	field := "/mcpServers/" + escapePointer(name)
	switch {
	case !ok || s.Disabled:
	case s.Transport() == "http":
		if s.URL == "" {
			return []Warning{{File: c.Path, Field: field + "/url", Message: "HTTP server without url; it cannot start"}}
		}
	default:
		if m := missingProgram(s.Command, root, home); m != "" {
			return []Warning{{File: c.Path, Field: field + "/command", Message: m + "; the server will fail to start"}}
		}
	}
	return nil
}

// missingProgram returns why a server command cannot start, or "".
func missingProgram(cmd, root, home string) string {
	if strings.TrimSpace(cmd) == "" {
		return "empty command"
	}
	if strings.ContainsAny(cmd, "$`") {
		return ""
	}
	if strings.Contains(cmd, "/") || strings.HasPrefix(cmd, "~") {
		p := expandHome(cmd, home)
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		st, err := os.Stat(p)
		switch {
		case err != nil:
			return fmt.Sprintf("command %s not found", p)
		case st.IsDir():
			return fmt.Sprintf("command %s is a directory", p)
		case st.Mode().Perm()&0o111 == 0:
			return fmt.Sprintf("command %s is not executable (chmod +x it)", p)
		}
		return ""
	}
	if _, err := exec.LookPath(cmd); err != nil {
		return fmt.Sprintf("command %q not found on $PATH", cmd)
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
