package tool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every listing hides what deniedPaths covers, names and sizes included:
// fs_read Directory (at any depth), glob and grep all skip .env, a denied
// directory and *.pem, and still list the rest.
func TestAttackListingsHideDeniedEntries(t *testing.T) {
	ws := workspace(t, map[string]string{
		".env":             "API_KEY=hunter2\n",
		"secrets/db.txt":   "password hunter2\n",
		"keys/server.pem":  "-----BEGIN hunter2\n",
		"keys/readme.txt":  "keys live here hunter2\n",
		"src/app/main.go":  "package main // hunter2\n",
		"src/app/.env":     "NESTED=hunter2\n",
		"src/app/cert.pem": "hunter2\n",
	})
	env := &Env{Workdir: ws, ReadPaths: PathPolicy{DeniedPaths: []string{".env", "secrets", "*.pem"}}}
	hidden := []string{".env", "secrets", "server.pem", "cert.pem", "db.txt"}
	cases := []struct {
		tool, input string
		want        []string
	}{
		{"fs_read", `{"operations":[{"mode":"Directory","path":"."}]}`, []string{"keys/", "src/"}},
		{"fs_read", `{"operations":[{"mode":"Directory","path":".","depth":5}]}`, []string{"keys/readme.txt", "src/app/main.go"}},
		{"fs_read", `{"operations":[{"mode":"Directory","path":"src/app"}]}`, []string{"src/app/main.go"}},
		{"fs_read", `{"operations":[{"mode":"Directory","path":"keys"}]}`, []string{"keys/readme.txt"}},
		{"glob", `{"pattern":"**"}`, []string{"keys/readme.txt", "src/app/main.go"}},
		{"glob", `{"pattern":"**/*.pem"}`, []string{"No paths match"}},
		{"grep", `{"pattern":"hunter2"}`, []string{"keys/readme.txt:1:", "src/app/main.go:1:"}},
	}
	for _, c := range cases {
		got := ok(t, call(t, env, c.tool, c.input))
		mustContain(t, got, c.want...)
		for _, h := range hidden {
			if strings.Contains(got, h) {
				t.Errorf("%s %s lists the denied %q:\n%s", c.tool, c.input, h, got)
			}
		}
	}
	// A denied directory cannot be listed at all.
	failed(t, call(t, env, "fs_read", `{"operations":[{"mode":"Directory","path":"secrets"}]}`), "deniedPaths")
}

// A listing does not show where a symlink leads when the read policy
// refuses it (issue 23): envalias -> .env (denied) and out -> a file
// outside the workspace are listed by name only; a link inside is shown
// with its target. The target used to be printed, naming the denied file.
func TestAttackListingHidesRefusedSymlinkTargets(t *testing.T) {
	ws := workspace(t, map[string]string{".env": "API_KEY=hunter2\n", "real.txt": "x"})
	outside := t.TempDir()
	for link, target := range map[string]string{"envalias": ".env", "out": outside + "/credentials", "fine": "real.txt"} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	env := &Env{Workdir: ws, ReadPaths: PathPolicy{DeniedPaths: []string{".env"}}}
	got := ok(t, call(t, env, "fs_read", `{"operations":[{"mode":"Directory","path":"."}]}`))
	mustContain(t, got, "envalias -> (target not shown", "out -> (target not shown", "fine -> real.txt")
	if strings.Contains(got, ".env") || strings.Contains(got, "credentials") {
		t.Errorf("a refused target is shown:\n%s", got)
	}
}
