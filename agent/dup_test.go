package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/anthropic"
	"github.com/strata-agent/strata/llm/openai"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/prompt/flat"
	"github.com/strata-agent/strata/tool"
)

// wireToolIDs extracts, from a request body of api, every tool_use id and
// every tool_result id, in order.
func wireToolIDs(t *testing.T, api llm.API, body []byte) (uses, results []string) {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
			Calls   []struct {
				ID string `json:"id"`
			} `json:"tool_calls"`
			CallID string `json:"tool_call_id"`
		} `json:"messages"`
		Input []struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	switch api {
	case llm.APIAnthropic:
		for _, m := range req.Messages {
			var blocks []struct {
				Type      string `json:"type"`
				ID        string `json:"id"`
				ToolUseID string `json:"tool_use_id"`
			}
			if err := json.Unmarshal(m.Content, &blocks); err != nil {
				continue // a string content
			}
			for _, b := range blocks {
				switch b.Type {
				case "tool_use":
					uses = append(uses, b.ID)
				case "tool_result":
					results = append(results, b.ToolUseID)
				}
			}
		}
	case llm.APIOpenAIChat:
		for _, m := range req.Messages {
			for _, c := range m.Calls {
				uses = append(uses, c.ID)
			}
			if m.Role == "tool" {
				results = append(results, m.CallID)
			}
		}
	case llm.APIOpenAIResponses:
		for _, it := range req.Input {
			switch it.Type {
			case "function_call":
				uses = append(uses, it.CallID)
			case "function_call_output":
				results = append(results, it.CallID)
			}
		}
	}
	return uses, results
}

// A response with two tool_use blocks sharing one id: the first call runs,
// the later one is renamed to a unique id and answered with an is_error
// tool_result without running, so the next request (on every wire API)
// carries unique tool_use ids, each answered by exactly one result.
func TestAttackDuplicateToolUseIDRunsOnce(t *testing.T) {
	providers := map[llm.API]func(url string) llm.Provider{
		llm.APIAnthropic:       func(u string) llm.Provider { return anthropic.New(anthropic.Config{APIKey: "k", BaseURL: u}) },
		llm.APIOpenAIChat:      func(u string) llm.Provider { return openai.NewChat(openai.Config{APIKey: "k", BaseURL: u}) },
		llm.APIOpenAIResponses: func(u string) llm.Provider { return openai.NewResponses(openai.Config{APIKey: "k", BaseURL: u}) },
	}
	for api, newProvider := range providers {
		t.Run(string(api), func(t *testing.T) {
			bash := func(cmd string) json.RawMessage { b, _ := json.Marshal(map[string]string{"command": cmd}); return b }
			calls, err := replay.Turn(api, replay.Reply{Blocks: []llm.Block{
				llm.ToolUseBlock("call_dup", "execute_bash", bash("echo first >> log.txt")),
				llm.ToolUseBlock("call_dup", "execute_bash", bash("echo second >> log.txt")),
			}, Usage: llm.Usage{Input: 10, Output: 5}})
			if err != nil {
				t.Fatal(err)
			}
			final, err := replay.Text(api, "done")
			if err != nil {
				t.Fatal(err)
			}
			srv, err := replay.NewServer(calls, final)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			ws := t.TempDir()
			a, err := New(Config{Provider: newProvider(srv.URL()), Layout: flat.Layout{}, Model: "m",
				Tools: tool.NewRegistry(tool.Builtins()...), Env: &tool.Env{Workdir: ws}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Prompt(context.Background(), "log twice"); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(filepath.Join(ws, "log.txt")); string(b) != "first\n" {
				t.Errorf("log.txt = %q; want only the first call to have run", b)
			}
			h := a.History()
			uses, results := h[1].ToolUses(), h[2].Content
			if len(uses) != 2 || uses[0].ID != "call_dup" || uses[1].ID == "call_dup" {
				t.Fatalf("tool_use ids in the history: %+v", uses)
			}
			if len(results) != 2 || results[0].IsError || !results[1].IsError || results[1].ID != uses[1].ID ||
				!strings.Contains(results[1].Content[0].Text, `duplicate tool_use id "call_dup"`) {
				t.Errorf("tool results: %+v", results)
			}
			reqs := srv.Received()
			if len(reqs) != 2 {
				t.Fatalf("%d requests; want 2", len(reqs))
			}
			wu, wr := wireToolIDs(t, api, reqs[1].Body)
			seen := map[string]int{}
			for _, id := range wu {
				seen[id]++
			}
			if len(wu) != 2 || len(seen) != 2 || strings.Join(wu, ",") != strings.Join(wr, ",") {
				t.Errorf("next request: tool_use ids %q, tool_result ids %q; want 2 unique ids, each answered once", wu, wr)
			}
		})
	}
}
