package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
)

func f64(v float64) *float64 { return &v }

// TestParamsMapping maps a request that uses every field strata models and
// compares the encoded params with the Messages API body written out by hand
// from the API reference.
func TestParamsMapping(t *testing.T) {
	schema := `{"type":"object","properties":{"path":{"$ref":"#/$defs/p"}},"required":["path"],"additionalProperties":false,"$defs":{"p":{"type":"string","minLength":1}}}`
	req := &llm.Request{
		Model:  "claude-sonnet-4-5",
		System: []llm.Block{llm.TextBlock("sys one"), llm.TextBlock("sys two")},
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Block{
				llm.TextBlock("look"),
				{Type: llm.BlockImage, MediaType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}},
				{Type: llm.BlockImage, URL: "https://example.com/a.jpg"},
			}},
			{Role: llm.RoleAssistant, Content: []llm.Block{
				{Type: llm.BlockThinking, Text: "hmm", Signature: "sig=="},
				{Type: llm.BlockRedactedThinking, Data: []byte("opaque")},
				llm.ToolUseBlock("toolu_1", "read", json.RawMessage(`{"path":"a.go"}`)),
			}},
			{Role: llm.RoleUser, Content: []llm.Block{
				{Type: llm.BlockToolResult, ID: "toolu_1", IsError: true, Content: []llm.Block{
					llm.TextBlock("no such file"),
					{Type: llm.BlockImage, MediaType: "image/gif", Data: []byte("GIF8")},
				}},
				llm.TextBlock("again"),
			}},
		},
		Tools:       []llm.ToolSpec{{Name: "read", Description: "Read a file", InputSchema: json.RawMessage(schema)}, {Name: "noargs", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}},
		ToolChoice:  llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "read", DisableParallel: true},
		Temperature: f64(0.5),
		TopP:        f64(0.9),
		Stop:        []string{"END"},
		Reasoning:   llm.Reasoning{BudgetTokens: 2048, Effort: "high"},
		Breakpoints: []llm.Breakpoint{
			{Target: llm.BreakTools},
			{Target: llm.BreakSystem, Block: 1, TTL: "1h"},
			{Target: llm.BreakMessage, Message: 0, Block: 1},
			{Target: llm.BreakMessage, Message: 2, Block: 0, TTL: "5m"},
		},
		User:           "user-42",
		PromptCacheKey: "ignored",
	}
	want := `{
	  "model": "claude-sonnet-4-5", "max_tokens": 4096,
	  "system": [{"type":"text","text":"sys one"},{"type":"text","text":"sys two","cache_control":{"type":"ephemeral","ttl":"1h"}}],
	  "messages": [
	    {"role":"user","content":[
	      {"type":"text","text":"look"},
	      {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw=="},"cache_control":{"type":"ephemeral"}},
	      {"type":"image","source":{"type":"url","url":"https://example.com/a.jpg"}}]},
	    {"role":"assistant","content":[
	      {"type":"thinking","thinking":"hmm","signature":"sig=="},
	      {"type":"redacted_thinking","data":"opaque"},
	      {"type":"tool_use","id":"toolu_1","name":"read","input":{"path":"a.go"}}]},
	    {"role":"user","content":[
	      {"type":"tool_result","tool_use_id":"toolu_1","is_error":true,"cache_control":{"type":"ephemeral","ttl":"5m"},"content":[
	        {"type":"text","text":"no such file"},
	        {"type":"image","source":{"type":"base64","media_type":"image/gif","data":"R0lGOA=="}}]},
	      {"type":"text","text":"again"}]}],
	  "tools": [
	    {"name":"read","description":"Read a file","input_schema":` + schema + `},
	    {"name":"noargs","input_schema":{"type":"object","properties":{}},"cache_control":{"type":"ephemeral"}}],
	  "tool_choice": {"type":"tool","name":"read","disable_parallel_tool_use":true},
	  "temperature": 0.5, "top_p": 0.9, "stop_sequences": ["END"],
	  "thinking": {"type":"enabled","budget_tokens":2048},
	  "output_config": {"effort":"high"},
	  "metadata": {"user_id":"user-42"}
	}`
	p, err := params(req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(string(got), want) {
		t.Errorf("params\n got %s\nwant %s", got, want)
	}
}

