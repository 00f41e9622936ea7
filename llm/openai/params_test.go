package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
)

// conversation is a request exercising every block kind.
func conversation() *llm.Request {
	temp := 0.5
	return &llm.Request{
		Model:  "m",
		System: []llm.Block{llm.TextBlock("be brief"), llm.TextBlock("be kind")},
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock("look"), {Type: llm.BlockImage, MediaType: "image/png", Data: []byte{1, 2, 3}}}},
			{Role: llm.RoleAssistant, Content: []llm.Block{
				{Type: llm.BlockThinking, Text: "hmm", Signature: "enc", ItemID: "rs_1"},
				{Type: llm.BlockText, Text: "calling", ItemID: "msg_1"},
				{Type: llm.BlockToolUse, ID: "call_a", ItemID: "fc_a", Name: "f", Input: json.RawMessage(`{"x": 1}`)},
				{Type: llm.BlockToolUse, ID: "call_b", Name: "g", Input: json.RawMessage(`{}`)},
			}},
			{Role: llm.RoleUser, Content: []llm.Block{
				llm.TextBlock("thanks"),
				llm.ToolResultBlock("call_a", "1", false),
				{Type: llm.BlockToolResult, ID: "call_b", Content: []llm.Block{llm.TextBlock("see"), {Type: llm.BlockImage, URL: "https://x/y.png"}}},
			}},
		},
		Tools:       []llm.ToolSpec{{Name: "f", Description: "d", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"integer","maximum":9007199254740993}}}`)}, {Name: "g"}},
		ToolChoice:  llm.ToolChoice{Mode: llm.ToolChoiceAny, DisableParallel: true},
		MaxTokens:   100,
		Temperature: &temp,
		Reasoning:   llm.Reasoning{Effort: "low", Summary: "auto"},
		Breakpoints: []llm.Breakpoint{{Target: llm.BreakSystem, Block: 1}},
		User:        "u1",
	}
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestChatParamsMapping(t *testing.T) {
	req := conversation()
	req.Stop = []string{"END"}
	req.Reasoning.Summary = "" // Chat has no reasoning summaries (an error, see TestParamsErrors)
	p, err := chatParams(req)
	if err != nil {
		t.Fatal(err)
	}
	got := marshal(t, p)
	want := `{"messages":[` +
		`{"content":"be brief\n\nbe kind","role":"system"},` +
		`{"content":[{"text":"look","type":"text"},{"image_url":{"url":"data:image/png;base64,AQID"},"type":"image_url"}],"role":"user"},` +
		`{"content":"calling","tool_calls":[{"id":"call_a","function":{"arguments":"{\"x\": 1}","name":"f"},"type":"function"},{"id":"call_b","function":{"arguments":"{}","name":"g"},"type":"function"}],"role":"assistant"},` +
		`{"content":"1","tool_call_id":"call_a","role":"tool"},` +
		`{"content":"see","tool_call_id":"call_b","role":"tool"},` +
		`{"content":[{"text":"thanks","type":"text"},{"image_url":{"url":"https://x/y.png"},"type":"image_url"}],"role":"user"}],` +
		`"model":"m","max_completion_tokens":100,"temperature":0.5,"parallel_tool_calls":false,"user":"u1","reasoning_effort":"low","stop":["END"],` +
		`"tool_choice":"required","tools":[{"function":{"name":"f","description":"d","parameters":{"properties":{"x":{"maximum":9007199254740993,"type":"integer"}},"type":"object"}},"type":"function"},` +
		`{"function":{"name":"g","parameters":{"properties":{},"type":"object"}},"type":"function"}]}`
	if !jsonEqual(got, want) {
		t.Errorf("ChatParams\n got %s\nwant %s", got, want)
	}
	if !strings.Contains(got, "9007199254740993") {
		t.Errorf("schema number lost precision: %s", got)
	}
}

func TestResponsesParamsMapping(t *testing.T) {
	p, err := responsesParams(conversation())
	if err != nil {
		t.Fatal(err)
	}
	got := marshal(t, p)
	want := `{"instructions":"be brief\n\nbe kind","max_output_tokens":100,"parallel_tool_calls":false,"safety_identifier":"u1","store":false,"temperature":0.5,` +
		`"include":["reasoning.encrypted_content"],"model":"m","reasoning":{"effort":"low","summary":"auto"},"tool_choice":"required","input":[` +
		`{"content":[{"text":"look","type":"input_text"},{"detail":"auto","image_url":"data:image/png;base64,AQID","type":"input_image"}],"role":"user"},` +
		`{"id":"rs_1","summary":[{"text":"hmm","type":"summary_text"}],"encrypted_content":"enc","type":"reasoning"},` +
		`{"id":"msg_1","content":[{"annotations":[],"text":"calling","type":"output_text"}],"status":"completed","role":"assistant","type":"message"},` +
		`{"arguments":"{\"x\": 1}","call_id":"call_a","name":"f","id":"fc_a","type":"function_call"},` +
		`{"arguments":"{}","call_id":"call_b","name":"g","type":"function_call"},` +
		`{"output":"1","call_id":"call_a","type":"function_call_output"},` +
		`{"output":[{"text":"see","type":"input_text"},{"image_url":"https://x/y.png","detail":"auto","type":"input_image"}],"call_id":"call_b","type":"function_call_output"},` +
		`{"content":"thanks","role":"user"}],` +
		`"tools":[{"strict":false,"parameters":{"properties":{"x":{"maximum":9007199254740993,"type":"integer"}},"type":"object"},"name":"f","description":"d","type":"function"},` +
		`{"strict":false,"parameters":{"properties":{},"type":"object"},"name":"g","type":"function"}]}`
	if !jsonEqual(got, want) {
		t.Errorf("ResponsesParams\n got %s\nwant %s", got, want)
	}
}

// TestResponsesInclude: reasoning.encrypted_content is requested only when
// reasoning is configured or a reasoning item is sent.
func TestResponsesInclude(t *testing.T) {
	plain := &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi")}}
	withItem := &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi"),
		{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockThinking, ItemID: "rs_1", Signature: "e"}, llm.TextBlock("ok")}}, llm.UserText("more")}}
	foreign := &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi"),
		{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockThinking, Text: "anthropic", Signature: "sig"}, llm.TextBlock("ok")}}, llm.UserText("more")}}
	effort := &llm.Request{Model: "m", Messages: plain.Messages, Reasoning: llm.Reasoning{Effort: "high"}}
	for _, c := range []struct {
		name string
		req  *llm.Request
		want bool
	}{{"plain", plain, false}, {"reasoning item", withItem, true}, {"foreign thinking dropped", foreign, false}, {"effort", effort, true}} {
		p, err := responsesParams(c.req)
		if err != nil {
			t.Fatal(err)
		}
		s := marshal(t, p)
		if got := strings.Contains(s, `"include":["reasoning.encrypted_content"]`); got != c.want {
			t.Errorf("%s: include=%v, want %v: %s", c.name, got, c.want, s)
		}
		if c.name == "foreign thinking dropped" && strings.Contains(s, "anthropic") {
			t.Errorf("thinking without ItemID was sent: %s", s)
		}
	}
}

// TestToolChoiceWithoutTools: OpenAI rejects tool_choice and
// parallel_tool_calls without tools, and auto / none / no parallel calls
// hold there anyway, so neither API sends them.
func TestToolChoiceWithoutTools(t *testing.T) {
	for _, tc := range []llm.ToolChoice{{Mode: llm.ToolChoiceNone, DisableParallel: true}, {Mode: llm.ToolChoiceAuto}} {
		req := &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi")}, ToolChoice: tc}
		c, err := chatParams(req)
		if err != nil {
			t.Fatal(err)
		}
		r, err := responsesParams(req)
		if err != nil {
			t.Fatal(err)
		}
		for _, body := range []string{marshal(t, c), marshal(t, r)} {
			if strings.Contains(body, "tool_choice") || strings.Contains(body, "parallel_tool_calls") {
				t.Errorf("%+v without tools sent %s", tc, body)
			}
		}
	}
}

// TestParamsErrors: bad input is a clear error naming the field.
func TestParamsErrors(t *testing.T) {
	user := []llm.Message{llm.UserText("hi")}
	cases := []struct {
		name      string
		req       *llm.Request
		chat, rsp string // substring of the error; "" = no error
	}{
		{"nil", nil, "request is nil", "request is nil"},
		{"no model", &llm.Request{Messages: user}, "model is empty", "model is empty"},
		{"tool choice without name", &llm.Request{Model: "m", Messages: user, Tools: []llm.ToolSpec{{Name: "f"}}, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceTool}}, "needs a tool name", "needs a tool name"},
		{"forced call without tools", &llm.Request{Model: "m", Messages: user, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceAny}}, "no tools", "no tools"},
		{"thinking budget", &llm.Request{Model: "m", Messages: user, Reasoning: llm.Reasoning{BudgetTokens: 2048, Effort: "low"}}, "reasoning.budget_tokens 2048: the Chat Completions API has no thinking budget", "reasoning.budget_tokens 2048: the Responses API has no thinking budget"},
		{"summary on chat", &llm.Request{Model: "m", Messages: user, Reasoning: llm.Reasoning{Summary: "auto"}}, `reasoning.summary "auto"`, ""},
		{"unknown tool choice", &llm.Request{Model: "m", Messages: user, ToolChoice: llm.ToolChoice{Mode: "sometimes"}}, `tool_choice mode "sometimes"`, `tool_choice mode "sometimes"`},
		{"image without media type", &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockImage, Data: []byte{1}}}}}}, "messages[0]: block 0: image media_type", "messages[0]: block 0: image media_type"},
		{"assistant image", &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockImage, URL: "u"}}}}}, `messages[0]: block 0: type "image"`, `messages[0]: block 0: type "image"`},
		{"bad tool input", &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolUse, ID: "c", Name: "f", Input: json.RawMessage(`[1]`)}}}}}, "not a JSON object", "not a JSON object"},
		{"negative max tokens", &llm.Request{Model: "m", Messages: user, MaxTokens: -1}, "max_tokens -1", "max_tokens -1"},
		{"stop on responses", &llm.Request{Model: "m", Messages: user, Stop: []string{"x"}}, "", "no stop sequences"},
	}
	for _, c := range cases {
		_, err := chatParams(c.req)
		checkErr(t, "ChatParams "+c.name, err, c.chat)
		_, err = responsesParams(c.req)
		checkErr(t, "ResponsesParams "+c.name, err, c.rsp)
	}
}

func checkErr(t *testing.T, name string, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("%s: unexpected error %v", name, err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Errorf("%s: error %v, want one containing %q", name, err, want)
	}
}
