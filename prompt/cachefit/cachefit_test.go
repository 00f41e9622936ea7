package cachefit

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// session builds the context of call k (0-based) of a scripted session: the
// agent reads main.go, edits it at call 2, and main.go is a working file
// from call 1 on (version 2 from call 3).
func session(k int) *prompt.Context {
	v1 := strings.Repeat("// filler line of main.go\n", 40) + "func main() {}\n"
	v2 := strings.Replace(v1, "func main() {}", "func main() { run() }", 1)
	var hist []llm.Message
	hist = append(hist, llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock("fix main.go")}})
	for i := 0; i < k; i++ {
		id := "call_" + string(rune('a'+i))
		hist = append(hist,
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUseBlock(id, "execute_bash", json.RawMessage(`{"command":"step"}`))}},
			llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock(id, "ok", false)}})
	}
	c := &prompt.Context{Model: "m", System: "You are an agent.", Task: "fix the bug", History: hist, Reminder: "Reminder: be brief."}
	switch {
	case k >= 3:
		c.Files = []prompt.File{{Path: "main.go", Content: v2}}
	case k >= 1:
		c.Files = []prompt.File{{Path: "main.go", Content: v1}}
	}
	return c
}

// Every request of a session is the previous one plus new content at the
// end (the reminder aside): nothing already sent moves or changes. It has at
// most 4 breakpoints (Anthropic docs: up to 4 cache_control blocks), the
// newest on the end of the last user message, before the reminder. A file
// is placed once per version, the update as a unified diff.
func TestAppendOnlyWithRollingBreakpoints(t *testing.T) {
	l := New()
	var prev *llm.Request
	for k := 0; k < 6; k++ {
		req, bd, err := l.Assemble(session(k))
		if err != nil {
			t.Fatal(err)
		}
		if len(req.Breakpoints) > llm.MaxBreakpoints || bd.Breakpoints != len(req.Breakpoints) {
			t.Fatalf("call %d: %d breakpoints", k, len(req.Breakpoints))
		}
		last := len(req.Messages) - 1
		bp := req.Breakpoints[len(req.Breakpoints)-1]
		if bp.Target != llm.BreakMessage || bp.Message != last || bp.Block != len(req.Messages[last].Content)-2 ||
			req.Messages[last].Content[bp.Block+1].Text != "Reminder: be brief." {
			t.Errorf("call %d: newest breakpoint %+v; want the block before the reminder in message %d", k, bp, last)
		}
		if prev != nil {
			if !reflect.DeepEqual(prev.System, req.System) {
				t.Errorf("call %d: system changed", k)
			}
			n := len(prev.Messages) - 1
			for i := 0; i < n; i++ {
				if !reflect.DeepEqual(prev.Messages[i], req.Messages[i]) {
					t.Errorf("call %d: message %d changed", k, i)
				}
			}
			sent := prev.Messages[n].Content[:len(prev.Messages[n].Content)-1] // without the reminder
			if got := req.Messages[n].Content; len(got) < len(sent) || !reflect.DeepEqual(got[:len(sent)], sent) {
				t.Errorf("call %d: message %d does not start with what was sent", k, n)
			}
		}
		prev = req
	}
	var placed []string
	for _, m := range prev.Messages {
		for _, b := range m.Content {
			if strings.HasPrefix(b.Text, "Working file main.go") {
				placed = append(placed, b.Text)
			}
		}
	}
	if len(placed) != 2 || !strings.Contains(placed[0], "func main() {}") ||
		!strings.Contains(placed[1], "unified diff") || !strings.Contains(placed[1], "+func main() { run() }") ||
		strings.Count(placed[1], "filler") > 8 {
		t.Errorf("placed versions:\n%s", strings.Join(placed, "\n---\n"))
	}
	if !strings.Contains(prev.System[0].Text, "## Task\n\nfix the bug") {
		t.Errorf("system %q", prev.System[0].Text)
	}
}

// A history that does not end with a user message is an error.
func TestRejectsHistoryEndingWithAssistant(t *testing.T) {
	c := session(1)
	c.History = c.History[:len(c.History)-1]
	if _, _, err := New().Assemble(c); err == nil || !strings.Contains(err.Error(), "must end with a user message") {
		t.Errorf("err %v", err)
	}
}

// The files of a session's first request (an agent's resources and
// steering) are system sections as first seen; a later version of one is
// placed in the history as an update and the system text never changes.
func TestFirstRequestFilesAreStaticContext(t *testing.T) {
	l := New()
	steer := prompt.File{Path: ".kiro/steering/style.md", Content: "Use tabs.\n" + strings.Repeat("rule\n", 30)}
	h := []llm.Message{llm.UserText("fix it")}
	first, _, err := l.Assemble(&prompt.Context{System: "sys", History: h, Files: []prompt.File{steer}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(first.System[0].Text, "## File: .kiro/steering/style.md\n\n```\nUse tabs.") || len(first.Messages[0].Content) != 1 {
		t.Fatalf("first request: system %q, first message %d blocks", first.System[0].Text, len(first.Messages[0].Content))
	}
	changed := steer
	changed.Content = strings.Replace(steer.Content, "Use tabs.", "Use spaces.", 1)
	h = append(h, llm.AssistantText("ok"), llm.UserText("again"))
	second, _, err := l.Assemble(&prompt.Context{System: "sys", History: h, Files: []prompt.File{changed}})
	if err != nil {
		t.Fatal(err)
	}
	if second.System[0].Text != first.System[0].Text {
		t.Error("the system text changed")
	}
	lastMsg := second.Messages[len(second.Messages)-1].Content
	if got := lastMsg[len(lastMsg)-1].Text; !strings.Contains(got, "+Use spaces.") {
		t.Errorf("the new version is not an update in the history: %q", got)
	}
}
