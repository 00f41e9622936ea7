package agentfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata/agentfile"
)

// A context file that cannot be read any more keeps the content the
// Refresher last read (it used to fall back to the content the agent
// loaded), and so does another Refresher of the same agent that loaded
// the first one's state (a durable session's next call on another worker,
// docs/durable.md); a state that is not SaveState's JSON is refused with
// an error naming the context files.
func TestRefresherStateMovesToAnotherRefresher(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	notes := filepath.Join(dir, "NOTES.md")
	writeAt := func(s string, at time.Time) {
		t.Helper()
		if err := os.WriteFile(notes, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(notes, at, at); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	writeAt("first\n", t0)
	agent := filepath.Join(dir, ".kiro", "agents", "a.json")
	if err := os.MkdirAll(filepath.Dir(agent), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(agent, []byte(`{"name":"a","resources":["file://NOTES.md"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	load := func() (*agentfile.File, *agentfile.Refresher) {
		f, err := agentfile.Load(agent, dir)
		if err != nil {
			t.Fatal(err)
		}
		fr := f.Refresher()
		if fr == nil {
			t.Fatal("no refresher for an agent with a context file")
		}
		return f, fr
	}
	a, fa := load()
	b, fb := load() // the second worker opened the workspace while the file said "first"
	writeAt("second\n", t0.Add(time.Hour))
	got, err := fa.Refresh(a.Context.Files)
	if err != nil || len(got) != 1 || got[0].Content != "second\n" {
		t.Fatalf("refresh after the edit: %+v, %v", got, err)
	}
	state, err := fa.SaveState()
	if err != nil {
		t.Fatal(err)
	}
	// The file becomes unreadable: a directory where it was.
	if err := os.Remove(notes); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(notes, 0o755); err != nil {
		t.Fatal(err)
	}
	// In one process the same holds: the last content read is sent, not
	// the content the file had when the agent loaded (which it sent before).
	if got, err := fa.Refresh(a.Context.Files); err == nil || len(got) != 1 || got[0].Content != "second\n" {
		t.Errorf("the refresher sent %+v (%v) for an unreadable file; want the content it last read, and a warning", got, err)
	}
	if err := fb.LoadState(state); err != nil {
		t.Fatal(err)
	}
	got, err = fb.Refresh(b.Context.Files)
	if err == nil || len(got) != 1 || got[0].Content != "second\n" {
		t.Errorf("the moved refresher sent %+v (%v); want the content the first one last read, and a warning", got, err)
	}
	if err := fb.LoadState([]byte(`["not a state"]`)); err == nil || !strings.Contains(err.Error(), "context files") {
		t.Errorf("LoadState of a bad state = %v, want an error naming the context files", err)
	}
}
