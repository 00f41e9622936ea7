package replay_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/anthropic"
	"github.com/strata-agent/strata/llm/bedrock"
	"github.com/strata-agent/strata/llm/gemini"
	"github.com/strata-agent/strata/llm/openai"
	"github.com/strata-agent/strata/llm/replay"
)

// requestModel is the model every round-trip request names.
const requestModel = "requested-model"

// provider returns the real provider of api pointed at baseURL, with fake
// credentials.
func provider(t *testing.T, api llm.API, baseURL string) llm.Provider {
	t.Helper()
	switch api {
	case llm.APIAnthropic:
		return anthropic.New(anthropic.Config{APIKey: "test-key", BaseURL: baseURL})
	case llm.APIOpenAIChat:
		return openai.NewChat(openai.Config{APIKey: "test-key", BaseURL: baseURL + "/v1"})
	case llm.APIOpenAIResponses:
		return openai.NewResponses(openai.Config{APIKey: "test-key", BaseURL: baseURL + "/v1"})
	case llm.APIBedrock:
		p, err := bedrock.New(bedrock.Config{Region: "us-east-1", AccessKeyID: "AKIDTEST", SecretAccessKey: "secret", BaseURL: baseURL})
		if err != nil {
			t.Fatal(err)
		}
		return p
	case llm.APIGemini:
		p, err := gemini.New(gemini.Config{APIKey: "test-key", BaseURL: baseURL})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Fatalf("no provider for %q", api)
	return nil
}

// stream serves responses and streams one request per response through
// api's provider, returning the responses and, per response, the text of
// the deltas grouped by block index.
func stream(t *testing.T, api llm.API, responses ...replay.Response) ([]*llm.Response, []map[int]string) {
	t.Helper()
	srv, err := replay.NewServer(responses...)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p := provider(t, api, srv.URL())
	var outs []*llm.Response
	var deltas []map[int]string
	for i := range responses {
		got := map[int]string{}
		req := &llm.Request{Model: requestModel, MaxTokens: 1024, Messages: []llm.Message{llm.UserText("go")}}
		resp, err := p.Stream(context.Background(), req, func(d llm.Delta) { got[d.Index] += d.Text })
		if err != nil {
			t.Fatalf("%s response %d: %v", api, i, err)
		}
		outs, deltas = append(outs, resp), append(deltas, got)
	}
	return outs, deltas
}

// roundTrip is one reply per API with text, one tool_use, the API's
// thinking block and the usage it reports (cache read everywhere, cache
// write where reported, split by TTL where reported, reasoning where
// reported).
var roundTrip = []struct {
	api   llm.API
	reply replay.Reply
}{
	{llm.APIAnthropic, replay.Reply{ID: "msg_rt", Model: "claude-test", Blocks: []llm.Block{
		{Type: llm.BlockThinking, Text: "The user wants the README.", Signature: "sig-abc"},
		llm.TextBlock("Let me read it."),
		llm.ToolUseBlock("toolu_rt1", "fs_read", json.RawMessage(`{"path": "README.md"}`)),
	}, Usage: llm.Usage{Input: 12, CacheRead: 900, CacheWrite: 40, CacheWrite1h: 15, Output: 33}}},
	{llm.APIOpenAIChat, replay.Reply{ID: "chatcmpl-rt", Model: "gpt-test", Blocks: []llm.Block{
		{Type: llm.BlockThinking, Text: "The user wants the README."},
		llm.TextBlock("Let me read it."),
		llm.ToolUseBlock("call_rt1", "fs_read", json.RawMessage(`{"path": "README.md"}`)),
	}, Usage: llm.Usage{Input: 12, CacheRead: 900, Output: 33, Reasoning: 7}}},
	{llm.APIOpenAIResponses, replay.Reply{ID: "resp_rt", Model: "gpt-test", Blocks: []llm.Block{
		{Type: llm.BlockThinking, Text: "The user wants the README.", Signature: "gAAAA-encrypted", ItemID: "rs_given"},
		llm.TextBlock("Let me read it."),
		llm.ToolUseBlock("call_rt1", "fs_read", json.RawMessage(`{"path": "README.md"}`)),
	}, Usage: llm.Usage{Input: 12, CacheRead: 900, Output: 33, Reasoning: 7}}},
	{llm.APIBedrock, replay.Reply{Blocks: []llm.Block{
		{Type: llm.BlockThinking, Text: "The user wants the README.", Signature: "sig-abc"},
		llm.TextBlock("Let me read it."),
		llm.ToolUseBlock("tooluse_rt1", "fs_read", json.RawMessage(`{"path": "README.md"}`)),
	}, Usage: llm.Usage{Input: 12, CacheRead: 900, CacheWrite: 40, Output: 33}}},
	{llm.APIGemini, replay.Reply{ID: "gem-rt", Model: "gemini-test", Blocks: []llm.Block{
		{Type: llm.BlockThinking, Text: "The user wants the README.", Signature: "c2lnLWFiYw=="},
		llm.TextBlock("Let me read it."),
		{Type: llm.BlockToolUse, Name: "fs_read", Input: json.RawMessage(`{"path":"README.md"}`)},
		llm.ToolUseBlock("call_given", "glob", json.RawMessage(`{"pattern":"*.md"}`)),
	}, Usage: llm.Usage{Input: 12, CacheRead: 900, Output: 33, Reasoning: 7}}},
}

// TestTurnRoundTripsThroughTheRealProvider authors a reply per API, serves
// it, streams it through the real provider and checks the parsed response
// has the reply's blocks, stop reason and usage, and that the deltas
// concatenate to each block's content.
func TestTurnRoundTripsThroughTheRealProvider(t *testing.T) {
	for _, tc := range roundTrip {
		t.Run(string(tc.api), func(t *testing.T) {
			resp, err := replay.Turn(tc.api, tc.reply)
			if err != nil {
				t.Fatal(err)
			}
			got, deltas := stream(t, tc.api, resp)
			want := expected(tc.api, tc.reply)
			if !reflect.DeepEqual(got[0].Message, want.Message) {
				t.Errorf("message:\n got  %s\n want %s", js(got[0].Message), js(want.Message))
			}
			if got[0].StopReason != want.StopReason || got[0].Usage != want.Usage || got[0].ID != want.ID || got[0].Model != want.Model {
				t.Errorf("stop %q usage %+v id %q model %q; want stop %q usage %+v id %q model %q",
					got[0].StopReason, got[0].Usage, got[0].ID, got[0].Model, want.StopReason, want.Usage, want.ID, want.Model)
			}
			for i, b := range want.Message.Content {
				text := b.Text
				if b.Type == llm.BlockToolUse {
					text = string(b.Input)
				}
				if deltas[0][i] != text {
					t.Errorf("block %d deltas concatenate to %q, want %q", i, deltas[0][i], text)
				}
			}
		})
	}
}

// expected is what api's provider must return for r: r's blocks, stop
// (tool_use: every round-trip reply calls a tool) and usage with Total,
// with each API's own identifiers filled in.
func expected(api llm.API, r replay.Reply) llm.Response {
	want := llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: append([]llm.Block(nil), r.Blocks...)},
		StopReason: llm.StopToolUse, Usage: r.Usage.WithTotal(), ID: r.ID, Model: r.Model}
	prefix := map[llm.BlockType]string{llm.BlockText: "msg", llm.BlockThinking: "rs", llm.BlockToolUse: "fc"}
	for i := range want.Message.Content {
		b := &want.Message.Content[i]
		switch {
		case api == llm.APIOpenAIResponses && b.ItemID == "":
			b.ItemID = prefix[b.Type] + "_" + r.ID + "_" + strconv.Itoa(i) // replay.Turn's item ids
		case api == llm.APIGemini && b.Type == llm.BlockToolUse && b.ID == "":
			b.ID = "gemini-call-" + r.ID + "-0" // llm/gemini makes up ids for calls without one
		}
	}
	if api == llm.APIBedrock {
		want.ID, want.Model = "", requestModel // ConverseStream carries neither
	}
	return want
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestTurnStopReasons checks that every stop reason an API can express
// comes back from its provider unchanged.
func TestTurnStopReasons(t *testing.T) {
	stops := map[llm.API][]llm.StopReason{
		llm.APIAnthropic: {llm.StopEndTurn, llm.StopToolUse, llm.StopMaxTokens, llm.StopSequence, llm.StopRefusal,
			llm.StopPauseTurn, llm.StopContextWindow},
		llm.APIOpenAIChat:      {llm.StopEndTurn, llm.StopToolUse, llm.StopMaxTokens, llm.StopRefusal},
		llm.APIOpenAIResponses: {llm.StopEndTurn, llm.StopToolUse, llm.StopMaxTokens, llm.StopRefusal},
		llm.APIBedrock: {llm.StopEndTurn, llm.StopToolUse, llm.StopMaxTokens, llm.StopSequence, llm.StopRefusal,
			llm.StopContextWindow},
		llm.APIGemini: {llm.StopEndTurn, llm.StopToolUse, llm.StopMaxTokens, llm.StopRefusal},
	}
	for _, api := range llm.APIs {
		t.Run(string(api), func(t *testing.T) {
			var script []replay.Response
			for _, stop := range stops[api] {
				blocks := []llm.Block{llm.TextBlock("partial answer")}
				if stop == llm.StopToolUse {
					blocks = append(blocks, llm.ToolUseBlock("call_s", "glob", nil))
				}
				resp, err := replay.Turn(api, replay.Reply{Blocks: blocks, Stop: stop})
				if err != nil {
					t.Fatalf("%s: %v", stop, err)
				}
				script = append(script, resp)
			}
			got, _ := stream(t, api, script...)
			for i, stop := range stops[api] {
				if got[i].StopReason != stop {
					t.Errorf("authored %s, provider returned %s (wire %q)", stop, got[i].StopReason, got[i].ProviderStopReason)
				}
			}
		})
	}
}

