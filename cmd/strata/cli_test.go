package main

import (
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/strata-agent/strata/llm"
)

// `strata --version` and `strata version` print the same line, built from
// the binary's build information as `go version -m` reads it: the main
// module's version, the VCS revision when stamped, the Go version.
func TestVersionFromBuildInfo(t *testing.T) {
	out, err := exec.Command("go", "version", "-m", binary).Output()
	if err != nil {
		t.Fatal(err)
	}
	var modVersion, revision string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "mod" && f[1] == "github.com/strata-agent/strata":
			modVersion = f[2]
		case len(f) >= 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision="):
			revision = strings.TrimPrefix(f[1], "vcs.revision=")
		}
	}
	if modVersion == "" {
		t.Fatalf("go version -m shows no main module:\n%s", out)
	}
	flag, cmd := runCLI(t, t.TempDir(), nil, "--version"), runCLI(t, t.TempDir(), nil, "version")
	if flag.code != 0 || cmd.code != 0 || flag.stdout != cmd.stdout {
		t.Fatalf("--version (exit %d) %q and version (exit %d) %q differ", flag.code, flag.stdout, cmd.code, cmd.stdout)
	}
	want := "strata " + modVersion + " "
	if !strings.HasPrefix(flag.stdout, want) || !strings.Contains(flag.stdout, runtime.Version()) {
		t.Errorf("version line %q; want it to start %q and name %s", flag.stdout, want, runtime.Version())
	}
	if revision != "" && !strings.Contains(flag.stdout, "commit "+revision[:12]) {
		t.Errorf("version line %q lacks the stamped revision %s", flag.stdout, revision)
	}
	if revision == "" && strings.Contains(flag.stdout, "commit") {
		t.Errorf("version line %q names a commit the build did not stamp", flag.stdout)
	}
}

// Usage errors exit 2: an unknown flag names the real command path's --help
// (root, subcommand, nested subcommand); a missing or extra argument quotes
// the usage line; an unknown command lists the valid ones. A command that
// only groups subcommands prints its help.
func TestUsageErrorsNameTheCommand(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args  []string
		code  int
		wants []string
	}{
		{[]string{"--bogus"}, 2, []string{"unknown flag: --bogus", "see 'strata --help'"}},
		{[]string{"run", "--bogus", "hi"}, 2, []string{"see 'strata run --help'"}},
		{[]string{"bench", "cache", "--bogus"}, 2, []string{"see 'strata bench cache --help'"}},
		{[]string{"sessions", "list", "--bogus"}, 2, []string{"see 'strata sessions list --help'"}},
		{[]string{"sessions", "show"}, 2, []string{"usage: strata sessions show ID"}},
		{[]string{"sessions", "branch", "x"}, 2, []string{"usage: strata sessions branch ID --turn N|LOOP:INDEX PROMPT..."}},
		{[]string{"sessions", "resume"}, 2, []string{"usage: strata sessions resume ID [PROMPT...]"}},
		{[]string{"chat", "extra"}, 2, []string{`unknown command "extra" for "strata chat"`, "usage: strata chat"}},
		{[]string{"bench", "cache", "extra"}, 2, []string{"usage: strata bench cache"}},
		{[]string{"run"}, 2, []string{"no prompt", "usage: strata run [flags] PROMPT... | -"}},
		{[]string{"bogus"}, 2, []string{`unknown command "bogus" for "strata"`, "run", "sessions"}},
		{[]string{"rnu", "hi"}, 2, []string{`unknown command "rnu" for "strata"`, `did you mean "run"?`}},
		{[]string{"sessions", "bogus"}, 2, []string{`unknown command "bogus" for "strata sessions"`, "list, resume, show"}},
		{[]string{"sessions"}, 0, nil},
		{[]string{"bench"}, 0, nil},
	} {
		r := runCLI(t, dir, nil, c.args...)
		if r.code != c.code {
			t.Errorf("%v: exit %d, want %d: %s", c.args, r.code, c.code, r.stderr)
		}
		for _, w := range c.wants {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%v: stderr lacks %q: %s", c.args, w, r.stderr)
			}
		}
		if strings.Contains(r.stderr, "strata strata") {
			t.Errorf("%v: hint repeats the program name: %s", c.args, r.stderr)
		}
		if c.code == 0 && !strings.Contains(r.stdout, "Available Commands:") {
			t.Errorf("%v: no help on stdout:\n%s", c.args, r.stdout)
		}
	}
}

