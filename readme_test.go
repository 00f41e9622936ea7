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
	goBin := goCommand(t)
	dir, repo := tempModule(t, readmeProgram(t))
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

// goCommand returns the go command's path, skipping the test without one.
func goCommand(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	return goBin
}

// tempModule writes main.go as a module of its own that requires strata,
// replaced by this checkout (go.sum copied from it); it returns the
// module's folder and the checkout's.
func tempModule(t *testing.T, main string) (dir, repo string) {
	t.Helper()
	repo, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	gomod := "module example\n\ngo 1.26\n\nrequire github.com/strata-agent/strata v0.0.0\n\nreplace github.com/strata-agent/strata => " + repo + "\n"
	sum, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"go.mod": gomod, "go.sum": string(sum), "main.go": main} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, repo
}

// customProvider is a program that brings its own llm.Provider.
const customProvider = `package main

import (
	"context"
	"fmt"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/llm"
)

type echo struct{}

func (echo) Name() string { return "echo" }
func (echo) API() llm.API  { return llm.APIAnthropic }
func (echo) Stream(context.Context, *llm.Request, func(llm.Delta)) (*llm.Response, error) {
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("hi")}}, StopReason: llm.StopEndTurn}, nil
}

func main() {
	res, err := strata.Run(context.Background(), strata.Options{Provider: echo{}, Model: "m", NoBuiltins: true}, "hello")
	fmt.Println(res.Message.Text(), err)
}
`

// A program with its own provider links none of the provider SDKs: the
// provider packages register themselves (llm.RegisterClient) and only
// llm/all, which the CLI imports, links them all. (Measured with go build:
// 696 packages and a 129.6 MB binary before, 299 and 28.8 MB after.)
func TestCustomProviderProgramLinksNoProviderSDK(t *testing.T) {
	dir, _ := tempModule(t, customProvider)
	list := exec.Command(goCommand(t), "list", "-mod=mod", "-deps", ".")
	list.Dir = dir
	out, err := list.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, sdk := range []string{"github.com/anthropics/anthropic-sdk-go", "github.com/openai/openai-go", "google.golang.org/genai",
		"github.com/aws/aws-sdk-go-v2/service/bedrockruntime", "github.com/aws/aws-sdk-go-v2/config", "github.com/strata-agent/strata/llm/anthropic"} {
		if strings.Contains(string(out), sdk) {
			t.Errorf("a custom-provider program links %s", sdk)
		}
	}
}
