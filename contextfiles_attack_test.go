package strata_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// A hostile repository's project files name files outside it (issue 23,
// item 4): AGENTS.md, README.md and a steering file are symlinks to a
// secret, CLAUDE.md is a hard link to one; an agent file's prompt, a
// file:// resource, a glob match and a skill are symlinks out, a resource
// is denied to fs_read, and the default reminder of the tiered layout is a
// symlink out too. No secret reaches the first request; each refusal is a
// warning naming the file (the reminder's is a progress event, as every
// failure to gather the request context). They all used to be sent.
func TestAttackContextFilesStayInTheWorkspace(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	root := t.TempDir()
	dir := filepath.Join(root, "ws")
	secret := func(name string) string {
		p := filepath.Join(root, "secrets", name)
		writeFile(t, p, "zebra SECRET-"+strings.ToUpper(name))
		return p
	}
	link := func(target, rel string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	writeFiles(t, dir, map[string]string{
		"docs/ok.md": "PUBLIC-DOC",
		".env":       "zebra SECRET-ENV",
		".kiro/agents/a.json": `{"name":"a","prompt":"file://../../prompt.md","tools":["fs_read"],
			"toolsSettings":{"fs_read":{"deniedPaths":[".env"]}},
			"resources":["file://notes.md","file://docs/*.md","file://.env","skill://skills/*/SKILL.md"]}`,
	})
	link(secret("agents"), "AGENTS.md")
	link(secret("readme"), "README.md")
	link(secret("steering"), ".kiro/steering/x.md")
	link(secret("prompt"), "prompt.md")
	link(secret("notes"), "notes.md")
	link(secret("glob"), "docs/z.md")
	link(secret("skill"), "skills/s/SKILL.md")
	link(secret("reminder"), ".strata/system_reminder.md")
	if err := os.Link(secret("claude"), filepath.Join(dir, "CLAUDE.md")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	for _, c := range []struct {
		name string
		o    strata.Options
		want []string // refusals the warnings name
	}{
		{"default agent", strata.Options{Dir: dir}, []string{"AGENTS.md", "CLAUDE.md", "README.md", "x.md"}},
		{"agent file", strata.Options{Dir: dir, Agent: "a"}, []string{"prompt.md", "notes.md", "z.md", ".env", "SKILL.md"}},
		{"reminder", strata.Options{Dir: dir, Layout: "tiered", NoProjectFiles: true}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newScriptedModel(t, func(string) replay.Reply { return replay.Reply{Blocks: []llm.Block{llm.TextBlock("ok")}} })
			var warns []string
			c.o.Warn = func(w string) { warns = append(warns, w) }
			_, s := openScripted(t, c.o, m)
			if _, err := s.Prompt(t.Context(), "hi"); err != nil {
				t.Fatal(err)
			}
			body := m.bodies()[0]
			if strings.Contains(body, "SECRET-") {
				i := strings.Index(body, "SECRET-")
				t.Errorf("a secret reached the request: …%s…", body[i:min(len(body), i+30)])
			}
			w := strings.Join(warns, "\n")
			for _, name := range c.want {
				if !strings.Contains(w, name) {
					t.Errorf("no warning names %s:\n%s", name, w)
				}
			}
		})
	}
}
