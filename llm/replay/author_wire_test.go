package replay_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// TestTurnMatchesRecordedEventSequence compares the event sequence Turn
// writes with a real recording of the same content per API: the same event
// kinds (event name, block/part/item type, delta type) in the same order,
// once runs of the same kind (a recording streams a block in many deltas,
// Turn in one) are collapsed.
func TestTurnMatchesRecordedEventSequence(t *testing.T) {
	wire := shared.Path(t, "data/wire")
	read := func(t *testing.T, rel string, index int) []byte {
		t.Helper()
		p := filepath.Join(wire, rel)
		var rs []replay.Response
		switch {
		case strings.HasSuffix(p, ".yaml"):
			ins, err := replay.Cassette(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range ins {
				rs = append(rs, in.Response)
			}
		case strings.HasSuffix(p, ".chunks.txt"):
			var err error
			if rs, err = replay.ChunksFile(p); err != nil {
				t.Fatal(err)
			}
		case strings.HasSuffix(p, ".eventstream"):
			r, err := replay.EventStreamFile(p)
			if err != nil {
				t.Fatal(err)
			}
			rs = []replay.Response{r}
		default:
			r, err := replay.SSEFile(p)
			if err != nil {
				t.Fatal(err)
			}
			rs = []replay.Response{r}
		}
		if index >= len(rs) {
			t.Fatalf("%s holds %d responses, want #%d", rel, len(rs), index)
		}
		return rs[index].Body
	}
	text, call := llm.TextBlock("The capital is Paris."), llm.ToolUseBlock("call_1", "get_weather", json.RawMessage(`{"city":"Paris"}`))
	thinking := llm.Block{Type: llm.BlockThinking, Text: "Look it up.", Signature: "gAAAA-encrypted"}
	cases := []struct {
		api       llm.API
		recording string
		index     int // which response of the file
		blocks    []llm.Block
	}{
		{llm.APIAnthropic, "anthropic-sdk-python/tests/lib/streaming/fixtures/tool_use_response.txt", 0, []llm.Block{text, call}},
		{llm.APIOpenAIChat, "pydantic-ai/cassettes/test_openai/test_run_stream_sync_streams_real_model.yaml", 0, []llm.Block{call}},
		{llm.APIOpenAIChat, "pydantic-ai/cassettes/test_openai/test_run_stream_sync_streams_real_model.yaml", 1, []llm.Block{text}},
		{llm.APIOpenAIResponses, "vercel-ai/openai/responses/github-copilot-id-rotation.1.chunks.txt", 0, []llm.Block{thinking, text}},
		{llm.APIOpenAIResponses, "vercel-ai/openai/responses/openai-reasoning-encrypted-content.1.chunks.txt", 0, []llm.Block{thinking, call}},
		{llm.APIBedrock, "pydantic-ai/bedrock-eventstream-extracted/test_bedrock_model_iter_stream.0.eventstream", 0, []llm.Block{text, call}},
		{llm.APIGemini, "pydantic-ai/cassettes/test_google/test_google_streaming_tool_call_thought_signature.yaml", 0,
			[]llm.Block{{Type: llm.BlockToolUse, Name: "get_country", Input: json.RawMessage(`{}`), Signature: "c2ln"}}},
		{llm.APIGemini, "pydantic-ai/cassettes/test_google/test_google_streaming_tool_call_thought_signature.yaml", 1, []llm.Block{text}},
	}
	for _, tc := range cases {
		t.Run(string(tc.api)+"/"+filepath.Base(tc.recording), func(t *testing.T) {
			authored, err := replay.Turn(tc.api, replay.Reply{Blocks: tc.blocks, Usage: llm.Usage{Input: 10, Output: 5}})
			if err != nil {
				t.Fatal(err)
			}
			want := eventKinds(t, tc.api, read(t, tc.recording, tc.index))
			got := eventKinds(t, tc.api, authored.Body)
			t.Logf("%q", got)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("event kinds differ from the recording\n got  %q\n want %q", got, want)
			}
		})
	}
}

