package tool

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// shellShape is what bash's grammar says about one execute_bash command,
// parsed with mvdan.cc/sh/v3/syntax (the parser gofmt-style shell tools use):
// the simple commands it is made of, and whether it is "plain" — one
// pipeline of simple commands whose words bash passes on unchanged.
// docs/security.md, "Command classification", states the rule.
type shellShape struct {
	// stages are the simple commands of a plain command, in pipeline order:
	// each its words with quotes removed (nil when not plain).
	stages [][]string
	// texts are the source texts of the stages, as written (regexes match
	// these, as kiro matches the command's text).
	texts []string
	// all are the source texts of every simple command anywhere in the
	// command: inside substitutions, subshells, functions, loops and
	// conditionals too (what deniedCommands are matched against).
	all []string
	// why says why the command is not plain ("" when it is).
	why string
}

// indirection are the builtins that run, load or reinterpret other shell
// code (eval, source, exec, command, trap, …) or set variables and options
// (declare, export, read, printf -v, set, …; array subscripts they take are
// evaluated as arithmetic): an allow pattern never matches a command that
// starts with one (docs/security.md, "Command classification").
var indirection = map[string]bool{
	"eval": true, "source": true, ".": true, "exec": true, "command": true, "builtin": true,
	"enable": true, "trap": true, "alias": true, "unalias": true, "declare": true, "typeset": true,
	"local": true, "export": true, "readonly": true, "let": true, "set": true, "shopt": true,
	"fc": true, "mapfile": true, "readarray": true, "read": true, "printf": true, "unset": true,
	"coproc": true, "complete": true, "compgen": true, "bind": true, "hash": true,
}

// parseShell parses command as bash and describes its shape. A command bash
// would not parse is never plain (its why says so); its all then holds
// only what the parser got to (callers add the text split as well).
func parseShell(command string) shellShape {
	var sh shellShape
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		sh.why = "bash cannot parse it: " + err.Error()
		return sh
	}
	sh.all = simpleCommands(command, f, 0)
	switch {
	case len(f.Stmts) == 0:
		sh.why = "it is empty"
	case len(f.Stmts) > 1:
		sh.why = "it runs several commands in sequence"
	default:
		sh.why = sh.pipeline(command, f.Stmts[0])
	}
	if sh.why != "" {
		sh.stages, sh.texts = nil, nil
	}
	return sh
}

// maxShellDepth bounds how deep simpleCommands follows code inside strings
// (eval "…", bash -c "…").
const maxShellDepth = 3

// simpleCommands returns the text of every simple command in f (parsed from
// src), anywhere: as written, and, when its words are plain, as bash will
// see them — quotes removed, words joined by one space, the command name
// also without its directory ("r”m -rf x" and "/bin/rm -rf x" give
// "rm -rf x"); and the simple commands of the code an eval, or a bash or
// sh -c, runs when that code is plain text (up to maxShellDepth deep).
func simpleCommands(src string, f *syntax.File, depth int) []string {
	var out []string
	syntax.Walk(f, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !ok || len(c.Args) == 0 {
			return true
		}
		out = append(out, source(src, c))
		words := make([]string, 0, len(c.Args))
		for _, w := range c.Args {
			v, why := plainWord(w)
			if why != "" {
				return true
			}
			words = append(words, v)
		}
		for len(words) > 0 {
			out = append(out, strings.Join(words, " "))
			if base := path.Base(words[0]); base != words[0] {
				out = append(out, strings.Join(append([]string{base}, words[1:]...), " "))
			}
			if !wrappers[path.Base(words[0])] {
				break
			}
			words = words[1:]
			for len(words) > 0 && (strings.HasPrefix(words[0], "-") || strings.Contains(words[0], "=")) {
				words = words[1:]
			}
		}
		if len(words) == 0 || depth >= maxShellDepth {
			return true
		}
		if inner := innerCode(words); inner != "" {
			if g, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(inner), ""); err == nil {
				out = append(out, inner)
				out = append(out, simpleCommands(inner, g, depth+1)...)
			}
		}
		return true
	})
	return out
}

// wrappers are commands that run their arguments as a command (after
// options and NAME=value words): the deny side also sees the command they
// wrap ("command rm -rf x" gives "rm -rf x").
var wrappers = map[string]bool{
	"command": true, "exec": true, "builtin": true, "nohup": true, "sudo": true, "doas": true, "env": true,
	"nice": true, "time": true, "stdbuf": true, "setsid": true, "chrt": true, "ionice": true,
}

// innerCode returns the shell code a simple command runs from its
// arguments: eval's arguments joined by spaces, the argument after -c of
// bash or sh; "" for anything else.
func innerCode(words []string) string {
	switch path.Base(words[0]) {
	case "eval":
		return strings.Join(words[1:], " ")
	case "bash", "sh", "dash", "zsh", "ksh":
		if len(words) < 3 {
			return ""
		}
		for i, w := range words[1 : len(words)-1] {
			if w == "-c" {
				return words[i+2]
			}
		}
	}
	return ""
}

// pipeline adds the stages of st, a pipeline of simple commands, and returns
// why it is not plain ("" when it is).
func (sh *shellShape) pipeline(src string, st *syntax.Stmt) string {
	switch {
	case st.Background || st.Coprocess || st.Disown:
		return "it runs in the background"
	case st.Negated:
		return "it negates a command (!)"
	case len(st.Redirs) > 0:
		return "it redirects input or output"
	}
	switch c := st.Cmd.(type) {
	case *syntax.BinaryCmd:
		if c.Op != syntax.Pipe {
			return "it chains commands with " + c.Op.String()
		}
		if why := sh.pipeline(src, c.X); why != "" {
			return why
		}
		return sh.pipeline(src, c.Y)
	case *syntax.CallExpr:
		if len(c.Assigns) > 0 {
			return "it assigns a variable"
		}
		words := make([]string, len(c.Args))
		for i, w := range c.Args {
			v, why := plainWord(w)
			if why != "" {
				return why
			}
			words[i] = v
		}
		if len(words) == 0 {
			return "it has no command"
		}
		if strings.ContainsAny(c.Args[0].Lit(), "*?[") || c.Args[0].Lit() == "" {
			return "its command name is quoted or a pattern"
		}
		if indirection[words[0]] {
			return words[0] + " runs or reinterprets other shell code"
		}
		sh.stages = append(sh.stages, words)
		sh.texts = append(sh.texts, source(src, st))
		return ""
	default:
		return "it is a compound command (" + nodeKind(c) + ")"
	}
}

// plainWord returns the value bash gives w when w holds only literal text,
// single quotes and double quotes around literal text, or why it does not:
// any expansion ($x, ${x…}, $(…), `…`, $((…)), <(…), $'…', $"…", {a,b},
// extglobs) can run code or change the words.
func plainWord(w *syntax.Word) (string, string) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.Contains(p.Value, "{") && strings.Contains(p.Value, "}") {
				return "", "it may use brace expansion ({a,b})"
			}
			b.WriteString(unescape(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", "it uses $'…' quoting"
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", `it uses $"…" quoting`
			}
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", "it expands something inside double quotes"
				}
				b.WriteString(l.Value)
			}
		default:
			return "", "it uses an expansion (" + nodeKind(p) + ")"
		}
	}
	return b.String(), ""
}

// unescape removes the backslashes of an unquoted literal as bash does.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// source returns the text of n in src.
func source(src string, n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(src) || start > end {
		return ""
	}
	return strings.TrimSpace(src[start:end])
}

// nodeKind names a node's type for a reason text ("*syntax.CmdSubst" →
// "CmdSubst").
func nodeKind(n any) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", n), "*syntax.")
}