// commandPaths lists the path of c and of every available command below it
// ("strata", "strata run", "strata bench cache", …).
func commandPaths(c *cobra.Command) []string {
	paths := []string{c.CommandPath()}
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			paths = append(paths, commandPaths(sub)...)
		}
	}
	return paths
}

// Every command's --help is plain: no "seed 00N" design jargon; the
// commands that assemble requests say the default layout is cachefit and
// why.
func TestHelpTexts(t *testing.T) {
	jargon := regexp.MustCompile(`(?i)seed[ -]?0\d\d`)
	layoutCmds := map[string]bool{"strata run": true, "strata chat": true, "strata render": true, "strata acp": true,
		"strata replay": true, "strata sessions resume": true, "strata sessions branch": true}
	paths := commandPaths(newRoot())
	if len(paths) < 15 {
		t.Fatalf("only %d commands: %v", len(paths), paths)
	}
	for _, p := range paths {
		args := append(strings.Fields(p)[1:], "--help")
		r := runCLI(t, t.TempDir(), nil, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "Usage:") {
			t.Errorf("%s --help: exit %d\n%s%s", p, r.code, r.stdout, r.stderr)
		}
		if m := jargon.FindString(r.stdout); m != "" {
			t.Errorf("%s --help says %q", p, m)
		}
		if layoutCmds[p] && (!strings.Contains(r.stdout, `(default "cachefit")`) || !strings.Contains(r.stdout, "cheapest")) {
			t.Errorf("%s --help does not say the layout defaults to cachefit, the cheapest:\n%s", p, r.stdout)
		}
		delete(layoutCmds, p)
	}
	if len(layoutCmds) > 0 {
		t.Errorf("commands not found: %v", layoutCmds)
	}
}

// Without --layout, render, run and chat use cachefit (the session records
// the layout it ran with); an explicit --layout still wins.
func TestDefaultLayoutIsCachefit(t *testing.T) {
	ws, streams := t.TempDir(), t.TempDir()
	env := []string{"STRATA_DATA_DIR=" + t.TempDir()}
	for layout, args := range map[string][]string{
		"cachefit": {"render", "--explain", "hi"},
		"flat":     {"render", "--explain", "--layout", "flat", "hi"},
	} {
		if r := runCLI(t, ws, env, args...); r.code != 0 || !strings.Contains(r.stdout, "layout "+layout+" ·") {
			t.Errorf("%v: exit %d, want layout %s:\n%s%s", args, r.code, layout, r.stdout, r.stderr)
		}
	}
	u := llm.Usage{Input: 5, Output: 1}
	for i, args := range [][]string{{"run", "hi"}, {"chat"}, {"run", "--layout", "tiered", "hi"}} {
		end := writeStream(t, streams, string(rune('a'+i))+".sse", u, llm.StopEndTurn, llm.TextBlock("ok"))
		r := runCLIInput(t, ws, env, strings.NewReader("hi\n"), append(args, "--replay", end)...)
		m := sessionLine.FindStringSubmatch(r.stderr)
		if r.code != 0 || m == nil {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		want := "layout cachefit"
		if i == 2 {
			want = "layout tiered"
		}
		if show := runCLI(t, ws, env, "sessions", "show", m[1]); !strings.Contains(show.stdout, want) {
			t.Errorf("%v: session %s does not record %q:\n%s", args, m[1], want, show.stdout)
		}
	}
}
