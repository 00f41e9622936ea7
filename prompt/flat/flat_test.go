package flat

import (
	"reflect"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// Every context item lands in the one system prompt as a "## " section in
// Context field order; the history is sent unchanged with the reminder
// appended to its last message (the caller's history is not modified); no
// cache breakpoints.
func TestAssemble(t *testing.T) {
	hist := []llm.Message{llm.UserText("list the files"), llm.AssistantText("ok"), llm.UserText("now the README")}
	c := &prompt.Context{Model: "m", System: "Be brief.", Summary: "earlier work", Task: "docs", HookOutputs: []string{"branch main"},
		Files: []prompt.File{{Path: "a.go", Content: "package a"}}, Skills: []prompt.Skill{{Name: "pdf", Description: "read PDFs", Path: "skills/pdf/SKILL.md"}},
		FileTree: "a.go\nREADME.md", History: hist, Reminder: "Answer in English.",
		Tools: []llm.ToolSpec{{Name: "fs_read", InputSchema: []byte(`{"type":"object"}`)}}}
	req, bd, err := Layout{}.Assemble(c)
	if err != nil {
		t.Fatal(err)
	}
	want := "Be brief.\n\n## Conversation summary\n\nearlier work\n\n## Task\n\ndocs\n\n## Hook output\n\nbranch main\n\n" +
		"## File: a.go\n\n```\npackage a\n```\n\n## Skills\n\npdf: read PDFs (file: skills/pdf/SKILL.md)\n\n## Repository files\n\na.go\nREADME.md"
	if len(req.System) != 1 || req.System[0].Text != want {
		t.Errorf("system %+v", req.System)
	}
	if len(req.Breakpoints) != 0 || bd.Breakpoints != 0 {
		t.Errorf("breakpoints %v", req.Breakpoints)
	}
	last := req.Messages[2].Content
	if len(req.Messages) != 3 || len(last) != 2 || last[1].Text != "Answer in English." || len(hist[2].Content) != 1 ||
		!reflect.DeepEqual(req.Messages[:2], hist[:2]) || len(req.Tools) != 1 {
		t.Errorf("messages %+v", req.Messages)
	}
	var names []string
	for _, s := range bd.Spans {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "tools,system,history" || bd.TotalTokens <= 0 {
		t.Errorf("breakdown %v total %d", names, bd.TotalTokens)
	}
}
