package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
)

// userPrompts returns the text of the user messages a `--format json` run
// printed.
func userPrompts(t *testing.T, stdout string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var ev struct {
			Kind    string
			Message *llm.Message
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("stdout line is not JSON: %q", line)
		}
		if ev.Kind == "message_end" && ev.Message != nil && ev.Message.Role == llm.RoleUser {
			out = append(out, ev.Message.Text())
		}
	}
	return out
}

// The prompt of run and render comes from standard input with '-', or
// when there are no arguments and stdin is not a terminal; an empty one is a
// usage error quoting the usage line.
func TestPromptFromStdin(t *testing.T) {
	ws, streams := t.TempDir(), t.TempDir()
	end := writeStream(t, streams, "end.sse", llm.Usage{Input: 5, Output: 1}, llm.StopEndTurn, llm.TextBlock("ok"))
	const piped = "explain the failing test\nin two lines"
	for _, args := range [][]string{
		{"run", "--replay", end, "--format", "json"},
		{"run", "--replay", end, "--format", "json", "-"},
	} {
		r := runCLIInput(t, ws, nil, strings.NewReader(piped+"\n"), args...)
		if got := userPrompts(t, r.stdout); r.code != 0 || len(got) != 1 || got[0] != piped {
			t.Errorf("%v: exit %d, user messages %q, want [%q]\n%s", args, r.code, got, piped, r.stderr)
		}
	}
	r := runCLIInput(t, ws, nil, strings.NewReader(piped), "render", "-")
	if r.code != 0 || !strings.Contains(r.stdout, `explain the failing test\nin two lines`) {
		t.Errorf("render -: exit %d\n%.300s\n%s", r.code, r.stdout, r.stderr)
	}
	// Arguments win over stdin: the piped text is not read.
	r = runCLIInput(t, ws, nil, strings.NewReader("not this"), "run", "--replay", end, "--format", "json", "from", "args")
	if got := userPrompts(t, r.stdout); r.code != 0 || len(got) != 1 || got[0] != "from args" {
		t.Errorf("run with arguments and a pipe: exit %d, user messages %q", r.code, got)
	}
	for _, args := range [][]string{{"run"}, {"run", "-"}, {"render"}} {
		r := runCLIInput(t, ws, nil, strings.NewReader(" \n"), args...)
		if r.code != 2 || !strings.Contains(r.stderr, "standard input was empty") || !strings.Contains(r.stderr, "usage: strata "+args[0]) {
			t.Errorf("%v with empty stdin: exit %d, stderr %s", args, r.code, r.stderr)
		}
	}
}

