//go:build unix

package tool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A hard link inside the workspace to a file outside it gives the tools
// nothing: no tool reads it (fs_read Line/Search/Image, grep) or writes
// through it (fs_write), since a file with more than one link may have its
// other names outside the allowed roots. The listing tools still name it.
func TestAttackHardlinkedFilesAreRefused(t *testing.T) {
	f := newEscapeFixture(t, map[string]string{"plain.txt": "plain hunter2\n"})
	write(t, f.victim, "outside hunter2 secret\n")
	if err := os.Link(f.victim, filepath.Join(f.ws, "link.txt")); err != nil {
		t.Skipf("hard links unsupported here: %v", err)
	}
	png := filepath.Join(f.outside, "img.png")
	write(t, png, "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	if err := os.Link(png, filepath.Join(f.ws, "img.png")); err != nil {
		t.Fatal(err)
	}
	env := &Env{Workdir: f.ws}
	refusals := []struct{ tool, input string }{
		{"fs_read", `{"operations":[{"mode":"Line","path":"link.txt"}]}`},
		{"fs_read", `{"operations":[{"mode":"Search","path":"link.txt","pattern":"secret"}]}`},
		{"fs_read", `{"operations":[{"mode":"Image","image_paths":["img.png"]}]}`},
		{"grep", `{"pattern":"secret","path":"link.txt"}`},
		{"fs_write", `{"command":"str_replace","path":"link.txt","old_str":"secret","new_str":"PWNED"}`},
		{"fs_write", `{"command":"append","path":"link.txt","new_str":"PWNED"}`},
		{"fs_write", `{"command":"create","path":"link.txt","file_text":"PWNED"}`},
	}
	for _, c := range refusals {
		r := call(t, env, c.tool, c.input)
		s := failed(t, r, "hard links")
		if strings.Contains(s, "secret") && !strings.Contains(c.input, "secret") {
			t.Errorf("%s %s revealed the outside content: %s", c.tool, c.input, s)
		}
	}
	if got := read(t, f.victim); got != "outside hunter2 secret\n" {
		t.Errorf("fs_write changed the outside file through a hard link: %q", got)
	}
	got := ok(t, call(t, env, "grep", `{"pattern":"hunter2"}`))
	if got != "plain.txt:1:plain hunter2\n[grep: skipped 2 file(s) with more than one hard link]" {
		t.Errorf("grep over the workspace:\n%s", got)
	}
	mustContain(t, ok(t, call(t, env, "glob", `{"pattern":"*.txt"}`)), "link.txt", "plain.txt")
	// An embedder that knows where its links are may allow them.
	env.AllowHardlinks = true
	mustContain(t, ok(t, call(t, env, "fs_read", `{"operations":[{"mode":"Line","path":"link.txt"}]}`)), "outside hunter2 secret")
}
