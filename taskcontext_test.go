package strata_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/prompt/kiro"
)

// The kiro-cli turn anatomy's layer 3, "Task context: Active task/spec
// state", carries the session's active todo_list lists: after the model
// creates a list, every later request's context message holds it in a
// context entry; once every task is completed it leaves the layer.
func TestTaskContextCarriesActiveTodoLists(t *testing.T) {
	calls := 0
	m := newScriptedModel(t, func(body string) replay.Reply {
		calls++
		switch calls {
		case 1:
			in, _ := json.Marshal(map[string]any{"command": "create", "tasks": []string{"write tests", "ship"}, "todo_list_description": "release"})
			return replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock("t1", "todo_list", in)}}
		case 3:
			id := body[strings.Index(body, "ID: ")+4:]
			id = id[:strings.IndexAny(id, `\`)]
			in, _ := json.Marshal(map[string]any{"command": "complete", "current_id": id, "completed_indices": []int{0, 1}, "context_update": "all done"})
			return replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock("t2", "todo_list", in)}}
		}
		return replay.Reply{Blocks: []llm.Block{llm.TextBlock("ok")}}
	})
	_, s := openScripted(t, strata.Options{Dir: t.TempDir(), Layout: "kiro", Mode: agent.ModeAll}, m)
	for _, p := range []string{"plan the release", "finish it"} {
		if _, err := s.Prompt(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	b := m.bodies()
	if len(b) != 4 {
		t.Fatalf("want 4 model calls, got %d", len(b))
	}
	context := func(i int) string {
		var req struct {
			Messages []struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal([]byte(b[i]), &req); err != nil {
			t.Fatal(err)
		}
		return req.Messages[0].Content[0].Text
	}
	if strings.Contains(context(0), "Active TODO lists") {
		t.Error("first request: no list exists yet, the task layer must be empty")
	}
	for _, i := range []int{1, 2} {
		c := context(i)
		want := kiro.EntryBegin + "Active TODO lists of this session"
		if !strings.Contains(c, want) || !strings.Contains(c, "Description: release\n[ ] 0. write tests\n[ ] 1. ship\n"+kiro.EntryEnd) {
			t.Errorf("request %d: task layer missing or wrong:\n%s", i, c)
		}
	}
	if strings.Contains(context(3), "Active TODO lists") {
		t.Errorf("a completed list is not active:\n%s", context(3))
	}
}

// Only the kiro layout gets the task context: cachefit keeps its system
// text stable, and a todo list there would invalidate the cached prefix.
func TestTaskContextOnlyInTheKiroLayout(t *testing.T) {
	calls := 0
	m := newScriptedModel(t, func(string) replay.Reply {
		calls++
		if calls == 1 {
			in, _ := json.Marshal(map[string]any{"command": "create", "tasks": []string{"a"}, "todo_list_description": "d"})
			return replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock("t1", "todo_list", in)}}
		}
		return replay.Reply{Blocks: []llm.Block{llm.TextBlock("ok")}}
	})
	_, s := openScripted(t, strata.Options{Dir: t.TempDir(), Layout: "cachefit", Mode: agent.ModeAll}, m)
	if _, err := s.Prompt(t.Context(), "plan"); err != nil {
		t.Fatal(err)
	}
	b := m.bodies()
	if len(b) != 2 || strings.Contains(b[1], "Active TODO lists") {
		t.Errorf("cachefit request carries the task context (%d requests)", len(b))
	}
}
