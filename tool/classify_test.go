package tool

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Issue 23, break 3: with allowedCommands ["echo .*"], this command was
// pre-approved and ran touch: ${x=…} assigns a $'…' string holding "$(touch
// marker)" with its "$" and parentheses as escapes, and ${x@P} expands it
// as a prompt string, which performs command substitution. The text has no
// "$(", backtick or parenthesis, so splitting text saw one echo. The test
// first shows bash really runs touch, then that the command is no longer
// pre-approved (kiro's "$" rule and the parser both refuse it).
func TestAttackExpansionBypassesAllowedCommands(t *testing.T) {
	const cmd = `echo ${x=$'\x24\x28touch marker\x29'} ${x@P}`
	dir := t.TempDir()
	run := exec.Command("bash", "-c", cmd)
	run.Dir = dir
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("bash: %v: %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "marker")); err != nil {
		t.Fatalf("bash did not run the hidden touch (%v): the reproduction no longer shows the attack", err)
	}
	env := &Env{Workdir: dir, AllowedCommands: []string{"echo .*"}}
	if CommandPreApproved(env, cmd) {
		t.Errorf("%q pre-approved by allowedCommands [echo .*]", cmd)
	}
	for _, c := range []string{
		cmd,
		`echo ${x@P}`, `echo ${x/a/b}`, `echo ${!x}`, `echo $x`, `echo "$x"`, `echo $'\x41'`, `echo $"x"`,
		`echo $((1+1))`, `echo <(ls)`, `echo a > f`, `echo a < f`, `x=1 echo a`, `echo {a,b}`, `echo @(a|b)`,
		`eval echo a`, `source f`, `. f`, `exec echo a`, `command echo a`, `builtin echo a`, `echo a &`,
		`! echo a`, `(echo a)`, `{ echo a; }`, `echo a; echo b`, `if echo a; then echo b; fi`, `cat <<EOF` + "\nx\nEOF",
		`echo a |& echo b`, `time echo a`, `echo a && echo b`, `f() { echo a; }`, `[[ -n a ]]`, `((x=1))`,
	} {
		if CommandPreApproved(&Env{AllowedCommands: []string{".*"}, AutoAllowReadonly: true}, c) {
			t.Errorf("%q pre-approved by allowedCommands [.*]", c)
		}
	}
	for _, c := range []string{"grep -iP x f", "grep --perl x f", "grep --pe x f", "cat f | grep -rnP x"} {
		if CommandPreApproved(&Env{AutoAllowReadonly: true}, c) {
			t.Errorf("%q pre-approved as read-only", c)
		}
	}
	for _, c := range []string{`echo a b`, `echo 'a b' "c d"`, `ls -la | grep x | head -n 5`, `echo a\ b`} {
		if !CommandPreApproved(&Env{AllowedCommands: []string{".*"}}, c) {
			t.Errorf("%q not pre-approved by allowedCommands [.*]", c)
		}
	}
}

// traceMark starts every xtrace line of a traced run (bash's default PS4:
// bash ignores PS4 from the environment when run as root); bash repeats
// its first byte once per nesting level (a subshell, a substitution).
const traceMark = "+ "

// fuzzAllowed is the allow list FuzzCommandClassification checks against.
var fuzzAllowed = []string{"echo .*", "cat [a-z.]+", "printf .*"}

// FuzzCommandClassification checks the classifier against bash itself:
// whenever CommandPreApproved allows a command (allowedCommands
// fuzzAllowed, autoAllowReadonly on), bash -n accepts it, and a traced run
// in a sandbox directory — PATH holding only logging shims of kiro's
// read-only commands, xtrace on — runs only commands that match the allow
// list or are read-only, and nothing nested (no substitution or subshell
// ran). docs/security.md, "Command classification".
func FuzzCommandClassification(f *testing.F) {
	for _, s := range []string{
		`echo ${x=$'\x24\x28touch marker\x29'} ${x@P}`, "echo hi", "ls -la | grep x | head -n 5", "cat file.txt",
		"echo 'a b' \"c\"", "echo a\\ b", "find . -name '*.go'", "grep -r x .", "echo a | cat b", "printf %s x",
		"echo $(touch x)", "echo `touch x`", "echo a; touch x", "echo {a,b}", "cat <(touch x)", "echo a > x",
		"x=1 echo a", "eval touch x", "which ls", "echo ~", "echo a # b", "echo 'a\nb'", "pwd", "echo \x00",
	} {
		f.Add(s)
	}
	if _, err := exec.LookPath("bash"); err != nil {
		f.Skip("bash is not installed")
	}
	shims := f.TempDir()
	log := filepath.Join(shims, "calls.log")
	for name := range kiroReadonly {
		script := "#!/bin/sh\nprintf '%s\\n' \"" + name + "\" >> '" + log + "'\n"
		if err := os.WriteFile(filepath.Join(shims, name), []byte(script), 0o755); err != nil {
			f.Fatal(err)
		}
	}
	env := &Env{AllowedCommands: fuzzAllowed, AutoAllowReadonly: true}
	var allowRes []*regexp.Regexp
	for _, p := range fuzzAllowed {
		allowRes = append(allowRes, regexp.MustCompile(`\A(?:`+p+`)\z`))
	}
	f.Fuzz(func(t *testing.T, command string) {
		if len(command) > 300 || !CommandPreApproved(env, command) {
			return
		}
		sh := parseShell(command)
		if out, err := exec.Command("bash", "-n", "-c", command).CombinedOutput(); err != nil {
			t.Fatalf("%q pre-approved but bash -n refuses it: %v: %s", command, err, out)
		}
		names := map[string]bool{}
		for _, words := range sh.stages {
			names[words[0]] = true
		}
		os.Remove(log)
		dir := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		run := exec.CommandContext(ctx, "/bin/bash", "--norc", "--noprofile", "-x", "-c", command)
		run.Dir = dir
		run.Env = []string{"PATH=" + shims, "HOME=" + dir}
		run.Stdin = strings.NewReader("")
		var trace strings.Builder
		run.Stderr = &trace // xtrace; stdout is the command's own
		_ = run.Run()
		for _, line := range strings.Split(trace.String(), "\n") {
			if strings.HasPrefix(line, traceMark[:1]+traceMark[:1]) {
				t.Fatalf("%q pre-approved but bash ran something nested: %q", command, line)
			}
			rest, ok := strings.CutPrefix(line, traceMark)
			if !ok {
				continue
			}
			if !ranName(rest, names) {
				t.Fatalf("%q pre-approved but bash ran %q, not one of its commands %v", command, rest, names)
			}
			if name, _, _ := strings.Cut(rest, " "); !kiroReadonly[name] && !matchesAll(allowRes, rest, nil) {
				t.Fatalf("%q pre-approved but bash ran %q, which neither is read-only nor matches %q", command, rest, fuzzAllowed)
			}
		}
		calls, _ := os.ReadFile(log)
		for _, name := range strings.Fields(string(calls)) {
			if !names[name] {
				t.Fatalf("%q pre-approved but ran the program %q", command, name)
			}
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) > 0 {
			t.Fatalf("%q pre-approved but created %s in its directory", command, entries[0].Name())
		}
	})
}

// ranName reports whether a traced command line starts with one of names
// (bash quotes a name with special characters, so a plain name prints as is).
func ranName(line string, names map[string]bool) bool {
	name, _, _ := strings.Cut(line, " ")
	return names[name]
}
