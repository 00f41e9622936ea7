package tool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A list goes through kiro's commands (create, complete, add, remove, load,
// lookup) with 0-based indices, is saved under TodoDir, and bad input is an
// error naming the field.
func TestTodoListCommands(t *testing.T) {
	env := &Env{Workdir: t.TempDir()}
	r := call(t, env, "todo_list", `{"command":"create","tasks":["read the code","fix the bug","run the tests"],"todo_list_description":"fix issue 7"}`)
	todo, ok := ParseTodo(text(r))
	if r.IsError || !ok || len(todo.Tasks) != 3 || todo.Description != "fix issue 7" || !strings.HasSuffix(text(r), "\nID: "+todo.ID) {
		t.Fatalf("create: %s", text(r))
	}
	id := todo.ID
	if _, err := os.Stat(filepath.Join(env.Workdir, TodoDir, id+".json")); err != nil {
		t.Fatal(err)
	}
	r = call(t, env, "todo_list", `{"command":"complete","completed_indices":[0],"context_update":"bug is in parse.go","modified_files":["parse.go"],"current_id":"`+id+`"}`)
	r = call(t, env, "todo_list", `{"command":"add","new_tasks":["write a regression test"],"insert_indices":[2],"current_id":"`+id+`"}`)
	r = call(t, env, "todo_list", `{"command":"remove","remove_indices":[3],"new_description":"fix issue 7 with a test","current_id":"`+id+`"}`)
	r = call(t, env, "todo_list", `{"command":"load","load_id":"`+id+`"}`)
	todo, _ = ParseTodo(text(r))
	var got []string
	for _, task := range todo.Tasks {
		got = append(got, task.Task+map[bool]string{true: "+", false: "-"}[task.Completed])
	}
	if strings.Join(got, "|") != "read the code+|fix the bug-|write a regression test-" || todo.Description != "fix issue 7 with a test" ||
		len(todo.Context) != 1 || todo.ModifiedFiles[0] != "parse.go" {
		t.Errorf("after complete/add/remove: %s", text(r))
	}
	if r := call(t, env, "todo_list", `{"command":"lookup"}`); !strings.Contains(text(r), id+": fix issue 7 with a test (1/3)") {
		t.Errorf("lookup: %s", text(r))
	}
	for input, want := range map[string]string{
		`{"command":"complete","completed_indices":[9],"context_update":"x","current_id":"` + id + `"}`: "completed_indices: index 9 out of range",
		`{"command":"complete","completed_indices":[0],"current_id":"` + id + `"}`:                      "context_update are required",
		`{"command":"load","load_id":"../x"}`:                                                           "not an id",
		`{"command":"load","load_id":"123"}`:                                                            `no list with load_id "123"`,
		`{"command":"add","new_tasks":["a","b"],"insert_indices":[0],"current_id":"` + id + `"}`:        "one index per task",
		`{"command":"create","tasks":[]}`:                                                               "tasks (non-empty)",
		`{"command":"burn"}`:                                                                            "enum: burn does not equal any of", // schema enum
	} {
		if r := call(t, env, "todo_list", input); !r.IsError || !strings.Contains(text(r), want) {
			t.Errorf("%s: %s; want error with %q", input, text(r), want)
		}
	}
}
