package strata_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata"
)

// The tiered-assembly design's system prompt: "Two files concatenated
// with \n\n: 1. Main prompt (system.md) … 2. Extra prompt
// (system_extra.md, optional)", and "edits to either file take effect on
// the next LLM request without restart". Without system.md the agent's
// prompt is the main prompt.
func TestTieredSystemPromptFromFilesReadEveryRequest(t *testing.T) {
	dir := workspaceDir(t)
	ws := openWorkspace(t, strata.Options{Dir: dir, Agent: "dev", ProviderName: "anthropic", Layout: "tiered"})
	system := func() string {
		t.Helper()
		r, err := ws.Render(context.Background(), strata.RenderOptions{Prompt: "hi"})
		if err != nil {
			t.Fatal(err)
		}
		s := r.Request.SystemText()
		if i := strings.Index(s, "\n\n# Repository Structure\n\n"); i >= 0 {
			s = s[:i] // L0 goes on with the symbol map
		}
		return s
	}
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, ".strata", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := system(); got != "You are a careful developer." {
		t.Errorf("no files: system %q, want the agent's prompt", got)
	}
	write("system_extra.md", "Project rule: run make test.\n")
	if got := system(); got != "You are a careful developer.\n\nProject rule: run make test." {
		t.Errorf("extra only: system %q", got)
	}
	write("system.md", "You are an expert coding agent.\n")
	if got := system(); got != "You are an expert coding agent.\n\nProject rule: run make test." {
		t.Errorf("both files: system %q", got)
	}
	write("system_extra.md", "Project rule: run go test ./....\n")
	if got := system(); got != "You are an expert coding agent.\n\nProject rule: run go test ./...." {
		t.Errorf("after editing system_extra.md: system %q (the files must be read on every request)", got)
	}
}

// A repository's .strata/system.md symlinked out of the workspace (to the
// user's credentials) never reaches the system prompt: the tiered layout's
// system files pass the workspace sandbox like every other file read into
// context (they were read with os.ReadFile), and the refusal is reported.
func TestAttackSystemFileSymlinkedOutOfTheWorkspace(t *testing.T) {
	dir := workspaceDir(t)
	secret := filepath.Join(t.TempDir(), "credentials")
	if err := os.WriteFile(secret, []byte("aws_secret_access_key = TOPSECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".strata"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"system.md", "system_extra.md"} {
		if err := os.Symlink(secret, filepath.Join(dir, ".strata", name)); err != nil {
			t.Fatal(err)
		}
	}
	ws := openWorkspace(t, strata.Options{Dir: dir, Agent: "dev", ProviderName: "anthropic", Layout: "tiered"})
	r, err := ws.Render(context.Background(), strata.RenderOptions{Prompt: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if body := string(r.Body); strings.Contains(body, "TOPSECRET") || !strings.Contains(r.Request.SystemText(), "You are a careful developer.") {
		t.Errorf("the system prompt read through the symlink or lost the agent's prompt:\n%s", r.Request.SystemText())
	}
}
