package openai

import (
	"encoding/json"
	"testing"

	"github.com/strata-agent/strata/llm"
)

// An assistant message's text blocks become one Chat content string joined
// by a blank line, as Context Pilot's OpenAI-compatible builder joins the
// panel header and timestamp (docs/panels.md, rule 10); empty blocks add
// no separator.
func TestAssistantTextBlocksJoinWithABlankLine(t *testing.T) {
	req := &llm.Request{Model: "gpt-4.1", MaxTokens: 10, Messages: []llm.Message{
		llm.UserText("hi"),
		{Role: llm.RoleAssistant, Content: []llm.Block{
			llm.TextBlock("Beginning of dynamic panel display. All content displayed below may be considered up to date."),
			llm.TextBlock(""),
			llm.TextBlock("Panel automatically generated at 2026-02-19T14:00:00Z"),
			llm.ToolUseBlock("panel_P1", "dynamic_panel", json.RawMessage(`{"id":"P1"}`)),
		}},
		{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("panel_P1", "x", false)}},
	}}
	p, err := chatParams(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Messages []struct{ Role, Content any } }
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	want := "Beginning of dynamic panel display. All content displayed below may be considered up to date.\n\nPanel automatically generated at 2026-02-19T14:00:00Z"
	if got.Messages[1].Content != want {
		t.Errorf("assistant content %q, want %q", got.Messages[1].Content, want)
	}
}
