package strata_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmeProgram returns the README's "Use strata from Go" program: the
// ```go block that starts with package main.
func readmeProgram(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "```go\npackage main\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("README.md has no ```go block starting with package main")
	}
	return "package main\n" + block
}

// The README's program is ExampleOpen's code in a main package, so go test
// checks what it prints.
func TestREADMEGoSectionIsExampleOpen(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(src), "func ExampleOpen() {\n")
	body, _, ok2 := strings.Cut(rest, "\t// Output:")
	if !ok || !ok2 {
		t.Fatal("example_test.go has no ExampleOpen with an Output comment")
	}
	want := "func main() {\n" + strings.TrimRight(body, "\n") + "\n}\n"
	if prog := readmeProgram(t); !strings.HasSuffix(prog, want) {
		t.Errorf("README.md's Go program is not ExampleOpen's code; want its main to be\n%s", want)
	}
	if n := strings.Count(strings.TrimSpace(body), "\n") + 1; n > 22 {
		t.Errorf("ExampleOpen has %d lines; the README promises a short program", n)
	}
}

// The README's program builds as a module of its own (a newcomer's first
// program: its go.mod requires strata, here replaced by this checkout) and
// prints the scripted answer when run from the repository.
func TestREADMEProgramBuildsStandalone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program with the whole runtime; skipped with -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	repo, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module readmeexample\n\ngo 1.26\n\nrequire github.com/strata-agent/strata v0.0.0\n\nreplace github.com/strata-agent/strata => " + repo + "\n"
	sum, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"go.mod": gomod, "go.sum": string(sum), "main.go": readmeProgram(t)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "readme-example")
	build := exec.Command(goBin, "build", "-mod=mod", "-o", bin, ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the README's program does not build on its own: %v\n%s", err, out)
	}
	run := exec.Command(bin)
	run.Dir = repo // its Options.Dir is testdata/project
	out, err := run.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "The checklist is in RELEASE.md: tag, then publish." {
		t.Fatalf("the README's program printed %q (%v); want the scripted answer", out, err)
	}
}
