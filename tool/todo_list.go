package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
//
// Every list file is resolved with ResolvePath (loading and lookup as
// AccessRead, saving as AccessWrite), so a symlinked TodoDir or list file
// that leads out of the workspace is refused like any other path. IDs are
// plain names (see validTodoID); a list's file name is its ID, and the "id"
// stored inside a list file is ignored (a model can write that file with
// fs_write).
func (t *TodoList) Run(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
	var in todoInput
	if err := json.Unmarshal(input, &in); err != nil {
		return Result{}, fmt.Errorf("todo_list: input: %w", err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if in.Command == "lookup" {
		return lookupTodos(env)
	}
	var todo Todo
	var err error
	switch in.Command {
	case "create":
		if len(in.Tasks) == 0 || in.Description == nil {
			return Result{}, errors.New("todo_list create: tasks (non-empty) and todo_list_description are required")
		}
		dir, err := ResolvePath(env, TodoDir, AccessWrite)
		if err != nil {
			return Result{}, fmt.Errorf("todo_list create: %w", err)
		}
		todo = Todo{ID: newTodoID(dir), Description: *in.Description}
		for _, s := range in.Tasks {
			todo.Tasks = append(todo.Tasks, TodoTask{Task: s})
		}
	case "load":
		if todo, err = loadTodo(env, in.LoadID, "load_id"); err != nil {
			return Result{}, err
		}
		return todoResult(todo), nil
	case "complete", "add", "remove":
		if todo, err = loadTodo(env, in.CurrentID, "current_id"); err != nil {
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
	if err := saveTodo(env, todo); err != nil {
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

// todoIDPattern is what a list ID may be: a plain file name of letters,
// digits, "_" and "-" (kiro's IDs are millisecond timestamps), so no ID can
// name a path, a hidden file or a temporary file.
var todoIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`)

// validTodoID returns an error naming field unless id matches
// todoIDPattern.
func validTodoID(id, field string) error {
	if !todoIDPattern.MatchString(id) {
		return fmt.Errorf("todo_list: %s %q is missing or not an id (1-128 letters, digits, _ and -); call lookup to list the ids", field, id)
	}
	return nil
}

// todoFile resolves the list file of id through the sandbox for access.
func todoFile(env *Env, id string, access Access) (string, error) {
	p, err := ResolvePath(env, filepath.Join(TodoDir, id+".json"), access)
	if err != nil {
		return "", fmt.Errorf("todo_list: %w", err)
	}
	return p, nil
}

// newTodoID is a millisecond timestamp (kiro's ids are timestamps), bumped
// past any list already saved under that id in dir (TodoDir, resolved).
func newTodoID(dir string) string {
	n := time.Now().UnixMilli()
	for {
		id := strconv.FormatInt(n, 10)
		if _, err := os.Lstat(filepath.Join(dir, id+".json")); errors.Is(err, os.ErrNotExist) {
			return id
		}
		n++
	}
}

// loadTodo reads the list id (named by the input field) through the
// sandbox. The returned list's ID is id, whatever the file says.
func loadTodo(env *Env, id, field string) (Todo, error) {
	if err := validTodoID(id, field); err != nil {
		return Todo{}, err
	}
	p, err := todoFile(env, id, AccessRead)
	if err != nil {
		return Todo{}, err
	}
	b, err := os.ReadFile(p)
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
	t.ID = id
	return t, nil
}

// saveTodo writes t to its list file, resolved through the sandbox for
// writing: to a new temporary file beside it (created exclusively, so no
// planted file or symlink is written through), then renamed over it.
func saveTodo(env *Env, t Todo) error {
	if err := validTodoID(t.ID, "id"); err != nil {
		return err
	}
	p, err := todoFile(env, t.ID, AccessWrite)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(t, "", "  ")
	f, err := os.CreateTemp(filepath.Dir(p), "."+t.ID+"-*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// lookupTodos lists the lists in TodoDir, resolved through the sandbox for
// reading. Files ReadPaths.DeniedPaths cover are left out, as in every
// listing; files that are not lists (names that are not ids, hidden and
// temporary files) are skipped.
func lookupTodos(env *Env) (Result, error) {
	dir, err := ResolvePath(env, TodoDir, AccessRead)
	if err != nil {
		return Result{}, fmt.Errorf("todo_list lookup: %w", err)
	}
	deny, err := readDenyList(env)
	if err != nil {
		return Result{}, fmt.Errorf("todo_list lookup: %w", err)
	}
	des, _ := os.ReadDir(dir)
	var b strings.Builder
	found := 0
	for _, de := range des {
		id, isJSON := strings.CutSuffix(de.Name(), ".json")
		if !isJSON || validTodoID(id, "id") != nil || deny.denies(filepath.Join(dir, de.Name())) {
			continue
		}
		found++
		t, err := loadTodo(env, id, "id")
		if err != nil {
			fmt.Fprintf(&b, "\n- %s: unreadable (%v)", de.Name(), err)
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
	if found == 0 {
		return TextResult("No TODO lists saved."), nil
	}
	return TextResult("Saved TODO lists (ID: description, tasks done/total):" + b.String()), nil
}
