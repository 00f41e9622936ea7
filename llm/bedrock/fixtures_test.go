package bedrock

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// want is what a fixture holds, read from its JSON without the SDK.
type want struct {
	Text, Thinking, Signature string
	Calls                     []call
	Stop                      string
	Usage                     llm.Usage
	Status                    int // HTTP error status; 0 = success
}

type call struct {
	ID, Name string
	Input    any
}

// fixture is one response to replay.
type fixture struct {
	name      string
	resp      replay.Response
	streaming bool
	want      want
}

// payloadEvents reads the ConverseStream events of a body: AWS event-stream
// messages (decoded with the AWS event-stream codec) as {type: payload}.
func payloadEvents(t *testing.T, body []byte) []map[string]json.RawMessage {
	var out []map[string]json.RawMessage
	dec := eventstream.NewDecoder()
	r := bytes.NewReader(body)
	for r.Len() > 0 {
		msg, err := dec.Decode(r, nil)
		if err != nil {
			t.Fatalf("event-stream: %v", err)
		}
		typ := msg.Headers.Get(":event-type")
		if typ == nil {
			continue
		}
		out = append(out, map[string]json.RawMessage{typ.String(): msg.Payload})
	}
	return out
}

// fromEvents computes the expected result of a stream.
func fromEvents(evs []map[string]json.RawMessage) want {
	var w want
	inputs := map[int]*strings.Builder{}
	idx := map[int]int{} // block index → position in w.Calls
	for _, ev := range evs {
		for typ, p := range ev {
			var v struct {
				ContentBlockIndex int `json:"contentBlockIndex"`
				Start             struct {
					ToolUse *struct{ ToolUseId, Name string } `json:"toolUse"`
				} `json:"start"`
				Delta struct {
					Text             *string                 `json:"text"`
					ToolUse          *struct{ Input string } `json:"toolUse"`
					ReasoningContent *struct {
						Text      string `json:"text"`
						Signature string `json:"signature"`
					} `json:"reasoningContent"`
				} `json:"delta"`
				StopReason string `json:"stopReason"`
				Usage      struct {
					InputTokens, OutputTokens, TotalTokens, CacheReadInputTokens, CacheWriteInputTokens int64
				} `json:"usage"`
			}
			json.Unmarshal(p, &v)
			switch typ {
			case "contentBlockStart":
				if v.Start.ToolUse != nil {
					idx[v.ContentBlockIndex] = len(w.Calls)
					w.Calls = append(w.Calls, call{ID: v.Start.ToolUse.ToolUseId, Name: v.Start.ToolUse.Name})
					inputs[v.ContentBlockIndex] = &strings.Builder{}
				}
			case "contentBlockDelta":
				switch d := v.Delta; {
				case d.Text != nil:
					w.Text += *d.Text
				case d.ToolUse != nil:
					inputs[v.ContentBlockIndex].WriteString(d.ToolUse.Input)
				case d.ReasoningContent != nil:
					w.Thinking += d.ReasoningContent.Text
					w.Signature += d.ReasoningContent.Signature
				}
			case "messageStop":
				w.Stop = v.StopReason
			case "metadata":
				u := v.Usage
				w.Usage = llm.Usage{Input: u.InputTokens, Output: u.OutputTokens, Total: u.TotalTokens, CacheRead: u.CacheReadInputTokens, CacheWrite: u.CacheWriteInputTokens}
			}
		}
	}
	for k, b := range inputs {
		s := b.String()
		if s == "" {
			s = "{}"
		}
		json.Unmarshal([]byte(s), &w.Calls[idx[k]].Input)
	}
	return w
}

// fromJSON computes the expected result of a Converse response body.
func fromJSON(body []byte) want {
	var r struct {
		Output struct {
			Message struct {
				Content []struct {
					Text    *string `json:"text"`
					ToolUse *struct {
						ToolUseId, Name string
						Input           any
					} `json:"toolUse"`
					ReasoningContent *struct {
						ReasoningText *struct{ Text, Signature string } `json:"reasoningText"`
					} `json:"reasoningContent"`
				}
			}
		}
		StopReason string
		Usage      struct {
			InputTokens, OutputTokens, TotalTokens, CacheReadInputTokens, CacheWriteInputTokens int64
		}
	}
	json.Unmarshal(body, &r)
	w := want{Stop: r.StopReason}
	for _, c := range r.Output.Message.Content {
		switch {
		case c.Text != nil:
			w.Text += *c.Text
		case c.ToolUse != nil:
			in := c.ToolUse.Input
			if in == nil {
				in = map[string]any{}
			}
			w.Calls = append(w.Calls, call{ID: c.ToolUse.ToolUseId, Name: c.ToolUse.Name, Input: in})
		case c.ReasoningContent != nil && c.ReasoningContent.ReasoningText != nil:
			w.Thinking += c.ReasoningContent.ReasoningText.Text
			w.Signature += c.ReasoningContent.ReasoningText.Signature
		}
	}
	u := r.Usage
	w.Usage = llm.Usage{Input: u.InputTokens, Output: u.OutputTokens, Total: u.TotalTokens, CacheRead: u.CacheReadInputTokens, CacheWrite: u.CacheWriteInputTokens}
	return w
}