// TestParamsToolChoice checks each tool_choice mode, and that a request
// without tools sends no tool_choice (auto, none and disable_parallel hold
// by construction there).
func TestParamsToolChoice(t *testing.T) {
	for _, tc := range []llm.ToolChoice{{Mode: llm.ToolChoiceAuto, DisableParallel: true}, {Mode: llm.ToolChoiceNone}} {
		p, err := params(&llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi")}, ToolChoice: tc})
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(p); strings.Contains(string(b), "tool_choice") {
			t.Errorf("%+v without tools sent %s", tc, b)
		}
	}
	for _, tc := range []struct {
		choice llm.ToolChoice
		want   string // "" = not sent
	}{
		{llm.ToolChoice{}, ""},
		{llm.ToolChoice{DisableParallel: true}, `{"type":"auto","disable_parallel_tool_use":true}`},
		{llm.ToolChoice{Mode: llm.ToolChoiceAuto}, `{"type":"auto"}`},
		{llm.ToolChoice{Mode: llm.ToolChoiceAny, DisableParallel: true}, `{"type":"any","disable_parallel_tool_use":true}`},
		{llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "x"}, `{"type":"tool","name":"x"}`},
		{llm.ToolChoice{Mode: llm.ToolChoiceNone}, `{"type":"none"}`},
	} {
		req := &llm.Request{Model: "m", MaxTokens: 10, Messages: []llm.Message{llm.UserText("hi")},
			Tools: []llm.ToolSpec{{Name: "x"}}, ToolChoice: tc.choice}
		p, err := params(req)
		if err != nil {
			t.Fatalf("%+v: %v", tc.choice, err)
		}
		b, _ := json.Marshal(p)
		var m map[string]json.RawMessage
		json.Unmarshal(b, &m)
		if got, ok := m["tool_choice"]; (tc.want == "") != !ok || (ok && !jsonEqual(string(got), tc.want)) {
			t.Errorf("%+v: tool_choice %s, want %s", tc.choice, got, tc.want)
		}
		if string(m["max_tokens"]) != "10" {
			t.Errorf("max_tokens %s", m["max_tokens"])
		}
	}
}

// TestParamsErrors checks that bad requests fail with an error naming the
// field, and never panic.
func TestParamsErrors(t *testing.T) {
	ok := func() *llm.Request {
		return &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi"), {Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockThinking, Text: "t", Signature: "s"}}}}}
	}
	for _, tc := range []struct {
		name   string
		mutate func(*llm.Request)
		want   string
	}{
		{"no model", func(r *llm.Request) { r.Model = "" }, "model"},
		{"negative max_tokens", func(r *llm.Request) { r.MaxTokens = -1 }, "max_tokens"},
		{"unknown tool_choice", func(r *llm.Request) { r.ToolChoice.Mode = "sometimes" }, "tool_choice"},
		{"tool choice without name", func(r *llm.Request) { r.ToolChoice.Mode = llm.ToolChoiceTool }, "tool_choice"},
		{"tool choice naming an undeclared tool", func(r *llm.Request) {
			r.Tools = []llm.ToolSpec{{Name: "x"}}
			r.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "y"}
		}, `tool "y"`},
		{"effort without a Claude form", func(r *llm.Request) { r.Reasoning.Effort = "minimal" }, `reasoning.effort "minimal"`},
		{"breakpoint on thinking", func(r *llm.Request) {
			r.Breakpoints = []llm.Breakpoint{{Target: llm.BreakMessage, Message: 1, Block: 0}}
		}, "messages[1].content[0]"},
		{"five breakpoints", func(r *llm.Request) {
			for i := 0; i < 5; i++ {
				r.Breakpoints = append(r.Breakpoints, llm.Breakpoint{Target: llm.BreakMessage})
			}
		}, "breakpoints"},
		{"bad media type", func(r *llm.Request) {
			r.Messages[0].Content = append(r.Messages[0].Content, llm.Block{Type: llm.BlockImage, MediaType: "image/bmp", Data: []byte{1}})
		}, "image/bmp"},
		{"small thinking budget", func(r *llm.Request) { r.Reasoning.BudgetTokens = 100 }, "budget_tokens"},
		{"budget over max_tokens", func(r *llm.Request) { r.Reasoning.BudgetTokens = 5000; r.MaxTokens = 4000 }, "budget_tokens"},
		{"schema not an object type", func(r *llm.Request) {
			r.Tools = []llm.ToolSpec{{Name: "x", InputSchema: json.RawMessage(`{"type":"array"}`)}}
		}, `tools[0] "x"`},
		{"tool_result with a tool_use inside", func(r *llm.Request) {
			r.Messages[0].Content = []llm.Block{{Type: llm.BlockToolResult, ID: "t", Content: []llm.Block{llm.ToolUseBlock("a", "b", nil)}}}
		}, "tool_result content[0]"},
		{"tool_use input not an object", func(r *llm.Request) {
			r.Messages[1].Content = []llm.Block{{Type: llm.BlockToolUse, ID: "a", Name: "b", Input: json.RawMessage(`[1]`)}}
		}, "input is not a JSON object"},
	} {
		r := ok()
		tc.mutate(r)
		_, err := params(r)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
	if _, err := params(ok()); err != nil {
		t.Errorf("valid request: %v", err)
	}
}
