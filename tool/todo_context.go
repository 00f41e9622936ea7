package tool

import (
	"fmt"
	"strings"

	"github.com/strata-agent/strata/llm"
)

// TodosIn returns the TODO lists that todo_list calls of history left, each
// in its latest state, in the order the lists first appear. Only successful
// todo_list tool_results count (ParseTodo reads their state); calls of other
// tools and failed calls are ignored. history is not modified.
func TodosIn(history []llm.Message) []Todo {
	calls := map[string]bool{} // tool_use ids of todo_list calls
	var order []string
	state := map[string]Todo{}
	for _, m := range history {
		for _, b := range m.Content {
			switch {
			case b.Type == llm.BlockToolUse && b.Name == "todo_list":
				calls[b.ID] = true
			case b.Type == llm.BlockToolResult && calls[b.ID] && !b.IsError && len(b.Content) > 0:
				t, ok := ParseTodo(b.Content[0].Text)
				if !ok {
					continue
				}
				if _, seen := state[t.ID]; !seen {
					order = append(order, t.ID)
				}
				state[t.ID] = t
			}
		}
	}
	out := make([]Todo, 0, len(order))
	for _, id := range order {
		out = append(out, state[id])
	}
	return out
}

// Active reports whether the list has a task left to do.
func (t Todo) Active() bool {
	for _, task := range t.Tasks {
		if !task.Completed {
			return true
		}
	}
	return false
}

// TaskContext formats the active lists of todos (see Todo.Active) as the
// task context of a request (kiro layer 3, "Active task/spec state"): a
// header saying how to continue a list, then per list its ID, description,
// tasks as "[x] i. task" / "[ ] i. task" (0-based, as todo_list counts) and
// the context notes of its completed steps. It returns "" when no list is
// active. The design gives no text for this layer; this one is strata's.
func TaskContext(todos []Todo) string {
	var b strings.Builder
	for _, t := range todos {
		if !t.Active() {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("Active TODO lists of this session (todo_list; continue one with command \"load\" and its ID, mark steps with \"complete\"):\n")
		}
		fmt.Fprintf(&b, "\nID: %s\nDescription: %s\n", t.ID, t.Description)
		for i, task := range t.Tasks {
			mark := " "
			if task.Completed {
				mark = "x"
			}
			fmt.Fprintf(&b, "[%s] %d. %s\n", mark, i, task.Task)
		}
		for _, c := range t.Context {
			fmt.Fprintf(&b, "Note: %s\n", c)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}
