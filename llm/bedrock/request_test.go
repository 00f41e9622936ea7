package bedrock

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// recorded is the part of a Converse request body strata models.
type recorded struct {
	Messages []struct {
		Role    string
		Content []map[string]json.RawMessage
	}
	System     []map[string]json.RawMessage
	ToolConfig *struct {
		Tools []map[string]json.RawMessage
	}
}

// toRequest rebuilds the llm.Request a recorded body encodes: text,
// toolUse, toolResult (text), reasoningContent and cachePoint blocks (as
// breakpoints on the block before them). Other blocks (documents, …) are
// reported as unsupported.
func toRequest(body []byte) (*llm.Request, error) {
	var r recorded
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, err
	}
	req := &llm.Request{Model: "m"}
	for _, s := range r.System {
		switch {
		case s["text"] != nil:
			var t string
			json.Unmarshal(s["text"], &t)
			req.System = append(req.System, llm.TextBlock(t))
		case s["cachePoint"] != nil:
			req.Breakpoints = append(req.Breakpoints, llm.Breakpoint{Target: llm.BreakSystem, Block: len(req.System) - 1})
		default:
			return nil, fmt.Errorf("system block %v", keys(s))
		}
	}
	for mi, m := range r.Messages {
		msg := llm.Message{Role: llm.Role(m.Role)}
		for _, c := range m.Content {
			var b llm.Block
			switch {
			case c["text"] != nil:
				var t string
				json.Unmarshal(c["text"], &t)
				b = llm.TextBlock(t)
			case c["toolUse"] != nil:
				var u struct {
					ToolUseId, Name string
					Input           json.RawMessage
				}
				json.Unmarshal(c["toolUse"], &u)
				b = llm.ToolUseBlock(u.ToolUseId, u.Name, u.Input)
			case c["toolResult"] != nil:
				var tr struct {
					ToolUseId string
					Status    string
					Content   []struct{ Text *string }
				}
				json.Unmarshal(c["toolResult"], &tr)
				b = llm.Block{Type: llm.BlockToolResult, ID: tr.ToolUseId, IsError: tr.Status == "error"}
				for _, x := range tr.Content {
					if x.Text == nil {
						return nil, fmt.Errorf("non-text tool result content")
					}
					b.Content = append(b.Content, llm.TextBlock(*x.Text))
				}
			case c["reasoningContent"] != nil:
				var rc struct {
					ReasoningText   *struct{ Text, Signature string }
					RedactedContent []byte
				}
				json.Unmarshal(c["reasoningContent"], &rc)
				if rc.ReasoningText != nil {
					b = llm.Block{Type: llm.BlockThinking, Text: rc.ReasoningText.Text, Signature: rc.ReasoningText.Signature}
				} else {
					b = llm.Block{Type: llm.BlockRedactedThinking, Data: rc.RedactedContent}
				}
			case c["cachePoint"] != nil:
				req.Breakpoints = append(req.Breakpoints, llm.Breakpoint{Target: llm.BreakMessage, Message: mi, Block: len(msg.Content) - 1})
				continue
			default:
				return nil, fmt.Errorf("content block %v", keys(c))
			}
			msg.Content = append(msg.Content, b)
		}
		req.Messages = append(req.Messages, msg)
	}
	if r.ToolConfig != nil {
		for _, t := range r.ToolConfig.Tools {
			if t["cachePoint"] != nil {
				req.Breakpoints = append(req.Breakpoints, llm.Breakpoint{Target: llm.BreakTools})
				continue
			}
			if t["toolSpec"] == nil {
				return nil, fmt.Errorf("tool %v", keys(t))
			}
			var s struct {
				Name, Description string
				InputSchema       struct{ JSON json.RawMessage }
			}
			json.Unmarshal(t["toolSpec"], &s)
			req.Tools = append(req.Tools, llm.ToolSpec{Name: s.Name, Description: s.Description, InputSchema: s.InputSchema.JSON})
		}
	}
	return req, nil
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// The recorded Converse requests of the pydantic-ai cassettes (bodies the
// real API accepted) are what strata's encoding of the same conversation
// sends through the AWS SDK: system, messages (incl. tool calls, tool
// results and cachePoint blocks) and tool specs compare equal as JSON.
func TestRequestsMatchRecordedBodies(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(shared.Path(t, "data/wire"), "pydantic-ai/cassettes/test_bedrock/*.yaml"))
	checked := 0
	for _, f := range files {
		ins, err := replay.Cassette(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, in := range ins {
			name := fmt.Sprintf("%s#%d", filepath.Base(f), i)
			if !strings.Contains(in.Request.Path, "/converse") || in.Response.Status >= 400 {
				continue
			}
			req, err := toRequest(in.Request.Body)
			if err != nil {
				t.Logf("%s: not comparable (%v)", name, err)
				continue
			}
			stream := strings.Contains(in.Request.Path, "/converse-stream")
			resp := in.Response
			if stream {
				resp.Header.Set("Content-Type", "application/vnd.amazon.eventstream")
			}
			received, err := replay.With(func(url string) error {
				p := mustNew(t, Config{Region: "us-east-1", AccessKeyID: "AKIDTEST", SecretAccessKey: "secret", BaseURL: url, NonStreaming: !stream})
				_, err := p.Stream(context.Background(), req, nil)
				return err
			}, resp)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			sent := received[0].Body
			var want, got map[string]any
			json.Unmarshal(in.Request.Body, &want)
			json.Unmarshal(sent, &got)
			for _, k := range []string{"system", "messages"} {
				if w, ok := want[k].([]any); ok && len(w) == 0 && got[k] == nil {
					continue // an empty list is the same request as none
				}
				if !reflect.DeepEqual(got[k], want[k]) {
					t.Errorf("%s: %s differs\n got %v\nwant %v", name, k, got[k], want[k])
				}
			}
			if w, ok := want["toolConfig"].(map[string]any); ok {
				g, _ := got["toolConfig"].(map[string]any)
				if !reflect.DeepEqual(g["tools"], w["tools"]) {
					t.Errorf("%s: tools differ\n got %v\nwant %v", name, g["tools"], w["tools"])
				}
			}
			checked++
		}
	}
	if checked < 5 {
		t.Errorf("compared %d recorded requests; want ≥ 5", checked)
	}
}
