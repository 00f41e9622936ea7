package tool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
)

// workspace makes a temp workspace holding files (slash path → content) and
// returns its root (symlinks resolved, so expected paths compare equal).
func workspace(t *testing.T, files map[string]string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		write(t, filepath.Join(root, filepath.FromSlash(name)), content)
	}
	return root
}

// write creates path with content, making parent directories.
func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// read returns the content of path.
func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// call executes tool name with the JSON input through a registry of the
// built-ins and checks the result's shape (a tool_result answering the id).
func call(t *testing.T, env *Env, name, input string) llm.Block {
	t.Helper()
	return callWith(t, NewRegistry(Builtins()...), env, name, input)
}

func callWith(t *testing.T, r *Registry, env *Env, name, input string) llm.Block {
	t.Helper()
	b := r.Execute(context.Background(), env, llm.ToolUseBlock("toolu_1", name, json.RawMessage(input)))
	if b.Type != llm.BlockToolResult || b.ID != "toolu_1" {
		t.Fatalf("Execute returned %+v; want a tool_result for toolu_1", b)
	}
	if len(b.Content) == 0 {
		t.Fatalf("Execute returned a tool_result without content")
	}
	return b
}

// text joins the text blocks of a tool_result.
func text(b llm.Block) string {
	var parts []string
	for _, c := range b.Content {
		if c.Type == llm.BlockText {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// ok fails the test unless b succeeded, and returns its text.
func ok(t *testing.T, b llm.Block) string {
	t.Helper()
	if b.IsError {
		t.Fatalf("unexpected is_error result: %s", text(b))
	}
	return text(b)
}

// failed fails the test unless b is an is_error result whose text contains
// every one of want, and returns its text.
func failed(t *testing.T, b llm.Block, want ...string) string {
	t.Helper()
	s := text(b)
	if !b.IsError {
		t.Fatalf("want an is_error result, got success: %s", s)
	}
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("error %q does not contain %q", s, w)
		}
	}
	return s
}

// mustContain fails the test unless s contains every one of want.
func mustContain(t *testing.T, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("output does not contain %q:\n%s", w, s)
		}
	}
}
