package compact_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/strata-agent/strata/compact"
	"github.com/strata-agent/strata/internal/providers"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// A request over the model's window: without a summariser the oldest
// prompt is removed and the text says so; with one (the loop's tl;dr
// writer, a real provider on 127.0.0.1 here) each of its messages stays as
// a tl;dr — a tool result too — and the chunk carries the requests' usage;
// a failed tl;dr removes the messages and reports it.
func TestWindowChunkSummarisesInsteadOfDropping(t *testing.T) {
	big := strings.Repeat("line of a large file\n", 200)
	live := []llm.Message{
		llm.UserText(long),
		{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUseBlock("t1", "fs_read", json.RawMessage(`{"path":"parser.go"}`))}},
		{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("t1", big, false)}},
		llm.AssistantText("ok"),
		llm.UserText("next"),
		llm.AssistantText("fine"),
	}
	c, ok, err := compact.WindowChunk(context.Background(), live, 10, 1000, nil, nil)
	if !ok || err != nil || c.First != 10 || c.Last != 13 {
		t.Fatalf("chunk %d–%d ok=%v err=%v", c.First, c.Last, ok, err)
	}
	removed := "Conversation history, messages 11–14 (" + itoa(c.Tokens) + " tokens): removed to fit the model's context window of 1000 tokens."
	if c.Text != removed {
		t.Errorf("without a summariser:\n%s\nwant\n%s", c.Text, removed)
	}

	srv, err := replay.NewResponder(func(r replay.Request) replay.Response {
		text := "The user asks to fix two parser bugs with a test."
		if strings.Contains(string(r.Body), "line of a large file") {
			text = "parser.go: 200 identical lines."
		}
		resp, _ := replay.Turn(llm.APIAnthropic, replay.Reply{Blocks: []llm.Block{llm.TextBlock(text)}, Usage: llm.Usage{Input: 7, Output: 3}})
		return resp
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	spec, _ := providers.Lookup("anthropic")
	prov, err := providers.New(spec, providers.Options{APIKey: "test", BaseURL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	c, ok, err = compact.WindowChunk(context.Background(), live, 10, 1000, nil, compact.ProviderSummarizer(prov, "claude-sonnet-4-5"))
	if !ok || err != nil {
		t.Fatalf("ok=%v err=%v", ok, err)
	}
	want := "Conversation history, messages 11–14 (" + itoa(c.Tokens) + " tokens): summarized to fit the model's context window of 1000 tokens, one tl;dr per message:" +
		"\n\n[user, tl;dr] The user asks to fix two parser bugs with a test." +
		"\n\n[tool_use fs_read id=t1] {\"path\":\"parser.go\"}" +
		"\n\n[user, tl;dr] parser.go: 200 identical lines." +
		"\n\n[assistant] ok"
	if c.Text != want {
		t.Errorf("with a summariser:\n%s\nwant\n%s", c.Text, want)
	}
	if n := len(srv.Received()); n != 2 || c.Usage.Input != 14 || c.Usage.Output != 6 {
		t.Errorf("%d tl;dr requests, usage %+v; want 2 requests of 7+3 tokens", n, c.Usage)
	}

	boom := errors.New("provider down")
	c, ok, err = compact.WindowChunk(context.Background(), live, 10, 1000, nil, func(context.Context, string) (string, llm.Usage, error) { return "", llm.Usage{}, boom })
	if !ok || !errors.Is(err, boom) || c.Text != removed {
		t.Errorf("failed tl;dr: ok=%v err=%v text %q", ok, err, c.Text)
	}
	if _, ok, _ := compact.WindowChunk(context.Background(), live[:2], 0, 1000, nil, nil); ok {
		t.Error("a single prompt in a tool loop has no boundary to compact at")
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
