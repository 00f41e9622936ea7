package strays

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Run(m)) }

// untracked sees a new file in the directory or its testdata/, not in a
// subpackage's directory or an ignored one; added keeps only the new ones.
func TestUntrackedInTheDirectory(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on PATH")
	}
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	t.Chdir(dir)
	write := func(name string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(name), 0o755)
		if err := os.WriteFile(name, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".gitignore")
	write("old")
	before, ok := untracked()
	if !ok || !slices.Equal(before, []string{".gitignore", "old"}) {
		t.Fatalf("untracked = %q, %v; want [.gitignore old], true", before, ok)
	}
	os.WriteFile(".gitignore", []byte("/ignored\n"), 0o644)
	for _, f := range []string{"mcp-ran", "testdata/golden.new", "sub/pkg.go", "ignored"} {
		write(f)
	}
	after, ok := untracked()
	if got, want := added(before, after), []string{"mcp-ran", "testdata/golden.new"}; !ok || !slices.Equal(got, want) {
		t.Errorf("added = %q (ok %v); want %q", got, ok, want)
	}

	t.Chdir(t.TempDir()) // not a checkout
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	if files, ok := untracked(); ok {
		t.Errorf("outside a checkout untracked = %q, true; want ok false", files)
	}
}
