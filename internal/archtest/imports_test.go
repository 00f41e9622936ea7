package archtest

import (
	"bytes"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is strata's module path; packages are named relative to it.
const module = "github.com/strata-agent/strata"

// rule forbids the packages From (each with its subpackages) to depend,
// directly or through other module packages, on the packages Forbid (each
// with its subpackages). Paths are relative to the module; a From of ""
// means every package of the module, and Except exempts packages (with
// their subpackages) from the rule. Only non-test imports count: tests may
// reach across layers (a loop test in mcp uses agent).
type rule struct {
	Name   string
	From   []string
	Except []string
	Forbid []string
}

// rules is the layering strata keeps. Add a row to add a rule.
var rules = []rule{
	{Name: "the neutral llm types know nothing of layouts, the loop or agent configs",
		From: []string{"llm"}, Forbid: []string{"prompt", "agent", "config"}},
	{Name: "layouts do not depend on the loop",
		From: []string{"prompt"}, Forbid: []string{"agent"}},
	{Name: "tools, agent configs, the cache simulator and events sit below the loop",
		From: []string{"tool", "config", "cachesim", "event"}, Forbid: []string{"agent"}},
	{Name: "the loop does not know how sessions are stored (session subscribes to events)",
		From: []string{"agent"}, Forbid: []string{"session"}},
	{Name: "only commands import commands",
		From: []string{""}, Except: []string{"cmd"}, Forbid: []string{"cmd"}},
	{Name: "the MCP manager takes its own ServerConfig, not the agent-config format",
		From: []string{"mcp"}, Forbid: []string{"config"}},
	{Name: "the runtime composes the packages below it; none of them imports it",
		From:   []string{"agent", "prompt", "llm", "session", "tool", "config", "mcp", "event", "hooks", "compact", "token", "cachesim", "trajectory", "knowledge"},
		Forbid: []string{"."}},
}

// under reports whether pkg (module-relative) is p or a subpackage of p;
// every package is under "", and "." is the module root package (the
// runtime) alone.
func under(pkg, p string) bool {
	if p == "." {
		return pkg == "." || strings.HasPrefix(pkg, "./") // "./x": a synthetic sub-path in TestEachRuleCanFail
	}
	return p == "" || pkg == p || strings.HasPrefix(pkg, p+"/")
}

func underAny(pkg string, ps []string) bool {
	return slices.ContainsFunc(ps, func(p string) bool { return under(pkg, p) })
}

// violations checks rules against graph, which maps each module package
// (module-relative path) to the module packages it imports directly. Each
// message names the rule and the shortest import chain from the offending
// package to the forbidden one; messages are sorted.
func violations(graph map[string][]string, rules []rule) []string {
	pkgs := make([]string, 0, len(graph))
	for p := range graph {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	var out []string
	for _, r := range rules {
		for _, p := range pkgs {
			if !underAny(p, r.From) || underAny(p, r.Except) {
				continue
			}
			// Breadth-first from p: the first forbidden package reached by
			// each path is reported once, with the chain that reached it.
			prev := map[string]string{p: ""}
			queue := []string{p}
			for len(queue) > 0 {
				cur := queue[0]
				queue = queue[1:]
				for _, next := range graph[cur] {
					if _, seen := prev[next]; seen {
						continue
					}
					prev[next] = cur
					if underAny(next, r.Forbid) {
						out = append(out, fmt.Sprintf("%s imports %s (rule %q): %s", p, next, r.Name, chain(prev, next)))
						continue
					}
					queue = append(queue, next)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// chain is the import path from the search's root to pkg, "a → b → c".
func chain(prev map[string]string, pkg string) string {
	var c []string
	for p := pkg; p != ""; p = prev[p] {
		c = append(c, p)
	}
	slices.Reverse(c)
	return strings.Join(c, " → ")
}

// moduleGraph lists every package of the module with its direct imports
// inside the module, with one `go list -deps` call.
func moduleGraph(t *testing.T) map[string][]string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the import rules need the go command on PATH: %v", err)
	}
	cmd := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	graph := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		pkg, ok := rel(f[0])
		if !ok {
			continue
		}
		graph[pkg] = []string{}
		for _, imp := range f[1:] {
			if r, ok := rel(imp); ok {
				graph[pkg] = append(graph[pkg], r)
			}
		}
	}
	return graph
}

// rel returns a module package's path relative to the module.
func rel(importPath string) (string, bool) {
	if importPath == module {
		return ".", true // the runtime (module root package)
	}
	r, ok := strings.CutPrefix(importPath, module+"/")
	return r, ok
}

// The module's packages keep every import rule.
func TestImportRules(t *testing.T) {
	graph := moduleGraph(t)
	for _, want := range []string{"llm", "prompt", "agent", "mcp", "config", "cmd/strata"} {
		if _, ok := graph[want]; !ok {
			t.Fatalf("go list did not report package %s; the graph has %d packages", want, len(graph))
		}
	}
	for _, v := range violations(graph, rules) {
		t.Error(v)
	}
}

// Every rule reports a synthetic violation, direct and through another
// package, into a subpackage of each forbidden package, naming the chain;
// an excepted package and an allowed import are not reported.
func TestEachRuleCanFail(t *testing.T) {
	for _, r := range rules {
		t.Run(r.Name, func(t *testing.T) {
			for _, from := range r.From {
				if from == "" {
					from = "zz/any"
				}
				from += "/sub"
				for _, f := range r.Forbid {
					bad := f + "/x"
					direct := map[string][]string{from: {"fine", bad}, "fine": {}, bad: {}}
					want := fmt.Sprintf("%s imports %s (rule %q): %s → %s", from, bad, r.Name, from, bad)
					if got := violations(direct, []rule{r}); !slices.Contains(got, want) {
						t.Errorf("direct import: got %q; want %q among them", got, want)
					}
					via := map[string][]string{from: {"zz/mid"}, "zz/mid": {bad}, bad: {}}
					want = fmt.Sprintf("%s imports %s (rule %q): %s → zz/mid → %s", from, bad, r.Name, from, bad)
					if got := violations(via, []rule{r}); !slices.Contains(got, want) {
						t.Errorf("import through zz/mid: got %q; want %q among them", got, want)
					}
				}
				clean := map[string][]string{from: {"zz/ok"}, "zz/ok": {}}
				if got := violations(clean, []rule{r}); len(got) != 0 {
					t.Errorf("allowed imports reported: %q", got)
				}
			}
			for _, e := range r.Except {
				exempt := map[string][]string{e + "/y": {r.Forbid[0]}, r.Forbid[0]: {}}
				if got := violations(exempt, []rule{r}); len(got) != 0 {
					t.Errorf("excepted package %s/y reported: %q", e, got)
				}
			}
		})
	}
}
