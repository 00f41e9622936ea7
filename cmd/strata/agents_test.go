package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/internal/shared"
)

// `agents list` loads every real project's agents (as kiro finds them in
// .kiro/agents) without error, each warning once; an invalid agent file
// makes it exit 1 with the error naming the field.
func TestAgentsList(t *testing.T) {
	home := t.TempDir()
	projects, _ := filepath.Glob(filepath.Join(shared.Path(t, "data/agents/projects"), "*"))
	if len(projects) < 3 {
		t.Fatalf("%d projects", len(projects))
	}
	for _, p := range projects {
		files, _ := filepath.Glob(filepath.Join(p, ".kiro/agents/*.json"))
		r := runCLI(t, t.TempDir(), []string{"HOME=" + home}, "agents", "list", "--dir", p, "--format", "json")
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s %s", p, r.code, r.stdout, r.stderr)
		}
		var infos []agentInfo
		if err := json.Unmarshal([]byte(r.stdout), &infos); err != nil {
			t.Fatal(err)
		}
		if len(infos) != len(files) || len(files) == 0 {
			t.Errorf("%s: %d agents listed, %d files", p, len(infos), len(files))
		}
		for _, a := range infos {
			seen := map[string]bool{}
			for _, w := range a.Warnings {
				if seen[w] {
					t.Errorf("%s: warning twice: %s", a.Name, w)
				}
				seen[w] = true
			}
			if a.Error != "" || a.Scope != "workspace" {
				t.Errorf("%+v", a)
			}
		}
	}
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".kiro/agents"), 0o755)
	os.WriteFile(filepath.Join(ws, ".kiro/agents/bad.json"), []byte(`{"name":"bad","tools":"fs_read"}`), 0o644)
	r := runCLI(t, t.TempDir(), []string{"HOME=" + home}, "agents", "list", "--dir", ws)
	if r.code != 1 || !strings.Contains(r.stdout, "INVALID") || !strings.Contains(r.stdout, "/tools") {
		t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
