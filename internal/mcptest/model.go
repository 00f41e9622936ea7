package mcptest

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// ToolModel is an Anthropic model on 127.0.0.1 (llm/replay) whose first
// answer calls one tool with {} and whose later answers say "done": the
// scripted model of tests that drive an MCP tool through the loop.
type ToolModel struct {
	// URL is the base URL (ANTHROPIC_BASE_URL, strata.Options.BaseURL).
	URL    string
	mu     sync.Mutex
	bodies []string
}

// NewToolModel starts a ToolModel calling tool (its model-facing name),
// closed when t ends.
func NewToolModel(t testing.TB, tool string) *ToolModel {
	m := &ToolModel{}
	srv, err := replay.NewResponder(func(r replay.Request) replay.Response {
		m.mu.Lock()
		m.bodies = append(m.bodies, string(r.Body))
		n := len(m.bodies)
		m.mu.Unlock()
		b := llm.TextBlock("done")
		if n == 1 {
			b = llm.ToolUseBlock("toolu_1", tool, json.RawMessage(`{}`))
		}
		resp, err := replay.Turn(llm.APIAnthropic, replay.Reply{Blocks: []llm.Block{b}})
		if err != nil {
			return replay.Response{Status: 500, Body: []byte(err.Error())}
		}
		return resp
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	m.URL = srv.URL()
	return m
}

// Bodies returns the request bodies received so far.
func (m *ToolModel) Bodies() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.bodies...)
}
