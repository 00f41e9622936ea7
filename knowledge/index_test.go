package knowledge

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/tool"
)

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The kiro-cli turn anatomy's layer 2 lists "Indexed knowledge contexts for
// RAG": the bases are indexed in SQLite FTS5, searched with BM25 (kiro's
// "Fast" index type), include/exclude patterns apply as kiro's knowledge
// docs say ("`*.rs` - All Rust files in all directories recursively"), and
// every listed context can be searched by id or name.
func TestBuildSearchAndList(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"docs/retry.md":      "# Retries\nThe client retries failed requests with exponential backoff.\n",
		"docs/deep/cache.md": "# Cache\nResponses are cached for ten minutes.\n",
		"docs/notes.txt":     "retry notes that the include pattern leaves out\n",
		"docs/vendor/x.md":   "retrying vendored code, excluded\n",
		"docs/bin.md":        "retry\x00binary",
		"runbook.md":         "Deploy with make deploy; roll back by retrying the previous release.\n",
	})
	idx, warns, err := Build(t.Context(), []Base{
		{Name: "docs", Description: "product docs", Source: filepath.Join(dir, "docs"), Include: []string{"*.md"}, Exclude: []string{"vendor/**"}},
		{Name: "runbook", Source: filepath.Join(dir, "runbook.md"), IndexType: "best"},
		{Name: "gone", Source: filepath.Join(dir, "missing")},
	}, Options{Env: &tool.Env{Workdir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if len(warns) != 2 || !strings.Contains(warns[0], `"runbook": indexType "best"`) || !strings.Contains(warns[1], `"gone": source`) {
		t.Errorf("warnings: %q", warns)
	}
	cs := idx.Contexts()
	if cs[0].Files != 2 || cs[0].Skipped != 1 || cs[1].Files != 1 || cs[2].Files != 0 {
		t.Errorf("contexts: %+v", cs)
	}
	hits, err := idx.Search(t.Context(), "retries backoff?", "", 10)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, h := range hits {
		paths = append(paths, h.ContextName+":"+h.Path)
	}
	if strings.Join(paths, ",") != "docs:retry.md,runbook:" {
		t.Errorf("hits (porter stems retries/retrying to retri; notes.txt, vendor and binary left out): %q", paths)
	}
	if hits[0].StartLine != 1 || hits[0].EndLine != 2 || !strings.Contains(hits[0].Text, "exponential backoff") {
		t.Errorf("first hit: %+v", hits[0])
	}
	if hits, _ := idx.Search(t.Context(), "cached", cs[0].ID, 10); len(hits) != 1 || hits[0].Path != "deep/cache.md" {
		t.Errorf("search by context id: %+v", hits)
	}
	if hits, _ := idx.Search(t.Context(), "retry", "runbook", 10); len(hits) != 1 || hits[0].ContextID != cs[1].ID {
		t.Errorf("search by context name: %+v", hits)
	}
	if _, err := idx.Search(t.Context(), "retry", "nope", 10); !errors.Is(err, ErrUnknownContext) || !strings.Contains(err.Error(), "docs") {
		t.Errorf("unknown context: %v", err)
	}
	if _, err := idx.Search(t.Context(), `"*) -- !?`, "", 10); err == nil {
		t.Error("a query without words must be an error")
	}
	if hits, err := idx.Search(t.Context(), `NEAR("retry" AND) cache*`, "", 10); err != nil || len(hits) == 0 {
		t.Errorf("FTS5 syntax in a query is searched as words: %v %+v", err, hits)
	}
	l := idx.Listing()
	for _, want := range []string{"knowledge tool", "- docs (context_id " + cs[0].ID + "): product docs; 2 files, 2 chunks, from " + filepath.Join(dir, "docs"),
		"- gone (context_id " + cs[2].ID + "): 0 files"} {
		if !strings.Contains(l, want) {
			t.Errorf("listing lacks %q:\n%s", want, l)
		}
	}
}

// Long files are split into chunks of ChunkLines lines, each a search hit
// with its own line range.
func TestChunksCarryLineRanges(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= ChunkLines+5; i++ {
		if i == ChunkLines+3 {
			b.WriteString("needle here\n")
			continue
		}
		b.WriteString("hay\n")
	}
	write(t, dir, map[string]string{"f.txt": b.String()})
	idx, _, err := Build(t.Context(), []Base{{Name: "f", Source: filepath.Join(dir, "f.txt")}}, Options{Env: &tool.Env{Workdir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	hits, err := idx.Search(t.Context(), "needle", "", 5)
	if err != nil || len(hits) != 1 || hits[0].StartLine != ChunkLines+1 || hits[0].EndLine != ChunkLines+5 {
		t.Errorf("hits %+v %v", hits, err)
	}
	if idx.Contexts()[0].Chunks != 2 {
		t.Errorf("chunks: %+v", idx.Contexts())
	}
}
