package panels

import (
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// banners returns each panel's banner line ("======= [ID] Name =======")
// in prompt order, and each panel's full tool_result text by id.
func banners(req *llm.Request) ([]string, map[string]string) {
	var out []string
	text := map[string]string{}
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if b.Type == llm.BlockToolResult && strings.HasPrefix(b.ID, "panel_P") {
				line, _, _ := strings.Cut(b.Content[0].Text, "\n")
				out = append(out, line)
				text[strings.TrimPrefix(b.ID, "panel_")] = b.Content[0].Text
			}
		}
	}
	return out, text
}

// full is a context with a source for every panel strata can fill, all
// static (no source time), so the panels keep the fixed id order.
func full() *prompt.Context {
	return &prompt.Context{
		Model: "claude-sonnet-4-5", Now: t2026,
		Todos:     []prompt.Todo{{ID: "7", Description: "ship", Tasks: []prompt.TodoTask{{Task: "a", Done: true}, {Task: "b"}}}},
		Agents:    []prompt.LibraryEntry{{Name: "coder", Description: "writes code", Path: ".kiro/agents/coder.json"}},
		Skills:    []prompt.Skill{{Name: "pdf", Description: "reads PDFs", Path: ".kiro/skills/pdf/SKILL.md"}},
		Usage:     llm.Usage{Input: 100, Output: 20, CacheRead: 50, CacheWrite: 10},
		Tools:     []llm.ToolSpec{{Name: "grep", Description: "Search files.\nMore."}, {Name: "fs_read", Description: "Read a file."}},
		FileTree:  "a.go\nb.go",
		Knowledge: "kb: docs",
		Logs:      []prompt.LogEntry{{At: 0, Text: "compacted"}},
		Files:     []prompt.File{{Path: "a.go", Content: "package a"}},
		History:   []llm.Message{llm.UserText("hi")},
	}
}

// The design's "Panel Content Sources" table: Todo (P1), Library (P2) —
// agents, skills, commands, Statistics (P3), Tools (P4) — enabled tool
// list, Tree (P5), Memories (P6), Logs (P8) — timestamped entries; files
// and other dynamic panels after P9.
func TestFixedPanelIDsFollowTheDesign(t *testing.T) {
	req, _ := assemble(t, &Layout{}, full())
	got, text := banners(req)
	want := []string{
		"======= [P1] Todo List =======", "======= [P2] Library =======", "======= [P3] Statistics =======",
		"======= [P4] Tools =======", "======= [P5] Tree =======", "======= [P6] Memories =======",
		"======= [P8] Logs =======", "======= [P10] File: a.go =======",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("panels:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for id, sub := range map[string]string{
		"P1": "[7] ship\n- [x] a\n- [ ] b",
		"P2": "Agents:\n- coder: writes code (.kiro/agents/coder.json)\n\nSkills:\n- pdf: reads PDFs (.kiro/skills/pdf/SKILL.md)",
		"P3": "100 input, 50 cache read, 10 cache write, 20 output",
		"P4": "- fs_read: enabled — Read a file.\n- grep: enabled — Search files.\n",
		"P8": "[1970-01-01T00:00:00Z] compacted",
	} {
		if !strings.Contains(text[id], sub) {
			t.Errorf("%s = %q, want it to contain %q", id, text[id], sub)
		}
	}
}

// "files and other dynamic panels from P10 up, stable for the item's
// life": a file that appears later, even before the others in the
// context's order, gets a new id; no other panel's bytes change.
func TestNewItemDoesNotRenumberLaterPanels(t *testing.T) {
	l := &Layout{}
	c := full()
	c.Files = []prompt.File{{Path: "a.go", Content: "A"}, {Path: "b.go", Content: "B"}}
	_, before := banners(mustAssemble(t, l, c))
	c.Files = append([]prompt.File{{Path: "new.go", Content: "N"}}, c.Files...)
	c.HookOutputs = []string{"hook"}
	got, after := banners(mustAssemble(t, l, c))
	for id, text := range before {
		if after[id] != text {
			t.Errorf("panel %s changed: %q → %q", id, text, after[id])
		}
	}
	if after["P13"] != "======= [P13] File: new.go =======\nN" || after["P12"] != "======= [P12] Hook Output 1 =======\nhook" {
		t.Errorf("new panels: %q", got)
	}
	// A panel that disappears leaves the others' ids alone too.
	c.Files = c.Files[2:]
	_, gone := banners(mustAssemble(t, l, c))
	if gone["P11"] != before["P11"] || gone["P10"] != "" {
		t.Errorf("after removing a.go: P10=%q P11=%q", gone["P10"], gone["P11"])
	}
}

func mustAssemble(t *testing.T, l *Layout, c *prompt.Context) *llm.Request {
	t.Helper()
	req, _ := assemble(t, l, c)
	return req
}

func TestEachRequestKeepsProviderRules(t *testing.T) {
	l := &Layout{}
	c := full()
	for _, api := range []llm.API{llm.APIAnthropic, llm.APIOpenAIChat, llm.APIBedrock, llm.APIGemini} {
		c.API = api
		c.System = "sys"
		assemble(t, l, c)
		c.History = append(c.History, llm.AssistantText("ok"), llm.UserText("more"))
	}
}
