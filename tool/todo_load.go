package tool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// TodoFile is one saved todo_list list with the time its file last
// changed.
type TodoFile struct {
	Todo
	Modified time.Time
}

// LoadTodos reads every list todo_list keeps in env's workspace (TodoDir,
// resolved through the sandbox for reading; files ReadPaths.DeniedPaths
// covers are left out, as lookup does), sorted by id. A workspace without
// lists gives nil, nil. An unreadable or malformed list is an error naming
// its file; the lists read before it are returned with it. Safe for
// concurrent use with todo_list (each file is replaced atomically).
func LoadTodos(env *Env) ([]TodoFile, error) {
	dir, err := ResolvePath(env, TodoDir, AccessRead)
	if err != nil {
		return nil, fmt.Errorf("load todo lists: %w", err)
	}
	deny, err := readDenyList(env)
	if err != nil {
		return nil, fmt.Errorf("load todo lists: %w", err)
	}
	des, _ := os.ReadDir(dir) // sorted by name, hence by id
	var out []TodoFile
	for _, de := range des {
		id, isJSON := strings.CutSuffix(de.Name(), ".json")
		if !isJSON || validTodoID(id, "id") != nil || deny.denies(filepath.Join(dir, de.Name())) {
			continue
		}
		t, err := loadTodo(env, id, "id")
		if err != nil {
			return out, err
		}
		var mod time.Time
		if fi, err := de.Info(); err == nil {
			mod = fi.ModTime()
		}
		out = append(out, TodoFile{Todo: t, Modified: mod})
	}
	return out, nil
}
