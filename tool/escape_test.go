package tool

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// escapeFixture is a workspace beside an outside directory holding a
// victim file, both under one temp parent, so a path can climb from the
// workspace into the outside directory with "..".
type escapeFixture struct {
	ws, outside, victim string
}

func newEscapeFixture(t *testing.T, files map[string]string) escapeFixture {
	t.Helper()
	parent := workspace(t, nil)
	f := escapeFixture{ws: filepath.Join(parent, "ws"), outside: filepath.Join(parent, "outside")}
	f.victim = filepath.Join(f.outside, "victim.json")
	write(t, f.victim, "ORIGINAL OUTSIDE CONTENT\n")
	if err := os.MkdirAll(f.ws, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		write(t, filepath.Join(f.ws, filepath.FromSlash(name)), content)
	}
	return f
}

// untouched fails the test when the victim file no longer holds before or
// the outside directory holds anything but the victim and the entries of
// keep.
func (f escapeFixture) untouched(t *testing.T, before string, keep ...string) {
	t.Helper()
	if got := read(t, f.victim); got != before {
		t.Errorf("the file outside the workspace was rewritten: %q", got)
	}
	des, err := os.ReadDir(f.outside)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if de.Name() != "victim.json" && !slices.Contains(keep, de.Name()) {
			t.Errorf("a tool created %s outside the workspace", filepath.Join(f.outside, de.Name()))
		}
	}
}

// todo_list touches only files the sandbox resolves inside the workspace:
// an id planted inside a list file (with fs_write, as a model can) never
// names the file saved, and a symlinked .amazonq or list file pointing out
// of the workspace is refused for reading and writing.
func TestAttackTodoListStaysInTheWorkspace(t *testing.T) {
	list := func(id string) string {
		return `{"id":"` + id + `","description":"planted","tasks":[{"task_description":"t","completed":false}]}`
	}
	complete := `{"command":"complete","completed_indices":[0],"context_update":"done","current_id":"1"}`
	cases := []struct {
		name  string
		setup func(t *testing.T, f escapeFixture)
		input string
		keep  []string // entries the setup made outside
		check func(t *testing.T, f escapeFixture, out string, isError bool)
	}{
		{
			name: "id planted in the list file by fs_write",
			setup: func(t *testing.T, f escapeFixture) {
				ok(t, call(t, &Env{Workdir: f.ws}, "fs_write", `{"command":"create","path":"`+TodoDir+`/1.json","file_text":`+
					jsonString(list("a/../../../../outside/victim"))+`}`))
			},
			input: complete,
			check: func(t *testing.T, f escapeFixture, out string, isError bool) {
				if isError {
					t.Fatalf("complete on a list with a planted id failed: %s", out)
				}
				todo, _ := ParseTodo(out)
				if todo.ID != "1" {
					t.Errorf("the list loaded as 1 reports id %q; want 1 (the file's name)", todo.ID)
				}
				if got := read(t, filepath.Join(f.ws, TodoDir, "1.json")); !strings.Contains(got, `"completed": true`) {
					t.Errorf("the update was not saved to %s/1.json:\n%s", TodoDir, got)
				}
			},
		},
		{
			name: "symlinked .amazonq, create",
			setup: func(t *testing.T, f escapeFixture) {
				symlink(t, f.outside, filepath.Join(f.ws, ".amazonq"))
			},
			input: `{"command":"create","tasks":["x"],"todo_list_description":"d"}`,
			check: refusedThroughSymlink,
		},
		{
			name: "symlinked .amazonq, lookup",
			setup: func(t *testing.T, f escapeFixture) {
				write(t, filepath.Join(f.outside, "cli-todo-lists", "7.json"), list("7"))
				symlink(t, f.outside, filepath.Join(f.ws, ".amazonq"))
			},
			input: `{"command":"lookup"}`,
			keep:  []string{"cli-todo-lists"},
			check: func(t *testing.T, f escapeFixture, out string, isError bool) {
				if strings.Contains(out, "planted") {
					t.Errorf("lookup listed a list outside the workspace: %s", out)
				}
			},
		},
		{
			name: "symlinked list file, load",
			setup: func(t *testing.T, f escapeFixture) {
				write(t, f.victim, list("1"))
				symlink(t, f.victim, filepath.Join(f.ws, TodoDir, "1.json"))
			},
			input: `{"command":"load","load_id":"1"}`,
			check: refusedThroughSymlink,
		},
		{
			name: "symlinked list file, complete",
			setup: func(t *testing.T, f escapeFixture) {
				write(t, f.victim, list("1"))
				symlink(t, f.victim, filepath.Join(f.ws, TodoDir, "1.json"))
			},
			input: complete,
			check: refusedThroughSymlink,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newEscapeFixture(t, nil)
			c.setup(t, f)
			before := read(t, f.victim)
			r := call(t, &Env{Workdir: f.ws}, "todo_list", c.input)
			c.check(t, f, text(r), r.IsError)
			f.untouched(t, before, c.keep...)
		})
	}
}

// refusedThroughSymlink checks a todo_list result refused by the sandbox.
func refusedThroughSymlink(t *testing.T, f escapeFixture, out string, isError bool) {
	t.Helper()
	if !isError || !strings.Contains(out, "through a symlink") || strings.Contains(out, "planted") {
		t.Errorf("want a sandbox refusal naming the symlink that reveals nothing; got (is_error=%v): %s", isError, out)
	}
}

// symlink makes link point to target, creating link's parent directories.
func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
