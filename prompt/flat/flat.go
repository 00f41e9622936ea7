// Package flat is the naive layout and strata's baseline: one system prompt
// holding the system instructions followed by every context item (summary,
// knowledge, task, hook output, files, skills, file tree) as markdown
// sections, the tool specs, and the whole history in order with the reminder
// appended to the last user message; no cache breakpoints. The model sees
// the same information as in the other layouts, laid out the simplest way
// (docs/flat.md).
// Every other layout is measured against it.
package flat

import (
	"strings"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// Layout is the flat layout. The zero value is ready to use.
type Layout struct{}

func init() { prompt.Register("flat", func() prompt.Layout { return Layout{} }) }

// Name returns "flat".
func (Layout) Name() string { return "flat" }

// Assemble returns system + tools + history unchanged. It fails when the
// history is not a valid conversation (see prompt.CheckHistory).
func (Layout) Assemble(c *prompt.Context) (*llm.Request, *prompt.Breakdown, error) {
	if err := prompt.CheckHistory(c.History); err != nil {
		return nil, nil, err
	}
	req := &llm.Request{
		Model:     c.Model,
		MaxTokens: c.MaxTokens,
		Tools:     c.Tools,
		Messages:  c.History,
	}
	bd := &prompt.Breakdown{Layout: "flat", Counter: c.CounterName()}
	if len(c.Tools) > 0 {
		bd.Spans = append(bd.Spans, prompt.Span{Name: "tools", Role: "tools", First: -1, Last: -1,
			Tokens: c.ToolTokens(c.Tools), Preview: prompt.ToolNames(c.Tools)})
	}
	if sys := systemText(c); sys != "" {
		req.System = []llm.Block{llm.TextBlock(sys)}
		bd.Spans = append(bd.Spans, prompt.Span{Name: "system", Role: "system", First: -1, Last: -1,
			Tokens: c.Tokens(sys), Preview: prompt.Preview(sys, 60)})
	}
	if c.Reminder != "" {
		req.Messages = withReminder(c.History, c.Reminder)
	}
	n := 0
	for _, m := range c.History {
		n += c.BlockTokens(m.Content)
	}
	bd.Spans = append(bd.Spans, prompt.Span{Name: "history", Role: "mixed", First: 0, Last: len(c.History) - 1,
		Tokens: n, Preview: prompt.Preview(c.History[0].Text(), 60)})
	for _, s := range bd.Spans {
		bd.TotalTokens += s.Tokens
	}
	return req, bd, nil
}

// systemText is the system instructions followed by one "## " section per
// non-empty context item, in Context field order.
func systemText(c *prompt.Context) string {
	var b strings.Builder
	b.WriteString(c.System)
	section := func(title, body string) {
		if body == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("## " + title + "\n\n" + body)
	}
	section("Conversation summary", c.Summary)
	section("Knowledge bases", c.Knowledge)
	section("Task", c.Task)
	for _, h := range c.HookOutputs {
		section("Hook output", h)
	}
	for _, f := range c.Files {
		section("File: "+f.Path, "```\n"+f.Content+"\n```")
	}
	var skills []string
	for _, s := range c.Skills {
		skills = append(skills, s.Name+": "+s.Description+" (file: "+s.Path+")")
	}
	section("Skills", strings.Join(skills, "\n"))
	section("Repository files", c.FileTree)
	return b.String()
}

// withReminder returns history with text appended to its last message (the
// current prompt) as a text block; history itself is not modified.
func withReminder(history []llm.Message, text string) []llm.Message {
	out := append([]llm.Message(nil), history...)
	last := &out[len(out)-1]
	last.Content = append(append([]llm.Block(nil), last.Content...), llm.TextBlock(text))
	return out
}
