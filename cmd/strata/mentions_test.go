package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/tool"
)

// "@path" attaches a workspace file through fs_read's path rules
// (docs/chat.md, "Prompts"): a denied or outside path is not attached and
// the note says why; a word that is no path ("@alice") is left alone; Tab
// completion lists only what fs_read may read.
func TestMentionsGoThroughTheSandbox(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "notes.md"), []byte("# notes\nship friday\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "secret.txt"), []byte("hunter2"), 0o644)
	os.WriteFile(filepath.Join(ws, ".hidden"), []byte("x"), 0o644)
	os.MkdirAll(filepath.Join(ws, "sub"), 0o755)
	os.WriteFile(filepath.Join(filepath.Dir(ws), "outside.txt"), []byte("out"), 0o644)
	env := &tool.Env{Workdir: ws, ReadPaths: tool.PathPolicy{DeniedPaths: []string{"secret.txt"}}}
	atts, notes := mentions(env, "read @notes.md, then @secret.txt and @../outside.txt and @sub; thanks @alice")
	if len(atts) != 1 || atts[0].Text != "<file path=\"notes.md\">\n# notes\nship friday\n</file>" {
		t.Errorf("attachments %+v; want notes.md only", atts)
	}
	got := strings.Join(notes, "\n")
	for _, want := range []string{"@notes.md: attached (20 bytes)", "@secret.txt: not attached", "@../outside.txt: not attached", "@sub: not attached: a directory"} {
		if !strings.Contains(got, want) {
			t.Errorf("notes lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "alice") || strings.Contains(got, "hunter2") {
		t.Errorf("notes:\n%s", got)
	}
	if c := completePath(env, ""); strings.Join(c, " ") != "notes.md sub/" {
		t.Errorf("completions of @: %q; want notes.md and sub/ (not the denied or hidden files)", c)
	}
	if c := completePath(env, "no"); len(c) != 1 || c[0] != "notes.md" {
		t.Errorf("completions of @no: %q", c)
	}
}
