package panels

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

const t2026 = int64(1771509600000) // 2026-02-19T14:00:00Z, the design's example time

func ctx(api llm.API) *prompt.Context {
	return &prompt.Context{
		Model: "m", System: "Be a pirate.", API: api, Now: t2026 + 60_000,
		Todos: []prompt.Todo{{ID: "1", Description: "fix bug", Tasks: []prompt.TodoTask{{Task: "find it"}}, Changed: t2026 - 7200_000}},
		Files: []prompt.File{{Path: "src/new.go", Content: "new", Refreshed: t2026}, {Path: "src/old.go", Content: "old", Refreshed: t2026 - 3600_000}},
		History: []llm.Message{
			llm.UserText("Hello!"),
			{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("Let me check that file."), llm.ToolUseBlock("T1", "Open", json.RawMessage(`{"path":"src/main.rs"}`))}},
			{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("T1", "Opened 'src/main.rs' as P10", false)}},
			{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock(""), llm.ToolUseBlock("T2", "Open", json.RawMessage(`{}`))}}, // orphan: cut by max_tokens
			llm.UserText("go on"),
		},
	}
}

// assemble lays out c with l and checks the result keeps the conversation
// rules of c's API and that every tool_use is answered next. Bedrock and
// Gemini take prompt.CheckHistory's (starts with a user message, roles
// alternate, no empty message, every tool_result answers the tool_use just
// before it); the Anthropic Messages API also takes an assistant message
// first and same-role neighbours (it combines them); OpenAI takes an
// assistant message first.
func assemble(t *testing.T, l *Layout, c *prompt.Context) (*llm.Request, *prompt.Breakdown) {
	t.Helper()
	req, bd, err := l.Assemble(c)
	if err != nil {
		t.Fatal(err)
	}
	msgs := req.Messages
	if NeedsOpening(c.API) {
		if err := prompt.CheckHistory(msgs); err != nil {
			t.Fatalf("alternation: %v", err)
		}
	} else {
		for i, m := range msgs {
			if err := m.Validate(); err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
			if i > 0 && m.Role == msgs[i-1].Role && c.API != "" && c.API != llm.APIAnthropic {
				t.Fatalf("messages %d and %d both have role %s on %s", i-1, i, m.Role, c.API)
			}
		}
	}
	for i, m := range req.Messages {
		for _, u := range m.ToolUses() {
			if i+1 >= len(req.Messages) || !answers(req.Messages[i+1], u.ID) {
				t.Fatalf("message %d: tool_use %s is not answered by the next message", i, u.ID)
			}
		}
	}
	return req, bd
}

func answers(m llm.Message, id string) bool {
	for _, b := range m.Content {
		if b.Type == llm.BlockToolResult && b.ID == id {
			return true
		}
	}
	return false
}

func result(m llm.Message) string { return m.Content[0].Content[0].Text }

