package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/strata-agent/strata/llm"
)

//go:embed todo_list.md
var todoListDescription string

// TodoDir is where todo_list keeps its lists, relative to the workspace
// root (kiro: "Lists are stored locally in .amazonq/cli-todo-lists/",
// docs/built-in-tools.md).
const TodoDir = ".amazonq/cli-todo-lists"

// TodoList is kiro's todo_list tool (input schema specs/todo_list.json,
// unchanged from kiro): create, complete, load, add, remove and lookup of
// TODO lists kept as JSON files under TodoDir. The zero value is ready to
// use.
type TodoList struct {
	mu sync.Mutex // serialises read-modify-write of the list files
}

// Todo is the state of one TODO list: the JSON on the first line of every
// todo_list result (see ParseTodo).
type Todo struct {
	ID            string     `json:"id"`
	Description   string     `json:"description"`
	Tasks         []TodoTask `json:"tasks"`
	Context       []string   `json:"context,omitempty"`        // context_update of each complete call
	ModifiedFiles []string   `json:"modified_files,omitempty"` // distinct, in order of report
}

// TodoTask is one task of a Todo.
type TodoTask struct {
	Task      string `json:"task_description"`
	Completed bool   `json:"completed"`
}

// ParseTodo reads the list state from a todo_list result text; ok is false
// for results without one (lookup, errors).
func ParseTodo(text string) (Todo, bool) {
	first, _, _ := strings.Cut(text, "\n")
	var t Todo
	if json.Unmarshal([]byte(first), &t) != nil || t.ID == "" {
		return Todo{}, false
	}
	return t, true
}

// Spec returns todo_list's spec: kiro's input schema, todo_list.md as
// description.
func (*TodoList) Spec() llm.ToolSpec { return cachedSpec("todo_list", todoListDescription) }

type todoInput struct {
	Command          string   `json:"command"`
	Tasks            []string `json:"tasks"`
	Description      *string  `json:"todo_list_description"`
	CompletedIndices []int    `json:"completed_indices"`
	ContextUpdate    *string  `json:"context_update"`
	ModifiedFiles    []string `json:"modified_files"`
	LoadID           string   `json:"load_id"`
	CurrentID        string   `json:"current_id"`
	NewTasks         []string `json:"new_tasks"`
	InsertIndices    []int    `json:"insert_indices"`
	NewDescription   *string  `json:"new_description"`
	RemoveIndices    []int    `json:"remove_indices"`
}

// Run runs one command. Indices are 0-based (kiro). Every command but lookup
// returns the list as JSON on one line followed by "ID: <id>"; lookup lists
// the saved lists' IDs and descriptions. A missing required field, an index
// out of range or an unknown ID is an error naming it.
func (t *TodoList) Run(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
	var in todoInput
	if err := json.Unmarshal(input, &in); err != nil {
		return Result{}, fmt.Errorf("todo_list: input: %w", err)
	}
	root, err := workspaceRoot(env)
	if err != nil {
		return Result{}, fmt.Errorf("todo_list: %w", err)
	}
	dir := filepath.Join(mustReal(root), TodoDir)
	t.mu.Lock()
	defer t.mu.Unlock()
	if in.Command == "lookup" {
		return lookupTodos(dir)
	}
	var todo Todo
	switch in.Command {
	case "create":
		if len(in.Tasks) == 0 || in.Description == nil {
			return Result{}, errors.New("todo_list create: tasks (non-empty) and todo_list_description are required")
		}
		todo = Todo{ID: newTodoID(dir), Description: *in.Description}
		for _, s := range in.Tasks {
			todo.Tasks = append(todo.Tasks, TodoTask{Task: s})
		}
	case "load":
		if todo, err = loadTodo(dir, in.LoadID, "load_id"); err != nil {
			return Result{}, err
		}
		return todoResult(todo), nil
	case "complete", "add", "remove":
		if todo, err = loadTodo(dir, in.CurrentID, "current_id"); err != nil {
			return Result{}, err
		}
		if err := todo.apply(in); err != nil {
			return Result{}, fmt.Errorf("todo_list %s: %w", in.Command, err)
		}
	default:
		return Result{}, fmt.Errorf("todo_list: unknown command %q (want create, complete, load, add, remove or lookup)", in.Command)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("todo_list %s: not saved: %w", in.Command, err)
	}
	if err := saveTodo(dir, todo); err != nil {
		return Result{}, fmt.Errorf("todo_list %s: %w", in.Command, err)
	}
	return todoResult(todo), nil
}

