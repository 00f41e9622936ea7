package panels

import (
	"encoding/json"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

const t2026 = int64(1771509600000) // 2026-02-19T14:00:00Z

func ctx(api llm.API) *prompt.Context {
	return &prompt.Context{
		Model: "m", System: "Be a pirate.", API: api, Now: t2026 + 60_000,
		Task:  "- [ ] fix bug",
		Files: []prompt.File{{Path: "src/new.go", Content: "new", Refreshed: t2026}, {Path: "src/old.go", Content: "old", Refreshed: t2026 - 3600_000}},
		History: []llm.Message{
			llm.UserText("Hello!"),
			{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("Let me check."), llm.ToolUseBlock("T1", "Open", json.RawMessage(`{"path":"src/main.rs"}`))}},
			{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("T1", "Opened", false)}},
			{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock(""), llm.ToolUseBlock("T2", "Open", json.RawMessage(`{}`))}}, // orphan: cut by max_tokens
			llm.UserText("go on"),
		},
	}
}

// Panels come oldest first as dynamic_panel pairs with Context Pilot's exact
// texts, then the footer pair, then the seed re-injection (Anthropic only),
// then the conversation without empty blocks and orphan calls.
func TestAnthropicFormMatchesSeed(t *testing.T) {
	req, _, err := Layout{}.Assemble(ctx("anthropic"))
	if err != nil {
		t.Fatal(err)
	}
	if req.SystemText() != "Be a pirate." {
		t.Fatal("system prompt not in the system field")
	}
	m := req.Messages
	// Task (static) first, then old.go, then new.go.
	first := m[0].Content
	if first[0].Text != "Beginning of dynamic panel display. All content displayed below may be considered up to date." ||
		first[1].Text != "Panel content (timestamp unknown - static or never refreshed)" ||
		first[2].Name != "dynamic_panel" || first[2].ID != "panel_P1" || string(first[2].Input) != `{"id":"P1"}` {
		t.Errorf("first panel: %+v", first)
	}
	if got := m[1].Content[0].Content[0].Text; got != "======= [P1] Todo List =======\n- [ ] fix bug" {
		t.Errorf("first panel result %q", got)
	}
	if m[2].Content[0].Text != "Panel automatically generated at 2026-02-19T13:00:00Z" || m[3].Content[0].Content[0].Text != "======= [P3] File: src/old.go =======\nold" {
		t.Errorf("second panel should be the older file: %+v %+v", m[2].Content[0], m[3].Content[0])
	}
	if len(m[2].Content) != 2 {
		t.Error("only the first panel carries the header")
	}
	footer := m[6].Content
	if footer[0].Text != "End of dynamic panel displays. All content displayed above may be considered up to date: it is automatically kept updated as we speak.\n\n\nCurrent datetime: 2026-02-19T14:01:00Z" ||
		footer[1].ID != "panel_footer" || string(footer[1].Input) != `{"action":"end_panels"}` {
		t.Errorf("footer: %+v", footer)
	}
	if m[7].Content[0].Content[0].Text != "Panel display complete. Proceeding with conversation." {
		t.Error("footer ack")
	}
	if m[8].Text() != "System instructions (repeated for emphasis):\n\nBe a pirate." || m[9].Text() != "Understood. I will follow these instructions." {
		t.Errorf("seed re-injection: %q / %q", m[8].Text(), m[9].Text())
	}
	conv := m[10:]
	if len(conv) != 4 || conv[0].Text() != "Hello!" || len(conv[3].Content) != 1 || conv[3].Text() != "go on" {
		t.Fatalf("conversation: %+v", conv)
	}
	for _, msg := range conv {
		for _, b := range msg.Content {
			if b.ID == "T2" {
				t.Error("orphan tool call T2 was not skipped")
			}
		}
	}
	if len(req.Breakpoints) != 0 {
		t.Error("panels places no breakpoints")
	}
}

func TestOpenAIFormHasNoSeedReinjection(t *testing.T) {
	req, _, err := Layout{}.Assemble(ctx("openai-chat"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range req.Messages {
		if len(m.Content) > 0 && m.Content[0].Text == "Understood. I will follow these instructions." {
			t.Fatal("seed re-injection is Anthropic-only")
		}
	}
}