// eventKinds reads a body's events as kinds (see
// TestTurnMatchesRecordedEventSequence) with consecutive repeats collapsed.
func eventKinds(t *testing.T, api llm.API, body []byte) []string {
	t.Helper()
	var kinds []string
	add := func(k string) {
		if len(kinds) == 0 || kinds[len(kinds)-1] != k {
			kinds = append(kinds, k)
		}
	}
	if api == llm.APIBedrock {
		dec, r := eventstream.NewDecoder(), bytes.NewReader(body)
		for r.Len() > 0 {
			msg, err := dec.Decode(r, nil)
			if err != nil {
				t.Fatalf("event-stream: %v", err)
			}
			add(bedrockKind(t, msg.Headers.Get(":event-type").String(), msg.Payload))
		}
		return kinds
	}
	for _, ev := range bytes.Split(bytes.ReplaceAll(body, []byte("\r\n"), []byte("\n")), []byte("\n\n")) {
		var data []byte
		for _, line := range bytes.Split(ev, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				data = bytes.TrimSpace(d)
			}
		}
		if data == nil {
			continue
		}
		add(sseKind(t, api, data))
	}
	return kinds
}

// sseKind names one SSE data payload of api.
func sseKind(t *testing.T, api llm.API, data []byte) string {
	t.Helper()
	if string(data) == "[DONE]" {
		return "[DONE]"
	}
	var v struct {
		Type         string                `json:"type"`
		ContentBlock struct{ Type string } `json:"content_block"`
		Delta        json.RawMessage
		Item         struct{ Type string }
		Choices      []struct {
			Delta        map[string]json.RawMessage
			FinishReason *string `json:"finish_reason"`
		}
		Candidates []struct {
			Content struct {
				Parts []map[string]json.RawMessage
			}
			FinishReason string
		}
	}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s payload %.80s: %v", api, data, err)
	}
	var parts []string
	switch api {
	case llm.APIAnthropic:
		parts = append(parts, v.Type)
		var d struct{ Type string }
		_ = json.Unmarshal(v.Delta, &d)
		if v.ContentBlock.Type != "" {
			parts = append(parts, v.ContentBlock.Type)
		} else if v.Type == "content_block_delta" {
			parts = append(parts, d.Type)
		}
	case llm.APIOpenAIResponses:
		parts = append(parts, v.Type)
		if v.Item.Type != "" {
			parts = append(parts, v.Item.Type)
		}
	case llm.APIOpenAIChat:
		if len(v.Choices) == 0 {
			return "usage"
		}
		c := v.Choices[0]
		for _, k := range []string{"role", "content", "reasoning_content"} {
			if s := string(c.Delta[k]); s != "" && s != "null" && s != `""` {
				parts = append(parts, k)
			}
		}
		var calls []struct{ ID string }
		_ = json.Unmarshal(c.Delta["tool_calls"], &calls)
		for _, call := range calls {
			parts = append(parts, map[bool]string{true: "tool_call.start", false: "tool_call.arguments"}[call.ID != ""])
		}
		if c.FinishReason != nil {
			parts = append(parts, "finish:"+*c.FinishReason)
		}
	case llm.APIGemini:
		for _, c := range v.Candidates {
			for _, p := range c.Content.Parts {
				keys := make([]string, 0, len(p))
				for k, val := range p {
					if k == "text" && string(val) == `""` {
						k = "text(empty)"
					}
					if k == "functionCall" && bytes.Contains(val, []byte(`"id"`)) {
						k = "functionCall(id)"
					}
					keys = append(keys, k)
				}
				sort.Strings(keys)
				parts = append(parts, strings.Join(keys, ","))
			}
			if c.FinishReason != "" {
				parts = append(parts, "finish:"+c.FinishReason)
			}
		}
	}
	return strings.Join(parts, "+")
}

// bedrockKind names one ConverseStream event: its type, plus the start or
// delta member it carries.
func bedrockKind(t *testing.T, typ string, payload []byte) string {
	t.Helper()
	var v struct {
		Start map[string]json.RawMessage
		Delta map[string]json.RawMessage
	}
	if err := json.Unmarshal(payload, &v); err != nil {
		t.Fatalf("%s payload: %v", typ, err)
	}
	var members []string
	for k := range v.Start {
		members = append(members, k)
	}
	for k := range v.Delta {
		members = append(members, k)
	}
	slices.Sort(members)
	return strings.Join(append([]string{typ}, members...), "+")
}