// bedrockFixtures collects every Bedrock Converse / ConverseStream fixture
// INDEX.md lists: raw event-stream bodies, vercel chunk lines (re-encoded
// as event-stream), full JSON responses and pydantic-ai cassettes.
func bedrockFixtures(t *testing.T) []fixture {
	wire, rows := shared.WireIndex(t, func(r shared.WireRow) bool { return strings.HasPrefix(r.API, "Bedrock Converse") })
	var out []fixture
	for _, r := range rows {
		rel := r.Path
		path := filepath.Join(wire, rel)
		switch {
		case strings.HasSuffix(rel, ".eventstream"):
			r, err := replay.EventStreamFile(path)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fixture{name: rel, resp: r, streaming: true, want: fromEvents(payloadEvents(t, r.Body))})
		case strings.HasSuffix(rel, ".chunks.txt"):
			rs, err := replay.ChunksFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				out = append(out, fixture{name: rel, resp: r, streaming: true, want: fromEvents(payloadEvents(t, r.Body))})
			}
		case strings.HasSuffix(rel, ".json"):
			r, err := replay.JSONFile(path, 0)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fixture{name: rel, resp: r, want: fromJSON(r.Body)})
		case strings.HasSuffix(rel, ".yaml"):
			ins, err := replay.Cassette(path)
			if err != nil {
				t.Fatal(err)
			}
			for i, in := range ins {
				name := rel + "#" + string(rune('0'+i))
				r := in.Response
				fx := fixture{name: name, resp: r, streaming: strings.Contains(in.Request.Path, "/converse-stream")}
				switch {
				case r.Status >= 400:
					fx.want = want{Status: r.Status}
				case fx.streaming:
					r.Header.Set("Content-Type", "application/vnd.amazon.eventstream")
					fx.resp, fx.want = r, fromEvents(payloadEvents(t, r.Body))
				case strings.HasSuffix(in.Request.Path, "/converse"):
					fx.want = fromJSON(r.Body)
				default:
					t.Fatalf("%s: unexpected endpoint %s", name, in.Request.Path)
				}
				out = append(out, fx)
			}
		default:
			t.Fatalf("%s: unknown Bedrock fixture format", rel)
		}
	}
	return out
}

// Every Bedrock fixture, served on 127.0.0.1 to the real AWS SDK client,
// yields exactly the text, reasoning, tool calls, stop reason and usage it
// holds; error bodies yield *llm.APIError with the status and message.
func TestFixtures(t *testing.T) {
	fxs := bedrockFixtures(t)
	if len(fxs) < 45 {
		t.Fatalf("only %d Bedrock fixtures found", len(fxs))
	}
	req := &llm.Request{Model: "anthropic.claude-sonnet-4-5", Messages: []llm.Message{llm.UserText("hi")}}
	for _, fx := range fxs {
		var resp *llm.Response
		var deltaText strings.Builder
		_, err := replay.With(func(url string) (err error) {
			p := mustNew(t, Config{Region: "us-east-1", AccessKeyID: "AKIDTEST", SecretAccessKey: "secret", BaseURL: url, NonStreaming: !fx.streaming})
			resp, err = p.Stream(context.Background(), req, func(d llm.Delta) {
				if d.Type == llm.DeltaText {
					deltaText.WriteString(d.Text)
				}
			})
			return err
		}, fx.resp)
		if fx.want.Status != 0 {
			var ae *llm.APIError
			if !errors.As(err, &ae) || ae.StatusCode != fx.want.Status || ae.Message == "" {
				t.Errorf("%s: err %v; want APIError %d", fx.name, err, fx.want.Status)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", fx.name, err)
			continue
		}
		got := want{Stop: resp.ProviderStopReason, Usage: resp.Usage}
		for _, b := range resp.Message.Content {
			switch b.Type {
			case llm.BlockText:
				got.Text += b.Text
			case llm.BlockThinking:
				got.Thinking += b.Text
				got.Signature += b.Signature
			case llm.BlockToolUse:
				c := call{ID: b.ID, Name: b.Name}
				json.Unmarshal(b.Input, &c.Input)
				got.Calls = append(got.Calls, c)
			}
		}
		if !reflect.DeepEqual(got, fx.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", fx.name, got, fx.want)
		}
		if deltaText.String() != got.Text {
			t.Errorf("%s: text deltas %q, message text %q", fx.name, deltaText.String(), got.Text)
		}
	}
}
