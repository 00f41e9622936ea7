package strata_test

import (
	"context"
	"errors"
	"github.com/strata-agent/strata/internal/repoctx"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/llm"
)

// repoDir makes a git repository with a .gitignore'd build directory, a Go
// and a Python source, a reminder file and one commit; main.go is then
// edited without committing.
func repoDir(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := workspaceDir(t)
	write := func(rel, s string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".gitignore", "build/\n")
	write("build/out.txt", "generated\n")
	write("lib/shapes.py", "class Circle:\n    def area(self):\n        return 3\n")
	write(repoctx.DefaultReminderFile, "Close every edit block.\n")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write("main.go", "package main\n\nfunc main() { run() }\n\nfunc run() {}\n")
	return dir
}

// userTexts returns the text of every user message of a rendered request.
func userTexts(r *strata.Rendered) []string {
	var out []string
	for _, m := range r.Request.Messages {
		if m.Role == llm.RoleUser {
			out = append(out, m.Text())
		}
	}
	return out
}

// The runtime fills the tiered layout's file tree (the design's flat sorted
// list, .gitignore honoured), symbol map, system reminder, URL context and
// review context.
func TestTieredGetsRepositoryContext(t *testing.T) {
	dir := repoDir(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<title>Style guide</title><p>Use tabs.</p>"))
	}))
	defer srv.Close()
	ws := openWorkspace(t, strata.Options{Dir: dir, Agent: "dev", ProviderName: "anthropic", Layout: "tiered",
		URLs: []string{srv.URL + "/style"}, Review: "HEAD"})
	r, err := ws.Render(context.Background(), strata.RenderOptions{Prompt: "fix it"})
	if err != nil {
		t.Fatal(err)
	}
	texts := userTexts(r)
	all := strings.Join(texts, "\n\x00\n")
	wantTree := "# Repository Files\n\nComplete list of files in the repository:\n\n" + "# File Tree (6 files)\n\n" +
		".gitignore\n.kiro/agents/dev.json\n" + repoctx.DefaultReminderFile + "\nNOTES.md\nlib/shapes.py\nmain.go"
	for _, want := range []string{
		wantTree,
		"# Repository Structure (continued)\n\n" + "lib/shapes.py:\n  c Circle:1\n    m area(self):2\n",
		"# URL Context\n\nThe following content was fetched from URLs mentioned in the conversation:\n\n" + "## Style guide\n" + srv.URL + "/style\n\nUse tabs.",
		"# Code Review Context\n\n" + "## Review Summary\n\nBranch: main",
		"-func main() { run() }", // the design's reverse diff
	} {
		if !strings.Contains(all, want) {
			t.Errorf("request lacks %q; user messages:\n%s", want, all)
		}
	}
	if strings.Contains(all, "build/out.txt") {
		t.Error("the file tree lists a .gitignore'd file")
	}
	if last := texts[len(texts)-1]; last != "fix it\n\nClose every edit block." {
		t.Errorf("current prompt %q, want the prompt + \"\\n\\n\" + the reminder", last)
	}
	if !strings.Contains(r.Request.SystemText(), "# Repository Structure\n\nBelow is a map of the repository showing classes, functions, and their relationships.\nUse this to understand the codebase structure and find relevant code.\n\n"+"Abbreviations: ") {
		t.Errorf("system lacks the symbol-map legend:\n%s", r.Request.SystemText())
	}
	// NOTES.md is a context file (full text in Working Files): its path is
	// in the tree, and main.go's symbols are in the map since it is not.
	if !strings.Contains(all, "main.go:\n  f main():3\n  f run():5\n") {
		t.Errorf("the symbol map does not show main.go as edited:\n%s", all)
	}
}

// Layouts that do not place the repository context send what they sent
// before: no file tree, no reminder, and --url / --review are refused.
func TestOtherLayoutsAreUnchanged(t *testing.T) {
	dir := repoDir(t)
	ws := openWorkspace(t, strata.Options{Dir: dir, Agent: "dev", ProviderName: "anthropic", Layout: "cachefit"})
	r, err := ws.Render(context.Background(), strata.RenderOptions{Prompt: "fix it"})
	if err != nil {
		t.Fatal(err)
	}
	if body := string(r.Body); strings.Contains(body, "lib/shapes.py") || strings.Contains(body, "Close every edit block") {
		t.Errorf("cachefit got repository context:\n%s", body)
	}
	for _, o := range []strata.Options{{URLs: []string{"http://127.0.0.1:1/x"}}, {Review: "HEAD"}} {
		o.Dir, o.Agent, o.ProviderName, o.Layout, o.APIKey, o.Model = dir, "dev", "anthropic", "cachefit", "k", "m"
		_, err := strata.Open(context.Background(), o)
		var ce *strata.ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "use --layout tiered") {
			t.Errorf("Open(%+v) = %v, want a ConfigError naming the layout", o, err)
		}
	}
}

func TestUnknownReviewBaseFailsOpen(t *testing.T) {
	dir := repoDir(t)
	_, err := strata.Open(context.Background(), strata.Options{Dir: dir, Agent: "dev", ProviderName: "anthropic", APIKey: "k",
		Model: "m", Layout: "tiered", Review: "no-such-branch"})
	var ce *strata.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "no-such-branch") {
		t.Errorf("err = %v, want a ConfigError naming the base", err)
	}
}

func TestFileTreeIsCutWithANote(t *testing.T) {
	got := repoctx.FileTree([]string{"a", "b", "c"}, 3, 2)
	if got != "# File Tree (3 files)\n\na\nb\n\n[cut: 1 more files are not listed; the list stops at 2 of 3 files]" {
		t.Errorf("FileTree = %q", got)
	}
}

// Review mode's "reverse diffs for selected files" (docs/tiered.md, rule
// 4): Options.ReviewFiles selects them; a file the change does not touch,
// or files without a base, fail Open with a *ConfigError.
func TestReviewFilesSelectTheReverseDiffs(t *testing.T) {
	dir := repoDir(t)
	ws := openWorkspace(t, strata.Options{Dir: dir, Agent: "dev", ProviderName: "anthropic", Layout: "tiered",
		Review: "HEAD", ReviewFiles: []string{"main.go"}})
	r, err := ws.Render(context.Background(), strata.RenderOptions{Prompt: "review it"})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(userTexts(r), "\n")
	if !strings.Contains(all, "Reverse diffs of main.go: from the working tree back to HEAD") || !strings.Contains(all, "-func main() { run() }") {
		t.Errorf("review context lacks main.go's reverse diff:\n%s", all)
	}
	var ce *strata.ConfigError
	for _, o := range []strata.Options{{Review: "HEAD", ReviewFiles: []string{"NOTES.md"}}, {ReviewFiles: []string{"main.go"}}} {
		o.Dir, o.Agent, o.ProviderName, o.Layout, o.APIKey = dir, "dev", "anthropic", "tiered", "test"
		if _, err := strata.Open(context.Background(), o); !errors.As(err, &ce) {
			t.Errorf("Open(%v %v): %v, want a *ConfigError", o.Review, o.ReviewFiles, err)
		}
	}
}
