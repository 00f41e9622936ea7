// Package shared locates the project's shared test material (../shared beside
// the repository: seeds, recorded wire fixtures, trajectories, agent configs)
// for tests.
package shared

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
)

// Dir returns the absolute path of the shared folder: $STRATA_SHARED if set,
// else ../shared relative to the repository root. ok is false when it does not
// exist.
func Dir() (dir string, ok bool) {
	if d := os.Getenv("STRATA_SHARED"); d != "" {
		dir = d
	} else {
		_, file, _, _ := runtime.Caller(0)
		// file is <repo>/internal/shared/shared.go
		dir = filepath.Join(filepath.Dir(file), "..", "..", "..", "shared")
	}
	dir, _ = filepath.Abs(dir)
	st, err := os.Stat(dir)
	return dir, err == nil && st.IsDir()
}

// Path returns the absolute path of rel inside the shared folder. When the
// folder is absent it skips the test with a message saying where it was
// looked for, except under CI=true, where the folder is required and the test
// fails.
func Path(t testing.TB, rel string) string {
	t.Helper()
	dir, ok := Dir()
	if !ok {
		if os.Getenv("CI") == "true" {
			t.Fatalf("shared test data not found at %s (CI=true requires ../shared beside the repository)", dir)
		}
		t.Skipf("shared test data not found at %s: put the shared folder beside the repository or set STRATA_SHARED", dir)
	}
	return filepath.Join(dir, rel)
}

// AgentProjects returns the stored kiro projects of data/agents/projects,
// sorted: each folder holds either a .kiro folder (as in its repository) or,
// for a project whose repository is itself a .kiro folder, agents/, skills/,
// steering/… at its top level (see data/agents/INDEX.md). Missing data is
// handled as Path does.
func AgentProjects(t testing.TB) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(Path(t, "data/agents/projects"), "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no projects in data/agents/projects (%v)", err)
	}
	sort.Strings(dirs)
	return dirs
}

// KiroWorkspace returns a workspace root in which kiro finds the
// configuration of the stored project at dir, arranged as its users install
// it. kiro-cli reads only <workspace>/.kiro/agents and ~/.kiro/agents (kiro
// docs, "Agent file locations"; kiro-cli agent loading,
// resolve_workspace_agents_dir), so a project that keeps its .kiro folder is
// its own workspace (dir is returned), and a project stored without its
// .kiro prefix (agents/*.json at its top level; its README says to clone it
// as <project>/.kiro) gets a new temporary workspace whose .kiro is a
// copy of dir: not a symbolic link, as strata reads the files it puts in
// context only inside the workspace after following symlinks
// (docs/security.md, "Files read into context"). The stored data is never
// written.
func KiroWorkspace(t testing.TB, dir string) string {
	t.Helper()
	if st, err := os.Stat(filepath.Join(dir, ".kiro")); err == nil && st.IsDir() {
		return dir
	}
	if agents, _ := filepath.Glob(filepath.Join(dir, "agents", "*.json")); len(agents) == 0 {
		t.Fatalf("%s has neither .kiro/ nor agents/*.json", dir)
	}
	ws := t.TempDir()
	kiro := filepath.Join(ws, ".kiro")
	if err := os.CopyFS(kiro, os.DirFS(dir)); err != nil {
		t.Fatalf("copy %s to %s: %v", dir, kiro, err)
	}
	return ws
}
