package tool

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestResolvePathInsideWorkspace(t *testing.T) {
	ws := workspace(t, map[string]string{"a/b.txt": "x", "real/f.txt": "y"})
	if err := os.Symlink(filepath.Join(ws, "real"), filepath.Join(ws, "alias")); err != nil {
		t.Fatal(err)
	}
	env := &Env{Workdir: ws}
	cases := map[string]string{
		"a/b.txt":                             filepath.Join(ws, "a/b.txt"),
		"./a/../a/b.txt":                      filepath.Join(ws, "a/b.txt"),
		filepath.Join(ws, "a/b.txt"):          filepath.Join(ws, "a/b.txt"),
		".":                                   ws,
		"new/dir/file.txt":                    filepath.Join(ws, "new/dir/file.txt"),
		"alias/f.txt":                         filepath.Join(ws, "real/f.txt"), // symlinked dir inside
		"alias/not-yet.txt":                   filepath.Join(ws, "real/not-yet.txt"),
		filepath.Join(ws, "alias", "..", "a"): filepath.Join(ws, "a"),
	}
	for in, want := range cases {
		got, err := ResolvePath(env, in, AccessRead)
		if err != nil || got != want {
			t.Errorf("ResolvePath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestResolvePathRefusesEscapes(t *testing.T) {
	outside := workspace(t, map[string]string{"secret.txt": "s", "dir/x": "x"})
	ws := workspace(t, map[string]string{"in.txt": "i"})
	for name, target := range map[string]string{
		"link-file":     filepath.Join(outside, "secret.txt"),
		"link-dir":      filepath.Join(outside, "dir"),
		"link-dangling": filepath.Join(outside, "created-later.txt"),
		"link-rel":      "../" + filepath.Base(outside) + "/secret.txt",
	} {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	env := &Env{Workdir: ws}
	cases := []struct{ path, want string }{
		{"../x", "outside the workspace root " + ws},
		{"a/../../x", "outside the workspace root"},
		{filepath.Join(outside, "secret.txt"), "outside the workspace root"},
		{"/etc/passwd", "resolves to /etc/passwd"},
		{"link-file", "through a symlink to " + filepath.Join(outside, "secret.txt")},
		{"link-dir/x", "through a symlink"},
		{"link-dir/new.txt", "through a symlink"},
		{"link-dangling", "through a symlink to " + filepath.Join(outside, "created-later.txt")},
		{"link-rel", "through a symlink"},
		{"", "is empty"},
		{"a\x00b", "NUL"},
	}
	for _, c := range cases {
		got, err := ResolvePath(env, c.path, AccessRead)
		if err == nil {
			t.Errorf("ResolvePath(%q) = %q; want a refusal", c.path, got)
			continue
		}
		if !errors.Is(err, ErrSandbox) {
			t.Errorf("ResolvePath(%q): error %v is not ErrSandbox", c.path, err)
		}
		if !strings.Contains(err.Error(), c.want) || (c.path != "" && !strings.Contains(err.Error(), strconv.Quote(c.path))) {
			t.Errorf("ResolvePath(%q): error %q should name the path and contain %q", c.path, err, c.want)
		}
	}
}

func TestResolvePathRefusesOverlongPaths(t *testing.T) {
	ws := workspace(t, nil)
	_, err := ResolvePath(&Env{Workdir: ws}, strings.Repeat("a/", 2100), AccessRead)
	if !errors.Is(err, ErrSandbox) || !strings.Contains(err.Error(), "PATH_MAX") {
		t.Errorf("a path over PATH_MAX: %v; want a sandbox refusal naming PATH_MAX", err)
	}
	if _, err := ResolvePath(&Env{Workdir: ws}, strings.Repeat("a/../", 2100)+"b", AccessRead); err != nil {
		t.Errorf("a long path that cleans to a short one: %v", err)
	}
}

func TestResolvePathAllowedAndDenied(t *testing.T) {
	extra := workspace(t, map[string]string{"lib/a.go": "a", "other/b": "b"})
	ws := workspace(t, map[string]string{"src/main.go": "m", ".env": "k", "keys/id.pem": "p", "keys/pub.txt": "t"})
	env := &Env{
		Workdir: ws,
		ReadPaths: PathPolicy{
			AllowedPaths: []string{filepath.Join(extra, "lib")},
			DeniedPaths:  []string{".env", "*.pem", filepath.Join(ws, "src") + "/**/main.go"},
		},
	}
	if got, err := ResolvePath(env, filepath.Join(extra, "lib/a.go"), AccessRead); err != nil || got != filepath.Join(extra, "lib/a.go") {
		t.Errorf("allowed path: %q, %v", got, err)
	}
	if _, err := ResolvePath(env, filepath.Join(extra, "other/b"), AccessRead); err == nil || !strings.Contains(err.Error(), "allowed paths") {
		t.Errorf("path beside an allowed root: %v", err)
	}
	for _, p := range []string{".env", "keys/id.pem", "src/main.go"} {
		_, err := ResolvePath(env, p, AccessRead)
		if err == nil || !errors.Is(err, ErrSandbox) || !strings.Contains(err.Error(), "deniedPaths") {
			t.Errorf("ResolvePath(%q) = %v; want a deniedPaths refusal", p, err)
		}
	}
	if _, err := ResolvePath(env, "keys/pub.txt", AccessRead); err != nil {
		t.Errorf("keys/pub.txt: %v", err)
	}
	// A denied directory covers what is below it (kiro: gitignore-like).
	env.ReadPaths.DeniedPaths = []string{"keys"}
	if _, err := ResolvePath(env, "keys/pub.txt", AccessRead); err == nil {
		t.Error("file below a denied directory was allowed")
	}
	// An invalid pattern fails closed.
	env.ReadPaths.DeniedPaths = []string{"[unclosed"}
	if _, err := ResolvePath(env, "src/main.go", AccessRead); err == nil || !strings.Contains(err.Error(), "invalid") {
		t.Errorf("invalid denied pattern: %v", err)
	}
}

func TestResolvePathEmptyWorkdirIsCwd(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ResolvePath(&Env{}, "tool.go", AccessRead)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.EvalSymlinks(filepath.Join(wd, "tool.go")); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := ResolvePath(nil, "../go.mod", AccessRead); err == nil {
		t.Error("nil env: ../go.mod allowed")
	}
}

func TestAttackToolsRefuseEscapes(t *testing.T) {
	outside := workspace(t, map[string]string{"secret.txt": "TOPSECRET\n"})
	ws := workspace(t, map[string]string{"in.txt": "x\n"})
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	env := &Env{Workdir: ws}
	failed(t, call(t, env, "fs_read", `{"operations":[{"mode":"Line","path":"../`+filepath.Base(outside)+`/secret.txt"}]}`), "outside the workspace root")
	failed(t, call(t, env, "fs_read", `{"operations":[{"mode":"Line","path":"out/secret.txt"}]}`), "through a symlink")
	failed(t, call(t, env, "fs_write", `{"command":"create","path":"out/new.txt","file_text":"x"}`), "through a symlink")
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); err == nil {
		t.Error("fs_write created a file outside the workspace")
	}
	failed(t, call(t, env, "grep", `{"pattern":"x","path":"`+outside+`"}`), "outside the workspace root")
	failed(t, call(t, env, "glob", `{"pattern":"*","path":"out"}`), "through a symlink")
	// Walking the workspace lists the symlink but never reads through it.
	if s := ok(t, call(t, env, "grep", `{"pattern":"TOPSECRET"}`)); strings.Contains(s, "secret.txt:") {
		t.Errorf("grep read through a symlink out of the workspace: %s", s)
	}
}
