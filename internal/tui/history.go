package tui

import (
	"fmt"
	"strings"

	"github.com/strata-agent/strata/llm"
)

// ShowHistory puts a resumed session's earlier conversation into the
// transcript, as the chat showed it (prompts, the model's text, tool calls
// and their results), under a line saying where it comes from. Steering
// and system-reminder text the runtime added to user messages is shown as
// it was sent.
func (m *Model) ShowHistory(msgs []llm.Message, from string) {
	if len(msgs) == 0 {
		return
	}
	m.tr.add(kNotice, fmt.Sprintf("── %s: %d earlier message(s) ──", from, len(msgs)))
	calls := map[string]*llm.Block{}
	for _, msg := range msgs {
		for i := range msg.Content {
			b := &msg.Content[i]
			switch {
			case b.Type == llm.BlockText && msg.Role == llm.RoleUser:
				m.tr.add(kUser, strings.TrimSpace(b.Text))
			case b.Type == llm.BlockText:
				m.tr.stream(b.Text)
			case b.Type == llm.BlockToolUse:
				calls[b.ID] = b
				m.tr.add(kTool, fmt.Sprintf("⏺ %s %s", b.Name, callInput(*b)))
			case b.Type == llm.BlockToolResult:
				m.result(calls[b.ID], b)
			}
		}
	}
	m.tr.add(kNotice, "── now ──")
	m.refresh()
}
