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

const long = "Please fix the parser: it drops the last token of every line when the input ends without a newline, " +
	"and the error message names the wrong column. Add a regression test with both cases."

func conversation() []llm.Message {
	return []llm.Message{llm.UserText(long), llm.AssistantText("ok"), llm.UserText("next"), llm.AssistantText("fine")}
}

var tiny = compact.Policy{ChunkMinMessages: 2, ChunkMinTokens: 1, KeepMinMessages: 2, KeepMinTokens: 1}

// The design's conversation table: "Summarized message | Uses tl_dr text
// instead of full content". The tl;dr is written by the same provider,
// asked with Context Pilot's TLDR_PROMPT; texts under TLDR_MIN_TOKENS are
// their own tl;dr.
func TestDetachedChunkShowsModelWrittenTLDR(t *testing.T) {
	srv, err := replay.NewResponder(func(replay.Request) replay.Response {
		r, _ := replay.Text(llm.APIAnthropic, "The user wants the parser's last-token and column bugs fixed, with a test.")
		return r
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
	p := tiny
	p.Summarize = compact.ProviderSummarizer(prov, "claude-sonnet-4-5")
	c, ok, err := p.NextContext(context.Background(), conversation(), 0)
	if !ok || err != nil {
		t.Fatalf("ok=%v err=%v", ok, err)
	}
	want := "Conversation history, messages 1–2 (detached from the live conversation; frozen):\n\n" +
		"[user, tl;dr] The user wants the parser's last-token and column bugs fixed, with a test.\n\n[assistant] ok"
	if c.Text != want {
		t.Errorf("chunk:\n%s\nwant:\n%s", c.Text, want)
	}
	got := srv.Received()
	if len(got) != 1 {
		t.Fatalf("%d tl;dr requests; want 1 (\"ok\" is shorter than TLDR_MIN_TOKENS)", len(got))
	}
	var body struct {
		Model     string
		MaxTokens int `json:"max_tokens"`
		Messages  []struct{ Content []struct{ Text string } }
	}
	if err := json.Unmarshal(got[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Model != "claude-sonnet-4-5" || body.MaxTokens != compact.TLDRMaxTokens ||
		body.Messages[0].Content[0].Text != "Summarize the following message in 1-2 short sentences (max 50 words). Be concise and capture the key point:\n\n"+long {
		t.Errorf("tl;dr request: %s", got[0].Body)
	}
}

// A failed tl;dr keeps the message's full text and is reported.
func TestFailedTLDRKeepsFullText(t *testing.T) {
	p := tiny
	boom := errors.New("provider down")
	p.Summarize = func(context.Context, string) (string, llm.Usage, error) { return "", llm.Usage{}, boom }
	c, ok, err := p.NextContext(context.Background(), conversation(), 0)
	if !ok || !errors.Is(err, boom) {
		t.Fatalf("ok=%v err=%v", ok, err)
	}
	if !strings.Contains(c.Text, "[user] "+long) {
		t.Errorf("chunk lost the message: %s", c.Text)
	}
	plain, _ := tiny.Next(conversation(), 0)
	if c.Text != plain.Text {
		t.Error("a chunk whose tl;dr failed must equal the chunk without tl;dr")
	}
}
