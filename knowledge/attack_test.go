package knowledge

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-agent/strata/tool"
)

// Hostile sources do not hang or exhaust indexing (issue 23, item 5): a
// FIFO as a source and inside a base is skipped with a note (it used to
// hang agent load), a 3 GB sparse file is skipped on its size before any
// byte is read (it used to be read whole: past 60 s), and a file of the
// maximum size is still indexed.
func TestAttackKnowledgeHostileSources(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"docs/ok.md": "walrus facts\n"})
	for _, f := range []string{"pipe", "docs/pipe.md"} {
		if err := syscall.Mkfifo(filepath.Join(dir, f), 0o644); err != nil {
			t.Skipf("no FIFOs here: %v", err)
		}
	}
	big, err := os.Create(filepath.Join(dir, "docs", "huge.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(3 << 30); err != nil {
		t.Skipf("no sparse 3 GB file here: %v", err)
	}
	big.Close()
	write(t, dir, map[string]string{"docs/max.md": "walrus " + strings.Repeat("x", MaxFileBytes-8) + "\n"})
	var progress []string
	done := make(chan struct{})
	var idx *Index
	var warns []string
	go func() {
		defer close(done)
		idx, warns, err = Build(t.Context(), []Base{{Name: "fifo", Source: filepath.Join(dir, "pipe")}, {Name: "docs", Source: filepath.Join(dir, "docs")}},
			Options{Env: &tool.Env{Workdir: dir}, Progress: func(m string) { progress = append(progress, m) }})
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Build hangs on a FIFO or a huge file") // the old code: open(2) of a FIFO without a writer never returns
	}
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	cs := idx.Contexts()
	if cs[0].Files != 0 || cs[0].Skipped != 1 || cs[1].Files != 2 || cs[1].Skipped != 2 {
		t.Errorf("contexts: %+v", cs)
	}
	w := strings.Join(warns, "\n")
	for _, want := range []string{"not a regular file", "over the limit of 1048576"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
	}
	if len(progress) != 2 || !strings.Contains(progress[1], `"docs": 2 files indexed, 2 skipped`) {
		t.Errorf("progress: %q", progress)
	}
}

// Indexing stops at Options.Timeout, keeps what it indexed and says so.
func TestKnowledgeIndexingIsTimeBound(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"a.md": "one\n", "b.md": "two\n"})
	idx, warns, err := Build(t.Context(), []Base{{Name: "d", Source: dir}}, Options{Env: &tool.Env{Workdir: dir}, Timeout: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if len(warns) != 1 || !strings.Contains(warns[0], "indexing stopped after 0 files at the time limit") {
		t.Errorf("warnings: %q", warns)
	}
}
