// Package strays keeps tests from leaving files in the repository: a
// package's TestMain calls Run, which fails the run when the package's
// tests leave new untracked files in its directory (or its testdata). A
// hook or MCP server started in the test's own directory instead of a
// temporary workspace, or the binary run without a directory, writes there:
// three such marker files were once committed at the repository root
// (docs/kiro.md, "MCP"). internal/archtest's TestNoEmptyTrackedFiles checks
// the other end: no empty file is tracked outside testdata.
package strays

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Run runs m and returns its exit code, or 1 when the tests left new
// untracked, not ignored files directly in the package's directory (the
// tests' working directory) or under its testdata/; it names them on
// stderr (and leaves them, for the developer to see). Without git, or
// outside a git checkout (a module download, a source tarball), it only
// runs m. The directory, not the whole repository, is checked: the
// packages' tests run at the same time and may use their own directories.
func Run(m *testing.M) int {
	before, ok := untracked()
	code := m.Run()
	if !ok {
		return code
	}
	after, ok := untracked()
	if !ok {
		return code
	}
	left := added(before, after)
	if len(left) == 0 {
		return code
	}
	wd, _ := os.Getwd()
	fmt.Fprintf(os.Stderr, "strays: the tests left %d new untracked file(s) in %s: %s\n"+
		"a test ran a command or wrote a file outside its temporary directory (t.TempDir); "+
		"find it, fix it, and delete the files\n", len(left), wd, strings.Join(left, ", "))
	return 1
}

// untracked lists the untracked, not ignored files directly in the working
// directory or under its testdata/, relative to it; ok is false when git
// cannot say (no git, not a checkout).
func untracked() (files []string, ok bool) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, false
	}
	out, err := exec.Command("git", "ls-files", "-z", "--others", "--exclude-standard", "--", ".").Output()
	if err != nil {
		return nil, false
	}
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" && (!strings.Contains(f, "/") || strings.HasPrefix(f, "testdata/")) {
			files = append(files, f)
		}
	}
	return files, true
}

// added returns the files of after that are not in before.
func added(before, after []string) []string {
	var out []string
	for _, f := range after {
		if !slices.Contains(before, f) {
			out = append(out, f)
		}
	}
	return out
}