// apply runs complete, add or remove on the loaded list.
func (t *Todo) apply(in todoInput) error {
	inRange := func(field string, idx []int, n int) error {
		for _, i := range idx {
			if i < 0 || i >= n {
				return fmt.Errorf("%s: index %d out of range (the list has %d tasks, 0-indexed)", field, i, n)
			}
		}
		return nil
	}
	switch in.Command {
	case "complete":
		if len(in.CompletedIndices) == 0 || in.ContextUpdate == nil {
			return errors.New("completed_indices and context_update are required")
		}
		if err := inRange("completed_indices", in.CompletedIndices, len(t.Tasks)); err != nil {
			return err
		}
		for _, i := range in.CompletedIndices {
			t.Tasks[i].Completed = true
		}
		t.Context = append(t.Context, *in.ContextUpdate)
		for _, f := range in.ModifiedFiles {
			if !slices.Contains(t.ModifiedFiles, f) {
				t.ModifiedFiles = append(t.ModifiedFiles, f)
			}
		}
	case "add":
		if len(in.NewTasks) == 0 || len(in.InsertIndices) != len(in.NewTasks) {
			return fmt.Errorf("new_tasks (%d) and insert_indices (%d) are required, one index per task", len(in.NewTasks), len(in.InsertIndices))
		}
		for k, s := range in.NewTasks { // each index is a position in the list as it grows
			i := in.InsertIndices[k]
			if i < 0 || i > len(t.Tasks) {
				return fmt.Errorf("insert_indices: index %d out of range 0..%d", i, len(t.Tasks))
			}
			t.Tasks = slices.Insert(t.Tasks, i, TodoTask{Task: s})
		}
	case "remove":
		if len(in.RemoveIndices) == 0 {
			return errors.New("remove_indices is required")
		}
		if err := inRange("remove_indices", in.RemoveIndices, len(t.Tasks)); err != nil {
			return err
		}
		drop := slices.Clone(in.RemoveIndices)
		slices.Sort(drop)
		for _, i := range slices.Backward(slices.Compact(drop)) {
			t.Tasks = slices.Delete(t.Tasks, i, i+1)
		}
	}
	if in.NewDescription != nil && in.Command != "complete" {
		t.Description = *in.NewDescription
	}
	return nil
}

func todoResult(t Todo) Result {
	b, _ := json.Marshal(t)
	return TextResult(string(b) + "\nID: " + t.ID)
}

// newTodoID is a millisecond timestamp (kiro's ids are timestamps), bumped
// past any list already saved under that id.
func newTodoID(dir string) string {
	n := time.Now().UnixMilli()
	for {
		id := strconv.FormatInt(n, 10)
		if _, err := os.Stat(filepath.Join(dir, id+".json")); errors.Is(err, os.ErrNotExist) {
			return id
		}
		n++
	}
}

func loadTodo(dir, id, field string) (Todo, error) {
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return Todo{}, fmt.Errorf("todo_list: %s %q is missing or not an id; call lookup to list the ids", field, id)
	}
	b, err := os.ReadFile(filepath.Join(dir, id+".json"))
	if errors.Is(err, os.ErrNotExist) {
		return Todo{}, fmt.Errorf("todo_list: no list with %s %q; call lookup to list the ids", field, id)
	}
	if err != nil {
		return Todo{}, fmt.Errorf("todo_list: %w", err)
	}
	var t Todo
	if err := json.Unmarshal(b, &t); err != nil {
		return Todo{}, fmt.Errorf("todo_list: %s: %w", filepath.Join(TodoDir, id+".json"), err)
	}
	return t, nil
}

func saveTodo(dir string, t Todo) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(t, "", "  ")
	tmp := filepath.Join(dir, "."+t.ID+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, t.ID+".json"))
}

func lookupTodos(dir string) (Result, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) == 0 {
		return TextResult("No TODO lists saved."), nil
	}
	var b strings.Builder
	b.WriteString("Saved TODO lists (ID: description, tasks done/total):")
	for _, f := range files {
		t, err := loadTodo(dir, strings.TrimSuffix(filepath.Base(f), ".json"), "id")
		if err != nil {
			fmt.Fprintf(&b, "\n- %s: unreadable (%v)", filepath.Base(f), err)
			continue
		}
		done := 0
		for _, task := range t.Tasks {
			if task.Completed {
				done++
			}
		}
		fmt.Fprintf(&b, "\n- %s: %s (%d/%d)", t.ID, t.Description, done, len(t.Tasks))
	}
	return TextResult(b.String()), nil
}