// TestTextAndToolCallConvenience checks the two one-block constructors on
// every API: Text ends the turn, ToolCall stops with tool_use.
func TestTextAndToolCallConvenience(t *testing.T) {
	for _, api := range llm.APIs {
		t.Run(string(api), func(t *testing.T) {
			text, err := replay.Text(api, "Hello.")
			if err != nil {
				t.Fatal(err)
			}
			call, err := replay.ToolCall(api, "call_c", "glob", json.RawMessage(`{"pattern":"*.go"}`))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := stream(t, api, text, call)
			if got[0].Message.Text() != "Hello." || got[0].StopReason != llm.StopEndTurn {
				t.Errorf("Text: got %q stop %s", got[0].Message.Text(), got[0].StopReason)
			}
			calls := got[1].Message.ToolUses()
			if len(calls) != 1 || calls[0].ID != "call_c" || calls[0].Name != "glob" || string(calls[0].Input) != `{"pattern":"*.go"}` || got[1].StopReason != llm.StopToolUse {
				t.Errorf("ToolCall: got %s stop %s", js(got[1].Message.Content), got[1].StopReason)
			}
		})
	}
}

// TestTurnRejectsWhatTheAPICannotCarry checks that replies the wire API
// cannot express fail with ErrInvalidReply and a message naming the
// problem, instead of being served and parsed back differently.
func TestTurnRejectsWhatTheAPICannotCarry(t *testing.T) {
	text, call := llm.TextBlock("hi"), llm.ToolUseBlock("c1", "glob", nil)
	cases := []struct {
		name  string
		api   llm.API
		reply replay.Reply
		want  string
	}{
		{"unknown API", "carrier-pigeon", replay.Reply{}, "unknown wire API"},
		{"image block", llm.APIAnthropic, replay.Reply{Blocks: []llm.Block{{Type: llm.BlockImage, MediaType: "image/png", Data: []byte{1}}}}, "media"},
		{"tool_result block", llm.APIAnthropic, replay.Reply{Blocks: []llm.Block{{Type: llm.BlockToolResult, ID: "c1"}}}, "tool_result"},
		{"tool_use without id", llm.APIAnthropic, replay.Reply{Blocks: []llm.Block{{Type: llm.BlockToolUse, Name: "glob"}}}, "needs an ID"},
		{"tool_use input not an object", llm.APIBedrock, replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock("c1", "glob", json.RawMessage(`[1]`))}}, "not a JSON object"},
		{"reasoning tokens on anthropic", llm.APIAnthropic, replay.Reply{Blocks: []llm.Block{text}, Usage: llm.Usage{Output: 9, Reasoning: 3}}, "Usage.Reasoning 3"},
		{"cache write on chat", llm.APIOpenAIChat, replay.Reply{Blocks: []llm.Block{text}, Usage: llm.Usage{CacheWrite: 5}}, "Usage.CacheWrite 5"},
		{"reasoning above output", llm.APIGemini, replay.Reply{Blocks: []llm.Block{text}, Usage: llm.Usage{Output: 2, Reasoning: 3}}, "exceeds"},
		{"pause_turn on chat", llm.APIOpenAIChat, replay.Reply{Blocks: []llm.Block{text}, Stop: llm.StopPauseTurn}, `Stop "pause_turn"`},
		{"end_turn with a call on responses", llm.APIOpenAIResponses, replay.Reply{Blocks: []llm.Block{call}, Stop: llm.StopEndTurn}, "Stop end_turn with 1 tool_use"},
		{"tool_use without a call on gemini", llm.APIGemini, replay.Reply{Blocks: []llm.Block{text}, Stop: llm.StopToolUse}, "without a tool_use block"},
		{"two text blocks on chat", llm.APIOpenAIChat, replay.Reply{Blocks: []llm.Block{text, call, text}}, "blocks 0 and 2 are both text"},
		{"adjacent text blocks on gemini", llm.APIGemini, replay.Reply{Blocks: []llm.Block{text, text}}, "adjacent text"},
		{"empty text on chat", llm.APIOpenAIChat, replay.Reply{Blocks: []llm.Block{llm.TextBlock("")}}, "is empty"},
		{"thinking signature on chat", llm.APIOpenAIChat, replay.Reply{Blocks: []llm.Block{{Type: llm.BlockThinking, Text: "t", Signature: "s"}}}, "reasoning_content carries none"},
		{"signature on text", llm.APIAnthropic, replay.Reply{Blocks: []llm.Block{{Type: llm.BlockText, Text: "t", Signature: "s"}}}, "only thinking blocks"},
		{"gemini signature not base64", llm.APIGemini, replay.Reply{Blocks: []llm.Block{{Type: llm.BlockThinking, Text: "t", Signature: "%%"}}}, "not base64"},
		{"item id outside responses", llm.APIBedrock, replay.Reply{Blocks: []llm.Block{{Type: llm.BlockText, Text: "t", ItemID: "msg_1"}}}, "item ids"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := replay.Turn(tc.api, tc.reply)
			if !errors.Is(err, replay.ErrInvalidReply) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v; want ErrInvalidReply mentioning %q", err, tc.want)
			}
		})
	}
}

// TestTurnIsDeterministic checks that the same reply gives the same bytes
// (goldens and recorded requests can rely on it).
func TestTurnIsDeterministic(t *testing.T) {
	for _, tc := range roundTrip {
		a, err1 := replay.Turn(tc.api, tc.reply)
		b, err2 := replay.Turn(tc.api, tc.reply)
		if err1 != nil || err2 != nil || string(a.Body) != string(b.Body) {
			t.Errorf("%s: two authorings differ (errors %v, %v)", tc.api, err1, err2)
		}
	}
}
