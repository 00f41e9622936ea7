package tool

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// ConfigPath names agent configuration wherever it sits, in any case, and
// leaves todo_list's own store and ordinary files alone.
func TestConfigPath(t *testing.T) {
	for p, want := range map[string]bool{
		"/ws/.kiro/agents/helper.json": true, "/ws/.KIRO/steering/a.md": true, "/home/u/.kiro/settings/mcp.json": true,
		"/ws/.amazonq/cli-agents/a.json": true, "/ws/.amazonq/mcp.json": true, "/ws/.amazonq/cli-todo-lists/1.json": false,
		"/ws/.mcp.json": true, "/ws/sub/AGENTS.md": true, "/ws/claude.md": true, "/ws/CLAUDE.local.md": true,
		"/home/u/.aws/amazonq/mcp.json": true, "/ws/.strata/system_reminder.md": true,
		"/ws/README.md": false, "/ws/agents.json": false, "/ws/src/kiro/x.go": false, "/ws/mcp.json": false,
	} {
		if got := ConfigPath(p) != ""; got != want {
			t.Errorf("ConfigPath(%q) = %q, want config %v", p, ConfigPath(p), want)
		}
	}
}

// The run-time half of the agent configuration rule: whatever approved the
// call before it runs, fs_write writes agent configuration, or a path
// outside the workspace, only when Env.PersonApproved says a person
// approved this very call, or (configuration) an fs_write allowedPaths
// entry names it; todo_list keeps its store under .amazonq.
func TestAttackConfigWritesNeedAPersonAtRun(t *testing.T) {
	ws, outside := workspace(t, nil), t.TempDir()
	input := func(p string) string {
		b, _ := json.Marshal(map[string]string{"command": "create", "path": p, "file_text": "x"})
		return string(b)
	}
	env := &Env{Workdir: ws, CallID: "c1", ConfigPaths: []string{filepath.Join(outside, "strata")}}
	for _, p := range []string{".kiro/agents/helper.json", "AGENTS.md", ".mcp.json", filepath.Join(outside, "x.txt")} {
		failed(t, call(t, env, "fs_write", input(p)), "person")
	}
	env.WritePaths.AllowedPaths = []string{outside}
	failed(t, call(t, env, "fs_write", input(filepath.Join(outside, "strata", "config.yaml"))), "strata's own configuration")
	ok(t, call(t, env, "fs_write", input(filepath.Join(outside, "x.txt"))))

	env.WritePaths.AllowedPaths = []string{".kiro/agents"}
	ok(t, call(t, env, "fs_write", input(".kiro/agents/helper.json")))
	failed(t, call(t, env, "fs_write", input(".kiro/steering/s.md")), "person")

	env.WritePaths.AllowedPaths = nil
	env.PersonApproved = func(id string) bool { return id == "c1" }
	for _, p := range []string{".kiro/steering/s.md", "AGENTS.md", filepath.Join(outside, "y.txt")} {
		ok(t, call(t, env, "fs_write", input(p)))
	}
	env.CallID = "c2"
	failed(t, call(t, env, "fs_write", input("CLAUDE.md")), "person")
	ok(t, call(t, env, "todo_list", `{"command":"create","todo_list_description":"d","tasks":["a"]}`))
}

// PathPermission and CommandPermission see agent configuration too: a write
// to it is a Person ask even for a tool in allowedTools, and so is a shell
// redirection or cp into it.
func TestConfigWritesAreAskedOfAPerson(t *testing.T) {
	ws := workspace(t, nil)
	env := &Env{Workdir: ws}
	if v := PathPermission(env, AccessWrite, []string{".kiro/agents/a.json"}, true); v.Permission != Ask || !v.Person {
		t.Errorf("fs_write .kiro: %+v", v)
	}
	if v := PathPermission(env, AccessWrite, []string{"src/a.go"}, true); v.Permission != Allow {
		t.Errorf("fs_write src: %+v", v)
	}
	for _, c := range []string{"echo x > .kiro/agents/a.json", "cp /tmp/a AGENTS.md", "tee -a .mcp.json", "echo x >>CLAUDE.md",
		"echo x > .kiro/agents/$n.json", "cp x \"$HOME/.kiro/agents/a.json\"", "echo x > .kiro/agents/a.json (",
	} {
		if v := CommandPermission(env, c, true); v.Permission != Ask || !v.Person {
			t.Errorf("%q: %+v", c, v)
		}
	}
	for _, c := range []string{"cat AGENTS.md", "sed -n 1p AGENTS.md", "dd if=CLAUDE.md"} {
		if v := CommandPermission(env, c, true); v.Permission != Allow {
			t.Errorf("%q: %+v", c, v)
		}
	}
	for _, c := range []string{"sed -i s/a/b/ AGENTS.md", "dd if=/dev/zero of=.mcp.json"} {
		if v := CommandPermission(env, c, true); !v.Person {
			t.Errorf("%q: %+v", c, v)
		}
	}
}
