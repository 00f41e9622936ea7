// Package panels is the layout of Context Pilot (docs/panels.md): the system
// prompt, then every context item as a synthetic
// `dynamic_panel` tool_use / tool_result pair ordered by last refresh time
// (oldest, most stable first), a footer pair, the system prompt repeated for
// emphasis (Anthropic only), then the real conversation with empty messages
// removed and orphan tool calls skipped.
//
// Exact texts are Context Pilot's (docs/panels.md, rules 10–12); the "timestamp unknown"
// fallback and the footer template's full wording are Context Pilot's
// (src/constants prompts: PANEL_TIMESTAMP_UNKNOWN, PANEL_FOOTER).
package panels

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// Exact texts (docs/panels.md, "request", rules 10–12).
const (
	Header          = "Beginning of dynamic panel display. All content displayed below may be considered up to date."
	TimestampPrefix = "Panel automatically generated at "
	TimestampNone   = "Panel content (timestamp unknown - static or never refreshed)"
	FooterPrefix    = "End of dynamic panel displays. All content displayed above may be considered up to date: it is automatically kept updated as we speak.\n\n"
	FooterAck       = "Panel display complete. Proceeding with conversation."
	SeedPrefix      = "System instructions (repeated for emphasis):\n\n"
	SeedAck         = "Understood. I will follow these instructions."
	ToolName        = "dynamic_panel"
)

// Layout is the panels layout. The zero value is ready to use.
type Layout struct{}

func init() { prompt.Register("panels", func() prompt.Layout { return Layout{} }) }

// Name returns "panels".
func (Layout) Name() string { return "panels" }

// Item is one context panel.
type Item struct {
	ID        string // "P1", "P2", …
	Header    string // e.g. "File: src/main.go"
	Content   string
	Refreshed int64 // Unix ms of the last content change; 0 = static
}

// Items maps a context to panels, in the order Context Pilot shows them:
// sorted by Refreshed ascending (static items first), ties by ID. IDs are
// assigned in a fixed order: task (Todo List), skills (Library), knowledge
// (Memories), summary, hook outputs, files. Empty items are dropped.
func Items(c *prompt.Context) []Item {
	var out []Item
	add := func(header, content string, refreshed int64) {
		if content == "" {
			return
		}
		out = append(out, Item{ID: "P" + strconv.Itoa(len(out)+1), Header: header, Content: content, Refreshed: refreshed})
	}
	add("Todo List", c.Task, 0)
	if len(c.Skills) > 0 {
		var b strings.Builder
		for _, s := range c.Skills {
			b.WriteString("- " + s.Name + ": " + s.Description + " (" + s.Path + ")\n")
		}
		add("Library", b.String(), 0)
	}
	add("Memories", c.Knowledge, 0)
	add("Conversation Summary", c.Summary, 0)
	for i, h := range c.HookOutputs {
		add("Hook Output "+strconv.Itoa(i+1), h, 0)
	}
	for _, f := range c.Files {
		add("File: "+f.Path, f.Content, f.Refreshed)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Refreshed < out[j].Refreshed })
	return out
}

