package gemini

import (
	"context"
	"encoding/base64"
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

type recordedPart struct {
	Text         *string `json:"text"`
	Thought      bool    `json:"thought"`
	Signature    string  `json:"thoughtSignature"`
	FunctionCall *struct {
		ID, Name string
		Args     json.RawMessage
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID, Name string
		Response map[string]any
	} `json:"functionResponse"`
}

// toRequest rebuilds the llm.Request a recorded generateContent body
// encodes (text, thought, functionCall and functionResponse parts).
func toRequest(body []byte) (*llm.Request, error) {
	var r struct {
		Contents []struct {
			Role  string
			Parts []json.RawMessage
		}
		SystemInstruction *struct{ Parts []struct{ Text string } }
		Tools             []struct {
			FunctionDeclarations []struct{ Name, Description string }
		}
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, err
	}
	req := &llm.Request{Model: "gemini-2.5-flash"}
	if r.SystemInstruction != nil {
		for _, p := range r.SystemInstruction.Parts {
			req.System = append(req.System, llm.TextBlock(p.Text))
		}
	}
	for _, c := range r.Contents {
		m := llm.Message{Role: llm.RoleUser}
		if c.Role == "model" {
			m.Role = llm.RoleAssistant
		}
		for _, raw := range c.Parts {
			var p recordedPart
			var keys map[string]json.RawMessage
			json.Unmarshal(raw, &p)
			json.Unmarshal(raw, &keys)
			delete(keys, "thoughtSignature")
			delete(keys, "thought")
			switch {
			case p.FunctionCall != nil:
				b := llm.ToolUseBlock(p.FunctionCall.ID, p.FunctionCall.Name, p.FunctionCall.Args)
				b.Signature = p.Signature
				m.Content = append(m.Content, b)
			case p.FunctionResponse != nil:
				out, _ := json.Marshal(p.FunctionResponse.Response)
				m.Content = append(m.Content, llm.ToolResultBlock(p.FunctionResponse.ID, string(out), false))
			case p.Text != nil && len(keys) == 1:
				typ := llm.BlockText
				if p.Thought {
					typ = llm.BlockThinking
				}
				m.Content = append(m.Content, llm.Block{Type: typ, Text: *p.Text, Signature: p.Signature})
			default:
				return nil, fmt.Errorf("part with %v", keys)
			}
		}
		req.Messages = append(req.Messages, m)
	}
	for _, t := range r.Tools {
		for _, d := range t.FunctionDeclarations {
			req.Tools = append(req.Tools, llm.ToolSpec{Name: d.Name, Description: d.Description, InputSchema: json.RawMessage(`{"type":"object"}`)})
		}
	}
	return req, nil
}

// comparable strips what strata encodes differently on purpose: the
// functionResponse payload ({"output": …} instead of the caller's own keys)
// and the system instruction's role; the tools are compared by name and
// description (strata sends JSON Schema as parametersJsonSchema where
// pydantic-ai sent an OpenAPI schema).
func comparable(body []byte) map[string]any {
	var m map[string]any
	json.Unmarshal(body, &m)
	out := map[string]any{"contents": m["contents"]}
	if cs, ok := m["contents"].([]any); ok {
		for _, c := range cs {
			parts, _ := c.(map[string]any)["parts"].([]any)
			for _, p := range parts {
				pm := p.(map[string]any)
				if fr, ok := pm["functionResponse"].(map[string]any); ok {
					delete(fr, "response")
				}
				if fc, ok := pm["functionCall"].(map[string]any); ok {
					if a, ok := fc["args"].(map[string]any); ok && len(a) == 0 {
						delete(fc, "args") // the SDK omits empty args; the call means the same
					}
				}
				if pm["text"] == "" {
					delete(pm, "text") // the SDK omits an empty text; the part means the same
				}
				if s, ok := pm["thoughtSignature"].(string); ok { // one base64 alphabet
					b, _ := signature(s)
					pm["thoughtSignature"] = base64.StdEncoding.EncodeToString(b)
				}
			}
		}
	}
	if si, ok := m["systemInstruction"].(map[string]any); ok {
		out["system"] = si["parts"]
	}
	var tools []string
	if ts, ok := m["tools"].([]any); ok {
		for _, t := range ts {
			decls, _ := t.(map[string]any)["functionDeclarations"].([]any)
			for _, d := range decls {
				fd := d.(map[string]any)
				desc, _ := fd["description"].(string)
				tools = append(tools, fmt.Sprint(fd["name"], ": ", desc))
			}
		}
	}
	out["tools"] = tools
	return out
}

// The recorded generateContent requests of the pydantic-ai cassettes
// (bodies the real API accepted) match what strata's encoding of the same
// conversation sends through the genai SDK: contents (text, thoughts,
// function calls with ids and thought signatures, function responses),
// system instruction and tool names.
func TestRequestsMatchRecordedBodies(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(shared.Path(t, "data/wire"), "pydantic-ai/cassettes/test_google/*.yaml"))
	checked := 0
	for _, f := range files {
		ins, err := replay.Cassette(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, in := range ins {
			name := fmt.Sprintf("%s#%d", filepath.Base(f), i)
			stream := strings.Contains(in.Request.Path, ":streamGenerateContent")
			if !stream && !strings.Contains(in.Request.Path, ":generateContent") || in.Response.Status >= 400 {
				continue
			}
			req, err := toRequest(in.Request.Body)
			if err != nil {
				t.Logf("%s: not comparable (%v)", name, err)
				continue
			}
			received, err := replay.With(func(url string) error {
				p, err := New(Config{APIKey: "test", BaseURL: url, NonStreaming: !stream})
				if err != nil {
					return err
				}
				_, err = p.Stream(context.Background(), req, nil)
				return err
			}, in.Response)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			got, want := comparable(received[0].Body), comparable(in.Request.Body)
			for _, k := range []string{"contents", "system", "tools"} {
				if !reflect.DeepEqual(got[k], want[k]) {
					t.Errorf("%s: %s differs\n got %v\nwant %v", name, k, got[k], want[k])
				}
			}
			checked++
		}
	}
	if checked < 8 {
		t.Errorf("compared %d recorded requests; want ≥ 8", checked)
	}
}
