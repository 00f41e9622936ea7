package tool

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The attack: fs_write plants core.fsmonitor in .git/config, then the
// agent's allow-listed `git status` runs it. Writes under .git are refused,
// so the planted command never runs.
func TestAttackGitConfigPlantedByFSWrite(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not on PATH")
	}
	ws := workspace(t, map[string]string{"a.txt": "x\n"})
	if out, err := exec.Command("git", "-C", ws, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	marker := filepath.Join(t.TempDir(), "fsmonitor-ran")
	config := "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch " + marker + "; false\n"
	input, _ := json.Marshal(map[string]string{"command": "create", "path": ".git/config", "file_text": config})
	env := &Env{Workdir: ws, AllowedCommands: []string{"git status"}}
	failed(t, call(t, env, "fs_write", string(input)), "inside the git directory", "allowedPaths")
	ok(t, call(t, env, "execute_bash", `{"command":"git status"}`))
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the core.fsmonitor command planted through fs_write ran on an allow-listed git status")
	}
}

// Which writes the .git rule refuses, and what an explicit allowedPaths
// entry opens.
func TestAttackGitDirectoryIsNotWritable(t *testing.T) {
	ws := workspace(t, map[string]string{".git/config": "[core]\n", ".git/hooks/.keep": "", "sub/.git/config": "", "README.md": "x"})
	if err := os.Symlink(filepath.Join(ws, ".git"), filepath.Join(ws, "gitlink")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path    string
		allowed []string
		refused bool
	}{
		{".git/config", nil, true},
		{".git/hooks/pre-commit", nil, true},
		{".git/info/attributes", nil, true},
		{".git/modules/lib/config", nil, true},
		{".git", nil, true},               // a .git file (gitdir: pointer) in place of the directory
		{"sub/.git/config", nil, true},    // a nested repository
		{"vendor/x/.git", nil, true},      // a new nested .git file
		{".GIT/config", nil, true},        // case-insensitive file systems
		{"gitlink/config", nil, true},     // a symlink into .git
		{".git/../notes.txt", nil, false}, // lexically outside .git
		{".gitignore", nil, false},        // work-tree files
		{".gitattributes", nil, false},    // drivers it names must be configured in .git/config
		{".github/workflows/ci.yml", nil, false},
		{".git/config", []string{"."}, true}, // covering .git by accident does not open it
		{".git/config", []string{"/"}, true},
		{".git/hooks/pre-commit", []string{".git/hooks"}, false},
		{".git/config", []string{".git/hooks"}, true},
		{".git/info/exclude", []string{".git/info/exclude"}, false},
	} {
		t.Run(fmt.Sprintf("%s allowed=%q", c.path, c.allowed), func(t *testing.T) {
			env := &Env{Workdir: ws, WritePaths: PathPolicy{AllowedPaths: c.allowed}}
			_, err := ResolvePath(env, c.path, AccessWrite)
			if (err != nil) != c.refused {
				t.Errorf("write %s (allowedPaths %q): err %v, want refused %v", c.path, c.allowed, err, c.refused)
			}
			if _, err := ResolvePath(env, c.path, AccessRead); err != nil && c.path != ".GIT/config" {
				t.Errorf("read %s: %v (reads of .git stay allowed)", c.path, err)
			}
		})
	}
}
