package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/internal/shared"
)

// A malformed trajectory among good ones is skipped with a warning naming
// file:line:col, and the bench prices the rest; a directory of only
// malformed files still fails.
func TestBenchSkipsMalformedTrajectory(t *testing.T) {
	src := shared.Path(t, "data/trajectories/mini-swe-agent/train/astropy__astropy-12907.traj.json")
	good, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.traj.json"), good, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "b.traj.json")
	if err := os.WriteFile(bad, []byte("{\n  \"trajectory_format\": \"mini-swe-agent-1\",\n  \"messages\": [}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, t.TempDir(), nil, "bench", "cache", "--trajectories", dir, "--format", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if want := "strata: warning: trajectory: " + bad + ":3:16: invalid character '}'"; !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "skipped") {
		t.Errorf("stderr lacks %q … skipped:\n%s", want, r.stderr)
	}
	if !strings.Contains(r.stdout, `"trajectories": 1`) {
		t.Errorf("the good trajectory was not priced alone:\n%.300s", r.stdout)
	}

	if err := os.Remove(filepath.Join(dir, "a.traj.json")); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, t.TempDir(), nil, "bench", "cache", "--trajectories", dir)
	if r.code != 2 || !strings.Contains(r.stderr, "none of the 1 *.traj.json files") {
		t.Errorf("only malformed files: exit %d, stderr %s; want 2 and 'none of the 1 …'", r.code, r.stderr)
	}
}
