package archtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-agent/strata/internal/strays"
)

// TestMain fails the run when the tests leave files in this directory
// (internal/strays).
func TestMain(m *testing.M) { os.Exit(strays.Run(m)) }

// startsProcesses lists the packages that run processes: os/exec imported
// by the package or its tests (not through a dependency: SDKs import it),
// or the module's tool, mcp and hooks packages, which run a workspace's
// commands, imported directly or through other packages.
var startsProcesses = []string{"os/exec", module + "/tool", module + "/mcp", module + "/hooks"}

// Every package with tests that can start processes runs them under
// strays.Run (a TestMain), so a command run outside its temporary
// workspace fails the run instead of leaving files in the repository.
func TestProcessTestsGuardTheRepository(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the check needs the go command on PATH: %v", err)
	}
	cmd := exec.Command(goBin, "list", "-f",
		`{{.ImportPath}}|{{len .TestGoFiles}}{{len .XTestGoFiles}}|{{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}|{{join .Deps " "}}`, module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var missing []string
	checked := 0
	for line := range strings.Lines(string(out)) {
		f := strings.Split(strings.TrimSpace(line), "|")
		if len(f) != 4 || f[1] == "00" || f[0] == module+"/internal/strays" {
			continue
		}
		imports := strings.Fields(f[2])
		reach := append(strings.Fields(f[3]), imports...) // the module's packages count through dependencies
		if !slices.Contains(imports, "os/exec") && !slices.ContainsFunc(startsProcesses[1:], func(p string) bool { return p != f[0] && slices.Contains(reach, p) }) {
			continue
		}
		checked++
		if !slices.Contains(imports, module+"/internal/strays") {
			missing = append(missing, f[0])
		}
	}
	if checked < 5 {
		t.Fatalf("only %d packages with tests start processes; the go list output changed?\n%s", checked, out)
	}
	if len(missing) > 0 {
		t.Errorf("these packages' tests can start processes but do not run under strays.Run; add a TestMain "+
			"`func TestMain(m *testing.M) { os.Exit(strays.Run(m)) }`:\n%s", strings.Join(missing, "\n"))
	}
}

// emptyFiles returns the files (relative to root) that are empty, outside
// testdata directories.
func emptyFiles(root string, files []string) []string {
	var out []string
	for _, f := range files {
		if f == "" || strings.HasPrefix(f, "testdata/") || strings.Contains(f, "/testdata/") {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(root, f)); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
			out = append(out, f)
		}
	}
	return out
}

// The repository tracks no empty file outside testdata: empty files are
// what a test's stray `touch` leaves (three such markers were once
// committed at the root).
func TestNoEmptyTrackedFiles(t *testing.T) {
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not a git checkout (or no git): %v", err)
	}
	dir := strings.TrimSpace(string(root))
	out, err := exec.Command("git", "-C", dir, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Split(string(out), "\x00")
	if len(files) < 50 {
		t.Fatalf("git ls-files listed %d files in %s; want the repository's", len(files), dir)
	}
	if empty := emptyFiles(dir, files); len(empty) > 0 {
		t.Errorf("empty files are tracked (a test's marker committed by mistake?); remove them with git rm: %s", strings.Join(empty, ", "))
	}

	// The check finds an empty marker and leaves testdata alone.
	tmp := t.TempDir()
	for _, f := range []string{"mcp-ran", "testdata/empty.json", "a/testdata/x", "full"} {
		os.MkdirAll(filepath.Join(tmp, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(tmp, f), nil, 0o644)
	}
	os.WriteFile(filepath.Join(tmp, "full"), []byte("x"), 0o644)
	if got := emptyFiles(tmp, []string{"mcp-ran", "testdata/empty.json", "a/testdata/x", "full"}); !slices.Equal(got, []string{"mcp-ran"}) {
		t.Errorf("emptyFiles = %q; want [mcp-ran]", got)
	}
}
