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
// commit log, pre-change symbol map, and reverse diffs for selected files";
// with no file selected, every changed file's reverse diff.
func TestReviewContextHasSummaryLogSymbolsAndDiffs(t *testing.T) {
	dir := repo(t)
	got, err := Context(context.Background(), dir, "base", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		SummaryHeading + "Branch: main (HEAD ",
		"\nCommits: 2\nChanges: 2 files changed",
		LogHeading, " notes\n", " calc: Add becomes Sum\n",
		SymbolsHeading + "calc.go:\n  f Add(a, b int):3\n",
		DiffHeading + "Reverse diffs of every changed file: from the working tree back to base (a line the change added is marked -, a line it removed +).\n\ndiff --git b/calc.go a/calc.go",
		"-func Sum(xs ...int) int { return 0 }\n+func Add(a, b int) int { return a + b }",
		"-todo: tests\n", // the uncommitted edit is reviewed too (committed: "todo")
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
	got, err := Context(context.Background(), dir, "base", nil, 40)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "[cut: the diff has ") || !strings.Contains(got, "Run `git diff -R base` for the rest.]") {
		t.Errorf("no cut note:\n%s", got)
	}
}

func TestReviewUnknownBase(t *testing.T) {
	dir := repo(t)
	for _, base := range []string{"no-such-branch", "--output=x", ""} {
		if _, err := Context(context.Background(), dir, base, nil, 0); !errors.Is(err, ErrBase) {
			t.Errorf("base %q: err = %v, want ErrBase", base, err)
		}
	}
}

// Selected files: only their reverse diffs; a file the change does not
// touch is an error naming it and the changed ones.
func TestReviewReverseDiffsOfSelectedFiles(t *testing.T) {
	dir := repo(t)
	got, err := Context(context.Background(), dir, "base", []string{"calc.go"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "Reverse diffs of calc.go: from the working tree back to base") ||
		!strings.Contains(got, "-func Sum(xs ...int) int { return 0 }\n+func Add(a, b int) int { return a + b }") ||
		strings.Contains(got, "notes.txt b/notes.txt") || !strings.Contains(got, "Changes: 2 files changed") {
		t.Errorf("selected reverse diff:\n%s", got)
	}
	if _, err := Context(context.Background(), dir, "base", []string{"README.md"}, 0); err == nil ||
		!strings.Contains(err.Error(), `review file "README.md": not changed since base (changed: calc.go, notes.txt)`) {
		t.Errorf("unchanged selected file: %v", err)
	}
}