// The design's "Final API Request Structure (Anthropic)": panels as
// assistant [text header, text "Panel automatically generated at
// {iso_time}", tool_use panel_{ID} dynamic_panel {"id": ID}] / user
// [tool_result "======= [{ID}] {Panel Name} =======\n{content}"], sorted
// oldest first; the footer pair; the seed re-injection; the conversation.
func TestAnthropicFormMatchesSeed(t *testing.T) {
	req, _ := assemble(t, &Layout{}, ctx(llm.APIAnthropic))
	if req.SystemText() != "Be a pirate." {
		t.Fatal("system prompt not in the system field")
	}
	m := req.Messages
	// The design's request opens with the first panel's assistant message.
	// Oldest first: the todo list (changed 12:00), old.go (13:00), new.go (14:00).
	first := m[0].Content
	if m[0].Role != llm.RoleAssistant || len(first) != 3 ||
		first[0].Text != "Beginning of dynamic panel display. All content displayed below may be considered up to date." ||
		first[1].Text != "Panel automatically generated at 2026-02-19T12:00:00Z" ||
		first[2].Name != "dynamic_panel" || first[2].ID != "panel_P1" || string(first[2].Input) != `{"id":"P1"}` {
		t.Errorf("first panel: %+v", m[0])
	}
	if got := result(m[1]); got != "======= [P1] Todo List =======\n[1] fix bug\n- [ ] find it" {
		t.Errorf("first panel result %q", got)
	}
	// Files are dynamic panels from P10, in the order they first appear:
	// new.go is P10, old.go P11; old.go is older, so it comes first.
	var files []string
	for _, msg := range m {
		for _, b := range msg.Content {
			if b.Type == llm.BlockToolResult && strings.Contains(b.Content[0].Text, "File: ") {
				files = append(files, strings.SplitN(b.Content[0].Text, "\n", 2)[0])
			}
		}
	}
	if strings.Join(files, "|") != "======= [P11] File: src/old.go =======|======= [P10] File: src/new.go =======" {
		t.Errorf("file panels: %q", files)
	}
	if len(m[2].Content) != 2 || m[2].Content[0].Text != "Panel automatically generated at 2026-02-19T13:00:00Z" {
		t.Errorf("only the first panel carries the header: %+v", m[2].Content)
	}
	var footer llm.Message
	var fi int
	for i, msg := range m {
		if uses := msg.ToolUses(); len(uses) > 0 && uses[0].ID == "panel_footer" {
			footer, fi = msg, i
		}
	}
	if !strings.HasPrefix(footer.Content[0].Text, "End of dynamic panel displays.") ||
		!strings.HasSuffix(footer.Content[0].Text, "\nCurrent datetime: 2026-02-19T14:01:00Z") ||
		string(footer.Content[1].Input) != `{"action":"end_panels"}` {
		t.Errorf("footer: %+v", footer)
	}
	// The design shows two user messages: the footer's tool_result, then
	// the seed re-injection, answered by the assistant.
	ack := m[fi+1].Content
	if len(ack) != 1 || ack[0].ID != "panel_footer" || ack[0].Content[0].Text != "Panel display complete. Proceeding with conversation." {
		t.Errorf("footer ack: %+v", ack)
	}
	if m[fi+2].Role != llm.RoleUser || len(m[fi+2].Content) != 1 || m[fi+2].Text() != "System instructions (repeated for emphasis):\n\nBe a pirate." {
		t.Errorf("seed: %+v", m[fi+2])
	}
	if m[fi+3].Role != llm.RoleAssistant || m[fi+3].Text() != "Understood. I will follow these instructions." {
		t.Errorf("seed ack: %+v", m[fi+3])
	}
	conv := m[fi+4:]
	// The orphan call T2 (and its emptied message) is skipped; the tool
	// result and "go on" become one user message.
	if len(conv) != 3 || conv[0].Text() != "Hello!" || len(conv[2].Content) != 2 || conv[2].Content[1].Text != "go on" {
		t.Fatalf("conversation: %+v", conv)
	}
	if len(req.Breakpoints) != 0 {
		t.Error("panels places no breakpoints")
	}
}

// strata's opening user message goes only where the API needs a user
// message first (Bedrock, Gemini); there the panels follow it. OpenAI and
// Anthropic open with the panels, as the design does.
func TestOpeningOnlyWhereTheAPINeedsIt(t *testing.T) {
	for api, want := range map[llm.API]bool{llm.APIAnthropic: false, llm.APIOpenAIChat: false, llm.APIOpenAIResponses: false, llm.APIBedrock: true, llm.APIGemini: true} {
		req, _ := assemble(t, &Layout{}, ctx(api))
		m := req.Messages
		got := m[0].Role == llm.RoleUser && m[0].Text() == "Show the dynamic panels."
		if got != want || (want && m[1].Content[0].Text != "Beginning of dynamic panel display. All content displayed below may be considered up to date.") ||
			(!want && m[0].Content[0].Text != "Beginning of dynamic panel display. All content displayed below may be considered up to date.") {
			t.Errorf("%s: first messages %+v / %+v; opening wanted: %v", api, m[0], m[1], want)
		}
	}
}

// "Seed re-injection | Yes, after panels | No" for OpenAI-compatible
// providers; every API still gets alternating roles.
func TestOpenAIFormHasNoSeedReinjection(t *testing.T) {
	for _, api := range []llm.API{llm.APIOpenAIChat, llm.APIOpenAIResponses, llm.APIBedrock, llm.APIGemini} {
		req, _ := assemble(t, &Layout{}, ctx(api))
		for _, m := range req.Messages {
			if strings.Contains(m.Text(), "Understood. I will follow these instructions.") {
				t.Fatalf("%s: seed re-injection is Anthropic-only", api)
			}
		}
	}
}

// A context without panels is the conversation alone.
func TestNoPanelsNoFooter(t *testing.T) {
	c := &prompt.Context{History: []llm.Message{llm.UserText("hi")}}
	req, _ := assemble(t, &Layout{}, c)
	if len(req.Messages) != 1 || req.Messages[0].Text() != "hi" {
		t.Fatalf("messages: %+v", req.Messages)
	}
	if _, _, err := (&Layout{}).Assemble(&prompt.Context{}); err == nil {
		t.Fatal("an empty conversation must be an error")
	}
}
