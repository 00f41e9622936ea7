package tool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repo is a workspace with nested .gitignore files, a .git directory,
// binary files and a denied file.
func repo(t *testing.T) string {
	return workspace(t, map[string]string{
		".gitignore":          "*.log\nbuild/\n/root-only.txt\n",
		".git/config":         "needle in git\n",
		"main.go":             "package main\n// needle one\nfunc main() {}\n",
		"README.md":           "Needle in readme\n",
		"app.log":             "needle in log\n",
		"root-only.txt":       "needle root-only\n",
		"build/out.go":        "needle in build\n",
		"pkg/util.go":         "package pkg\n\nvar needle = 1\n",
		"pkg/root-only.txt":   "needle kept: /root-only.txt is anchored\n",
		"pkg/.gitignore":      "gen/\n!keep.log\n",
		"pkg/gen/gen.go":      "needle generated\n",
		"pkg/data.bin":        "needle\x00binary\n",
		"pkg/sub/deep.go":     "package sub // needle deep\n",
		"docs/guide.md":       "no match here\n",
		"docs/nested/more.md": "needle nested\n",
	})
}

func TestGrepRespectsGitignoreAndSkipsBinary(t *testing.T) {
	ws := repo(t)
	env := &Env{Workdir: ws}
	got := ok(t, call(t, env, "grep", `{"pattern":"needle"}`))
	want := strings.Join([]string{
		"docs/nested/more.md:1:needle nested",
		"main.go:2:// needle one",
		"pkg/root-only.txt:1:needle kept: /root-only.txt is anchored",
		"pkg/sub/deep.go:1:package sub // needle deep",
		"pkg/util.go:3:var needle = 1",
	}, "\n")
	if got != want {
		t.Errorf("grep:\n%s\nwant:\n%s", got, want)
	}
	got = ok(t, call(t, env, "grep", `{"pattern":"NEEDLE","case_insensitive":true,"include":"*.md"}`))
	if got != "README.md:1:Needle in readme\ndocs/nested/more.md:1:needle nested" {
		t.Errorf("case-insensitive *.md grep:\n%s", got)
	}
	got = ok(t, call(t, env, "grep", `{"pattern":"needle","path":"pkg","include":"sub/**"}`))
	if got != "pkg/sub/deep.go:1:package sub // needle deep" {
		t.Errorf("grep in pkg with include sub/**:\n%s", got)
	}
	got = ok(t, call(t, env, "grep", `{"pattern":"needle","path":"pkg/util.go"}`))
	if got != "pkg/util.go:3:var needle = 1" {
		t.Errorf("grep of one file:\n%s", got)
	}
	// An ignored directory named explicitly is searched.
	got = ok(t, call(t, env, "grep", `{"pattern":"needle","path":"build"}`))
	if got != "build/out.go:1:needle in build" {
		t.Errorf("grep in ignored dir:\n%s", got)
	}
	got = ok(t, call(t, env, "grep", `{"pattern":"absent-string"}`))
	mustContain(t, got, "No matches")
	failed(t, call(t, env, "grep", `{"pattern":"(unclosed"}`), "invalid pattern", "RE2")
	failed(t, call(t, env, "grep", `{"pattern":"x","path":"nope"}`), "does not exist")
}

func TestGrepMaxResultsAndDenied(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&b, "hit %d\n", i)
	}
	ws := workspace(t, map[string]string{"a.txt": b.String(), "secret.env": "hit secret\n"})
	env := &Env{Workdir: ws, ReadPaths: PathPolicy{DeniedPaths: []string{"*.env"}}}
	got := ok(t, call(t, env, "grep", `{"pattern":"hit","max_results":3}`))
	lines := strings.Split(got, "\n")
	if len(lines) != 4 || lines[0] != "a.txt:1:hit 1" || lines[2] != "a.txt:3:hit 3" || !strings.Contains(lines[3], "stopped after 3 matching lines") {
		t.Errorf("max_results 3:\n%s", got)
	}
	got = ok(t, call(t, env, "grep", `{"pattern":"secret"}`))
	mustContain(t, got, "No matches")
	failed(t, call(t, env, "grep", `{"pattern":"secret","path":"secret.env"}`), "deniedPaths")
	r := NewRegistry(&Grep{MaxBytes: 40})
	got = ok(t, callWith(t, r, env, "grep", `{"pattern":"hit"}`))
	mustContain(t, got, "output is capped at 40 bytes")
}

func TestGlob(t *testing.T) {
	ws := repo(t)
	env := &Env{Workdir: ws}
	cases := []struct{ input, want string }{
		{`{"pattern":"*"}`, ".gitignore\nREADME.md\ndocs/\nmain.go\npkg/"},
		{`{"pattern":"**/*.go"}`, "main.go\npkg/sub/deep.go\npkg/util.go"},
		{`{"pattern":"*.go","path":"pkg"}`, "pkg/util.go"},
		{`{"pattern":"**/*.{md,txt}"}`, "README.md\ndocs/guide.md\ndocs/nested/more.md\npkg/root-only.txt"},
		{`{"pattern":"pkg/*"}`, "pkg/.gitignore\npkg/data.bin\npkg/root-only.txt\npkg/sub/\npkg/util.go"},
		{`{"pattern":"./main.go"}`, "main.go"},
		{`{"pattern":"` + filepath.Join(ws, "pkg") + `/**/*.go"}`, "pkg/sub/deep.go\npkg/util.go"},
		{`{"pattern":"**/*.go","max_results":2}`, "main.go\npkg/sub/deep.go\n[glob: 3 paths match; showing the first 2; narrow the pattern or path, or raise max_results]"},
	}
	for _, c := range cases {
		if got := ok(t, call(t, env, "glob", c.input)); got != c.want {
			t.Errorf("glob %s:\n%s\nwant:\n%s", c.input, got, c.want)
		}
	}
	mustContain(t, ok(t, call(t, env, "glob", `{"pattern":"*.rs"}`)), "No paths match")
	failed(t, call(t, env, "glob", `{"pattern":"[unclosed"}`), "invalid pattern")
	failed(t, call(t, env, "glob", `{"pattern":"*","path":"main.go"}`), "not a directory")
	failed(t, call(t, env, "glob", `{"pattern":"*","path":"../"}`), "outside the workspace root")
}

func TestGlobListsSymlinksWithoutFollowing(t *testing.T) {
	outside := workspace(t, map[string]string{"x.go": "package x\n"})
	ws := workspace(t, map[string]string{"a.go": "package a\n"})
	if err := os.Symlink(outside, filepath.Join(ws, "ext")); err != nil {
		t.Fatal(err)
	}
	got := ok(t, call(t, &Env{Workdir: ws}, "glob", `{"pattern":"**"}`))
	if got != "a.go\next" {
		t.Errorf("glob **:\n%s", got)
	}
}
