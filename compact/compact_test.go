package compact

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
)

// conversation is n user prompts, each answered by one tool call, its
// result and a final answer (4 messages per prompt), every text words long.
func conversation(n, words int) []llm.Message {
	text := strings.Repeat("word ", words)
	var h []llm.Message
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("toolu_%d", i)
		h = append(h, llm.UserText(fmt.Sprintf("prompt %d: %s", i, text)),
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUseBlock(id, "fs_read", json.RawMessage(`{"path":"a.go"}`))}},
			llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock(id, text, false)}},
			llm.AssistantText("answer "+text))
	}
	return h
}

// The chunk is the shortest prefix ending at a user prompt that meets both
// chunk minimums while the rest meets both keep minimums; a history too
// short, or without a boundary, is not compacted.
func TestNext(t *testing.T) {
	h := conversation(20, 100) // 80 messages
	p := Policy{ChunkMinMessages: 10, ChunkMinTokens: 500, KeepMinMessages: 10, KeepMinTokens: 500}
	c, ok := p.Next(h, 0)
	// 10 messages end inside prompt 2 (index 10 is its tool_use): the first
	// boundary at or after 10 is index 12, prompt 3.
	if !ok || c.First != 0 || c.Last != 11 || c.Tokens < 500 {
		t.Fatalf("%+v %v", c, ok)
	}
	if !strings.HasPrefix(c.Text, "Conversation history, messages 1–12 (detached") ||
		!strings.Contains(c.Text, `[tool_use fs_read id=toolu_0] {"path":"a.go"}`) || !strings.Contains(c.Text, "[tool_result id=toolu_2]\nword") ||
		strings.Contains(c.Text, "prompt 3:") {
		t.Errorf("text %q", c.Text[:300])
	}
	// Continuing from the rest gives the next chunk with whole-history indices.
	c2, ok := p.Next(h[12:], 12)
	if !ok || c2.First != 12 || c2.Last != 23 {
		t.Errorf("second chunk %+v %v", c2, ok)
	}
	// Keep minimums: too few tokens would stay live.
	if _, ok := (Policy{ChunkMinMessages: 10, ChunkMinTokens: 1, KeepMinMessages: 10, KeepMinTokens: 1 << 30}).Next(h, 0); ok {
		t.Error("kept tokens below the minimum")
	}
	if _, ok := p.Next(h[:19], 0); ok {
		t.Error("19 messages cannot hold a 10-message chunk and keep 10")
	}
	// One long tool loop: every user message is a tool_result, no boundary.
	loop := []llm.Message{llm.UserText("fix it")}
	for i := 0; i < 40; i++ {
		id := fmt.Sprintf("t%d", i)
		loop = append(loop, llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUseBlock(id, "x", nil)}},
			llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock(id, strings.Repeat("out ", 100), false)}})
	}
	if _, ok := p.Next(loop, 0); ok {
		t.Error("detached inside a tool loop")
	}
}