// ISO formats Unix ms as Context Pilot does: "2006-01-02T15:04:05Z" (UTC).
func ISO(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05Z") }

// timestamp returns the panel timestamp line; times before 2020 are unknown
// (Context Pilot's rule).
func timestamp(ms int64) string {
	if ms < 1577836800000 {
		return TimestampNone
	}
	return TimestampPrefix + ISO(ms)
}

// Footer returns the footer text for a request made at now (Unix ms).
// strata keeps no per-message timestamps, so the "Last message datetimes"
// section of Context Pilot's template is empty.
func Footer(now int64) string {
	return FooterPrefix + "\nCurrent datetime: " + ISO(now)
}

// Assemble lays out the request. It fails only on an empty history.
func (Layout) Assemble(c *prompt.Context) (*llm.Request, *prompt.Breakdown, error) {
	req := &llm.Request{Model: c.Model, MaxTokens: c.MaxTokens, Tools: c.Tools}
	bd := &prompt.Breakdown{Layout: "panels", Counter: c.CounterName()}
	span := func(name, role string, first int, text string) {
		bd.Spans = append(bd.Spans, prompt.Span{Name: name, Role: role, First: first, Last: len(req.Messages) - 1,
			Tokens: c.Tokens(text), Preview: prompt.Preview(text, 60)})
	}
	if len(c.Tools) > 0 {
		bd.Spans = append(bd.Spans, prompt.Span{Name: "tools", Role: "tools", First: -1, Last: -1,
			Tokens: c.ToolTokens(c.Tools), Preview: prompt.ToolNames(c.Tools)})
	}
	if c.System != "" {
		req.System = []llm.Block{llm.TextBlock(c.System)}
		bd.Spans = append(bd.Spans, prompt.Span{Name: "system", Role: "system", First: -1, Last: -1,
			Tokens: c.Tokens(c.System), Preview: prompt.Preview(c.System, 60)})
	}
	items := Items(c)
	for i, it := range items {
		first := len(req.Messages)
		var blocks []llm.Block
		if i == 0 {
			blocks = append(blocks, llm.TextBlock(Header))
		}
		input, _ := json.Marshal(map[string]string{"id": it.ID})
		blocks = append(blocks, llm.TextBlock(timestamp(it.Refreshed)), llm.ToolUseBlock("panel_"+it.ID, ToolName, input))
		content := "======= [" + it.ID + "] " + it.Header + " =======\n" + it.Content
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: blocks},
			llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("panel_"+it.ID, content, false)}})
		span("panel "+it.ID+" "+it.Header, "mixed", first, content)
	}
	if len(items) > 0 {
		first := len(req.Messages)
		footer := Footer(c.Now)
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock(footer),
				llm.ToolUseBlock("panel_footer", ToolName, json.RawMessage(`{"action":"end_panels"}`))}},
			llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("panel_footer", FooterAck, false)}})
		span("footer", "mixed", first, footer)
	}
	if c.System != "" && (c.API == "" || c.API == llm.APIAnthropic) {
		first := len(req.Messages)
		req.Messages = append(req.Messages, llm.UserText(SeedPrefix+c.System), llm.AssistantText(SeedAck))
		span("seed re-injection", "mixed", first, SeedPrefix+c.System+SeedAck)
	}
	hist := Conversation(c.History)
	if len(hist) == 0 {
		return nil, nil, errEmpty
	}
	first := len(req.Messages)
	req.Messages = append(req.Messages, hist...)
	n := 0
	for _, m := range hist {
		n += c.BlockTokens(m.Content)
	}
	bd.Spans = append(bd.Spans, prompt.Span{Name: "conversation", Role: "mixed", First: first, Last: len(req.Messages) - 1,
		Tokens: n, Preview: prompt.Preview(hist[0].Text(), 60)})
	for _, s := range bd.Spans {
		bd.TotalTokens += s.Tokens
	}
	return req, bd, nil
}

type emptyError struct{}

func (emptyError) Error() string {
	return "panels: the conversation is empty: a request needs at least one user message"
}

var errEmpty = emptyError{}

// Conversation returns the history as Context Pilot sends it: messages with
// no content removed, and tool_use blocks that no tool_result in the next
// message answers (orphans, e.g. cut by max_tokens) skipped, so the API never
// sees an unanswered call (docs/panels.md, rule 14).
func Conversation(history []llm.Message) []llm.Message {
	out := make([]llm.Message, 0, len(history))
	for i, m := range history {
		var keep []llm.Block
		for _, b := range m.Content {
			if b.Type == llm.BlockToolUse && !answered(history, i, b.ID) {
				continue
			}
			if b.Type == llm.BlockText && b.Text == "" {
				continue
			}
			keep = append(keep, b)
		}
		if len(keep) > 0 {
			out = append(out, llm.Message{Role: m.Role, Content: keep})
		}
	}
	return out
}

func answered(history []llm.Message, i int, id string) bool {
	if i+1 >= len(history) {
		return false
	}
	for _, b := range history[i+1].Content {
		if b.Type == llm.BlockToolResult && b.ID == id {
			return true
		}
	}
	return false
}
