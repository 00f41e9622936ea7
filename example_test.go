package strata_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/tool"
)

// offline scripts the model's answers as Anthropic Messages streams, played
// by llm/replay on 127.0.0.1 to the real SDK: a tool call when call is set,
// then the text. Drop Options.Replay and Options.ProviderName to ask the
// real model (ANTHROPIC_API_KEY or OPENAI_API_KEY).
func offline(call *llm.Block, text string) []replay.Response {
	var out []replay.Response
	if call != nil {
		r, err := replay.ToolCall(llm.APIAnthropic, call.ID, call.Name, call.Input)
		if err != nil {
			log.Fatal(err)
		}
		out = append(out, r)
	}
	r, err := replay.Text(llm.APIAnthropic, text)
	if err != nil {
		log.Fatal(err)
	}
	return append(out, r)
}

// One prompt with strata's default agent; the model is scripted offline and
// reads README-like files with the real glob tool first.
func ExampleRun() {
	script := offline(&llm.Block{ID: "call_1", Name: "glob", Input: json.RawMessage(`{"pattern":"*.md"}`)},
		"There are two Markdown files: NOTES.md and RELEASE.md.")

	res, err := strata.Run(context.Background(), strata.Options{Dir: "testdata/project",
		ProviderName: "anthropic", Replay: script}, "Which Markdown files are there?")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Message.Text())
	fmt.Println("model calls:", res.Turns)
	// Output:
	// There are two Markdown files: NOTES.md and RELEASE.md.
	// model calls: 2
}

// Run a kiro agent file (here found by name in testdata/project/.kiro/agents)
// for a whole session: its prompt, resources, tools, MCP servers and hooks
// come from the file.
func ExampleOpen() {
	// The model's two answers, scripted offline: read RELEASE.md, then answer.
	read, _ := replay.ToolCall(llm.APIAnthropic, "call_1", "fs_read", json.RawMessage(`{"operations":[{"mode":"Line","path":"RELEASE.md"}]}`))
	answer, _ := replay.Text(llm.APIAnthropic, "The checklist is in RELEASE.md: tag, then publish.")

	ctx := context.Background()
	ws, err := strata.Open(ctx, strata.Options{Dir: "testdata/project", Agent: "helper",
		ProviderName: "anthropic", Replay: []replay.Response{read, answer}}) // offline; omit both to use ANTHROPIC_API_KEY
	if err != nil {
		log.Fatal(err)
	}
	defer ws.Close()
	s, err := ws.NewSession(ctx, strata.SessionOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	res, err := s.Prompt(ctx, "Where is the release checklist?")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Message.Text())
	// Output:
	// The checklist is in RELEASE.md: tag, then publish.
}

// A custom tool with a typed input: its JSON Schema comes from the struct.
func Example_typedTool() {
	type weatherIn struct {
		City string `json:"city" jsonschema:"the city to report on"`
	}
	// The program trusts its own tool: it runs without asking (without
	// PreApproved it would be asked about like a built-in).
	weather := tool.WithTraits(tool.Func("get_weather", "Current weather for a city.", func(_ context.Context, in weatherIn) (string, error) {
		fmt.Println("get_weather called for", in.City)
		return "Sunny, 21 °C in " + in.City, nil
	}), tool.Traits{Effect: tool.ReadOnly, PreApproved: true})
	script := offline(&llm.Block{ID: "call_1", Name: "get_weather", Input: json.RawMessage(`{"city":"Oslo"}`)}, "It is sunny in Oslo.")

	res, err := strata.Run(context.Background(), strata.Options{Tools: []tool.Tool{weather},
		ProviderName: "anthropic", Replay: script}, "How is the weather in Oslo?")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Message.Text())
	// Output:
	// get_weather called for Oslo
	// It is sunny in Oslo.
}

// Stream a prompt's events with a range-over-func loop; breaking out of the
// loop would cancel the prompt.
func ExampleSession_Stream() {
	script := offline(&llm.Block{ID: "call_1", Name: "glob", Input: json.RawMessage(`{"pattern":"*.md"}`)}, "Two files.")
	ctx := context.Background()
	ws, err := strata.Open(ctx, strata.Options{Dir: "testdata/project", ProviderName: "anthropic", Replay: script})
	if err != nil {
		log.Fatal(err)
	}
	defer ws.Close()
	s, err := ws.NewSession(ctx, strata.SessionOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	for e, err := range s.Stream(ctx, "How many Markdown files?") {
		switch {
		case err != nil:
			log.Fatal(err)
		case e.Kind == event.TurnStart:
			fmt.Println("turn", e.Turn.Index, e.Trigger)
		case e.Kind == event.ToolExecutionEnd:
			fmt.Printf("%s → %s\n", e.ToolCall.Name, strings.ReplaceAll(e.ToolResult.Content[0].Text, "\n", ", "))
		case e.Kind == event.MessageEnd && e.Message.Role == llm.RoleAssistant && e.StopReason == llm.StopEndTurn:
			fmt.Println("answer:", e.Message.Text())
		}
	}
	// Output:
	// turn 0 user
	// glob → NOTES.md, RELEASE.md
	// turn 1 continuation
	// answer: Two files.
}

// Show the exact request a prompt would send — here the Anthropic body of
// the kiro layout — without an API key and without sending it.
func ExampleWorkspace_Render() {
	ctx := context.Background()
	ws, err := strata.Open(ctx, strata.Options{Dir: "testdata/project", Agent: "helper", Layout: "kiro",
		ProviderName: "anthropic", APIKey: "unused", Model: "claude-sonnet-4-5"})
	if err != nil {
		log.Fatal(err)
	}
	defer ws.Close()
	r, err := ws.Render(ctx, strata.RenderOptions{Prompt: "Where is the release checklist?"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Method, r.URL)
	for _, s := range r.Breakdown.Spans {
		fmt.Println(strings.TrimSpace(fmt.Sprintf("%-22s %-9s %s", s.Name, s.Role, s.Preview[:min(len(s.Preview), 24)])))
	}
	var body struct {
		System   any `json:"system"`
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		log.Fatal(err)
	}
	fmt.Println("system prompt sent:", body.System != nil, "· messages:", len(body.Messages))
	// Output:
	// POST http://127.0.0.1:1/v1/messages
	// tools                  tools     fs_read, glob, grep
	// context: resources     user      --- CONTEXT ENTRY BEGIN
	// context: agent prompt  user      Follow this instruction:
	// ack                    assistant I will fully incorporate
	// history                mixed     Where is the release che
	// system prompt sent: false · messages: 3
}
