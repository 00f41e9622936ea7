package openai

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/prompt/tiered"
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

// The tiered-assembly design's current user message with images: "[{type:
// text, text: user_prompt}, {type: image_url, image_url: {url:
// data:image/png;base64,...}}]" — the tiered layout keeps the image of
// the current prompt and Chat sends it as an image_url data URL after the
// text (the system reminder follows the prompt's text).
func TestTieredCurrentPromptWithImage(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nfake")
	c := &prompt.Context{Model: "gpt-4.1", System: "sys", Reminder: "Close every edit block.", History: []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock("What is in this screenshot?"), {Type: llm.BlockImage, MediaType: "image/png", Data: png}}},
	}}
	req, _, err := tiered.New().Assemble(c)
	if err != nil {
		t.Fatal(err)
	}
	p, err := chatParams(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Messages []struct {
			Role    string
			Content json.RawMessage
		}
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	last := got.Messages[len(got.Messages)-1]
	want := `[{"text":"What is in this screenshot?\n\nClose every edit block.","type":"text"},{"image_url":{"url":"data:image/png;base64,` +
		base64.StdEncoding.EncodeToString(png) + `"},"type":"image_url"}]`
	if last.Role != "user" || string(last.Content) != want {
		t.Errorf("current prompt:\n%s\nwant\n%s", last.Content, want)
	}
}
