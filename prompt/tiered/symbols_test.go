package tiered

import (
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// The design's L0 block: "Symbol map legend — preceded by: # Repository
// Structure / Below is a map of the repository showing classes, functions,
// and their relationships. / Use this to understand the codebase structure
// and find relevant code." Then the legend text.
const designRepoMapHeader = "# Repository Structure\n\n" +
	"Below is a map of the repository showing classes, functions, and their relationships.\n" +
	"Use this to understand the codebase structure and find relevant code.\n\n"

func symbolContext(n int) *prompt.Context {
	c := chat(n)
	c.Files = []prompt.File{{Path: "a.go", Content: "package a\n\nfunc A() {}\n"}}
	c.Symbols = &prompt.SymbolMap{Legend: "Abbreviations: f=function\n", Blocks: []prompt.SymbolBlock{
		{Path: "a.go", Text: "a.go:\n  f A():3\n"},
		{Path: "b.go", Text: "b.go:\n  f B():3\n"},
	}}
	return c
}

// "A File Never Appears Twice": a file whose full content is in the
// context has no symbol block anywhere; the others' blocks are tracked as
// symbol:{path} items and move into tiers under "# Repository Structure
// (continued)".
func TestSymbolMapLegendTiersAndExclusion(t *testing.T) {
	l := fixed()
	var req *llm.Request
	for n := 0; n < 8; n++ {
		var err error
		if req, _, err = l.Assemble(symbolContext(n)); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			// Request 1: every block is active: strata sends them as the
			// uncached main map.
			if !strings.HasPrefix(req.Messages[0].Text(), "# Repository Structure (continued)\n\nb.go:\n  f B():3\n") {
				t.Fatalf("first request's main map: %q", req.Messages[0].Text())
			}
		}
	}
	sys := req.SystemText()
	if !strings.Contains(sys, designRepoMapHeader+"Abbreviations: f=function") {
		t.Errorf("system lacks the design's map header + legend:\n%s", sys)
	}
	var all []string
	for _, m := range req.Messages {
		all = append(all, m.Text())
	}
	joined := sys + strings.Join(all, "\n")
	if strings.Contains(joined, "f A():3") {
		t.Error("a.go's symbol block is sent although its full text is in the context")
	}
	if l.tracker.N("symbol:a.go") != -1 || l.tracker.N("symbol:b.go") != 7 {
		t.Errorf("tracker N: symbol:a.go %d (want untracked), symbol:b.go %d (want 7)", l.tracker.N("symbol:a.go"), l.tracker.N("symbol:b.go"))
	}
	found := false
	for _, m := range req.Messages {
		if strings.HasPrefix(m.Text(), "# Repository Structure (continued)\n\nb.go:\n  f B():3\n") && strings.Contains(m.Text(), "\n\n# Reference Files (L2)") {
			found = true
		}
	}
	if !found {
		t.Errorf("b.go's block is not in the L2 block with a.go's file:\n%s", strings.Join(all, "\n---\n"))
	}
}