// -c/--continue on run and chat continues the most recent session recorded
// in the current directory, not one of another directory; with no session
// here, or together with --session, it is a usage error.
func TestContinueLastSessionHere(t *testing.T) {
	a, b, empty, streams := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	env := []string{"STRATA_DATA_DIR=" + t.TempDir()}
	u := llm.Usage{Input: 5, Output: 1}
	reply := func(name string) string {
		return writeStream(t, streams, name, u, llm.StopEndTurn, llm.TextBlock("answer "+name))
	}
	sessionOf := func(r result) string {
		t.Helper()
		m := sessionLine.FindStringSubmatch(r.stderr)
		if r.code != 0 || m == nil {
			t.Fatalf("exit %d, no session line: %s", r.code, r.stderr)
		}
		return m[1]
	}
	inA := sessionOf(runCLI(t, a, env, "run", "--replay", reply("a1.sse"), "first in a"))
	inB := sessionOf(runCLI(t, b, env, "run", "--replay", reply("b1.sse"), "first in b"))
	if inA == inB {
		t.Fatal("two directories share a session")
	}
	if got := sessionOf(runCLI(t, a, env, "run", "-c", "--replay", reply("a2.sse"), "second in a")); got != inA {
		t.Errorf("run -c in a continued %s, want %s", got, inA)
	}
	r := runCLIInput(t, a, env, strings.NewReader("third in a\n"), "chat", "--continue", "--replay", reply("a3.sse"), "--format", "json")
	if got := sessionOf(r); got != inA {
		t.Errorf("chat --continue in a continued %s, want %s", got, inA)
	}
	r = runCLI(t, a, env, "sessions", "show", inA)
	for _, w := range []string{"first in a", "second in a", "third in a"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("session %s lacks the prompt %q:\n%s", inA, w, r.stdout)
		}
	}
	if got := sessionOf(runCLI(t, b, env, "run", "-c", "--replay", reply("b2.sse"), "second in b")); got != inB {
		t.Errorf("run -c in b continued %s, want %s", got, inB)
	}
	// A newer session in a is the one -c continues from now on.
	newer := sessionOf(runCLI(t, a, env, "run", "--replay", reply("a4.sse"), "new topic in a"))
	if got := sessionOf(runCLI(t, a, env, "run", "-c", "--replay", reply("a5.sse"), "more")); newer == inA || got != newer {
		t.Errorf("run -c after a new session in a continued %s, want the newer %s (older %s)", got, newer, inA)
	}
	for _, c := range []struct {
		dir  string
		args []string
		want string
	}{
		{empty, []string{"run", "-c", "hi"}, "no session was recorded in " + empty},
		{empty, []string{"chat", "-c"}, "no session was recorded in " + empty},
		{a, []string{"run", "-c", "--session", inB, "hi"}, "--continue and --session"},
	} {
		r := runCLI(t, c.dir, env, c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 with %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// `sessions list --format json` prints every session as JSON; --here and
// --cwd DIR keep those whose working directory is the current one or DIR.
func TestSessionsListJSONAndDirectoryFilter(t *testing.T) {
	parent, streams := t.TempDir(), t.TempDir()
	a, b := filepath.Join(parent, "a"), filepath.Join(parent, "b")
	for _, d := range []string{a, b} {
		if err := mkdir(d); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"STRATA_DATA_DIR=" + t.TempDir()}
	u := llm.Usage{Input: 7, Output: 3, CacheRead: 11}
	for i, dir := range []string{a, a, b} {
		s := writeStream(t, streams, filepath.Base(dir)+string(rune('0'+i))+".sse", u, llm.StopEndTurn, llm.TextBlock("ok"))
		if r := runCLI(t, dir, env, "run", "--replay", s, "prompt "+string(rune('0'+i))); r.code != 0 {
			t.Fatalf("run: exit %d: %s", r.code, r.stderr)
		}
	}
	list := func(dir string, args ...string) []sessionJSON {
		t.Helper()
		r := runCLI(t, dir, env, append([]string{"sessions", "list", "--format", "json"}, args...)...)
		var out []sessionJSON
		if err := json.Unmarshal([]byte(r.stdout), &out); r.code != 0 || err != nil {
			t.Fatalf("sessions list %v: exit %d, %v\n%s%s", args, r.code, err, r.stdout, r.stderr)
		}
		return out
	}
	all := list(parent)
	if len(all) != 3 || all[0].Title != "prompt 2" || all[0].Cwd != b || all[0].Turns != 1 || all[0].Usage.CacheRead != 11 ||
		all[0].CreatedAt.IsZero() || all[0].UpdatedAt.Before(all[2].UpdatedAt) {
		t.Errorf("all sessions, newest first: %+v", all)
	}
	for _, c := range []struct {
		dir  string
		args []string
		cwd  string
		n    int
	}{
		{a, []string{"--here"}, a, 2},
		{b, []string{"--here"}, b, 1},
		{a, []string{"--cwd", b}, b, 1},
		{parent, []string{"--cwd", "a"}, a, 2}, // relative to the current directory
		{parent, []string{"--here"}, "", 0},
	} {
		got := list(c.dir, c.args...)
		if len(got) != c.n {
			t.Errorf("%v in %s: %d sessions, want %d", c.args, c.dir, len(got), c.n)
		}
		for _, s := range got {
			if s.Cwd != c.cwd {
				t.Errorf("%v in %s: session of %s", c.args, c.dir, s.Cwd)
			}
		}
	}
	if r := runCLI(t, a, env, "sessions", "list", "--here"); r.code != 0 || strings.Count(r.stdout, "\n") != 3 {
		t.Errorf("table --here: want a header and 2 rows:\n%s", r.stdout)
	}
	for _, args := range [][]string{{"--format", "xml"}, {"--here", "--cwd", a}} {
		if r := runCLI(t, a, env, append([]string{"sessions", "list"}, args...)...); r.code != 2 {
			t.Errorf("sessions list %v: exit %d, want 2", args, r.code)
		}
	}
}

func mkdir(d string) error { return os.MkdirAll(d, 0o755) }
