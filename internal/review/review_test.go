package review

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repo creates a git repository with a base commit (tag "base") and two
// commits after it, plus an uncommitted edit.
func repo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	env := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("init", "-q", "-b", "main")
	write("calc.go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n")
	run("add", ".")
	run("commit", "-q", "-m", "calc: add")
	run("tag", "base")
	write("calc.go", "package calc\n\nfunc Sum(xs ...int) int { return 0 }\n")
	run("commit", "-q", "-am", "calc: Add becomes Sum")
	write("notes.txt", "todo\n")
	run("add", ".")
	run("commit", "-q", "-m", "notes")
	write("notes.txt", "todo: tests\n") // uncommitted
	return dir
}

// The design's review content: "review summary (branch, commits, stats),
// commit log, pre-change symbol map, and … diffs".
func TestReviewContextHasSummaryLogSymbolsAndDiffs(t *testing.T) {
	dir := repo(t)
	got, err := Context(context.Background(), dir, "base", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		SummaryHeading + "Branch: main (HEAD ",
		"\nCommits: 2\nChanges: 2 files changed",
		LogHeading, " notes\n", " calc: Add becomes Sum\n",
		SymbolsHeading + "calc.go:\n  f Add(a, b int):3\n",
		DiffHeading + "diff --git a/calc.go b/calc.go",
		"+func Sum(xs ...int) int { return 0 }",
		"+todo: tests\n", // the uncommitted edit is reviewed too (committed: "todo")
	} {
		if !strings.Contains(got, want) {
			t.Errorf("review context lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, SummaryHeading) > strings.Index(got, LogHeading) || strings.Index(got, LogHeading) > strings.Index(got, DiffHeading) {
		t.Errorf("sections out of order:\n%s", got)
	}
}

func TestReviewCutsLongDiffs(t *testing.T) {
	dir := repo(t)
	got, err := Context(context.Background(), dir, "base", 40)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "[cut: the diff has ") || !strings.Contains(got, "Run `git diff base` for the rest.]") {
		t.Errorf("no cut note:\n%s", got)
	}
}

func TestReviewUnknownBase(t *testing.T) {
	dir := repo(t)
	for _, base := range []string{"no-such-branch", "--output=x", ""} {
		if _, err := Context(context.Background(), dir, base, 0); !errors.Is(err, ErrBase) {
			t.Errorf("base %q: err = %v, want ErrBase", base, err)
		}
	}
}
