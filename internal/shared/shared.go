// Package shared locates the project's shared test material (../shared beside
// the repository: seeds, recorded wire fixtures, trajectories, agent configs)
// for tests.
package shared

import (
	"os"
	"path/filepath"
	"runtime"
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
