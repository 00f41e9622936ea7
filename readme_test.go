package strata_test

import (
	"os"
	"strings"
	"testing"
)

// The README's "Use strata from Go" program is ExampleOpen's code, so it
// compiles and its output is checked (go test runs the example).
func TestREADMEGoSectionIsExampleOpen(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(src), "func ExampleOpen() {\n")
	body, _, ok2 := strings.Cut(rest, "\t// Output:")
	if !ok || !ok2 {
		t.Fatal("example_test.go has no ExampleOpen with an Output comment")
	}
	want := "```go\nfunc main() {\n" + strings.TrimRight(body, "\n") + "\n}\n```"
	if !strings.Contains(string(readme), want) {
		t.Errorf("README.md's Go section is not ExampleOpen's code; want the block\n%s", want)
	}
	if n := strings.Count(strings.TrimSpace(body), "\n") + 1; n > 20 {
		t.Errorf("ExampleOpen has %d lines; the README promises a short program", n)
	}
}
