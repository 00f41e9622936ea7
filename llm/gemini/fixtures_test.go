package gemini

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// excluded are Gemini fixtures deliberately not replayed, with the reason.
var excluded = map[string]string{
	"vercel-ai/google/google-stream-no-args-tool-call.chunks.txt":                                        partialArgs,
	"vercel-ai/google/google-stream-tool-call-arguments.chunks.txt":                                      partialArgs,
	"vercel-ai/google/google-stream-tool-call-array-arguments-missing-terminal-function-call.chunks.txt": partialArgs,
	"vercel-ai/google/google-vertex-stream-tool-call-arguments-nested.1.chunks.txt":                      partialArgs,
}

const partialArgs = "streamed function-call arguments (partialArgs/willContinue) come only when the request opts in with streamFunctionCallArguments, which strata never sets"

// want is what a fixture holds, read from its JSON without the SDK.
type want struct {
	Text, Thinking string
	Calls          []call
	Stop           string
	Usage          llm.Usage
	Status         int  // HTTP error status
	Err            bool // the provider must fail (truncated or unreadable stream)
}

type call struct {
	Name string
	Args any
}

type chunk struct {
	Candidates []struct {
		Content *struct {
			Parts []struct {
				Text         *string
				Thought      bool
				FunctionCall *struct {
					Name string
					Args any
				}
			}
		}
		FinishReason string
	}
	PromptFeedback *struct{ BlockReason string }
	UsageMetadata  *struct {
		PromptTokenCount, CandidatesTokenCount, ThoughtsTokenCount, CachedContentTokenCount, ToolUsePromptTokenCount, TotalTokenCount int64
	}
	Error *struct{ Code int }
}

// expect computes what a sequence of response payloads must yield.
func expect(payloads [][]byte) want {
	var w want
	finish, blocked := "", ""
	for _, p := range payloads {
		var c chunk
		if err := json.Unmarshal(p, &c); err != nil {
			return want{Err: true}
		}
		if c.Error != nil {
			return want{Err: true}
		}
		if c.PromptFeedback != nil && c.PromptFeedback.BlockReason != "" {
			blocked = c.PromptFeedback.BlockReason
		}
		if u := c.UsageMetadata; u != nil {
			w.Usage = llm.Usage{Input: u.PromptTokenCount - u.CachedContentTokenCount + u.ToolUsePromptTokenCount, CacheRead: u.CachedContentTokenCount,
				Output: u.CandidatesTokenCount + u.ThoughtsTokenCount, Reasoning: u.ThoughtsTokenCount, Total: u.TotalTokenCount}
		}
		if len(c.Candidates) == 0 {
			continue
		}
		if f := c.Candidates[0].FinishReason; f != "" {
			finish = f
		}
		if c.Candidates[0].Content == nil {
			continue
		}
		for _, part := range c.Candidates[0].Content.Parts {
			switch {
			case part.FunctionCall != nil:
				args := part.FunctionCall.Args
				if args == nil {
					args = map[string]any{}
				}
				w.Calls = append(w.Calls, call{Name: part.FunctionCall.Name, Args: args})
			case part.Text != nil && part.Thought:
				w.Thinking += *part.Text
			case part.Text != nil:
				w.Text += *part.Text
			}
		}
	}
	switch {
	case blocked != "":
		w.Stop = "prompt blocked: " + blocked
	case finish == "":
		return want{Err: true}
	default:
		w.Stop = finish
	}
	return w
}

// ssePayloads returns the event data of a raw SSE body (SSE spec: an
// event's data lines are joined with "\n" and dispatched at a blank line); a
// line that is neither SSE nor blank makes the body unreadable (nil, false).
func ssePayloads(body []byte) ([][]byte, bool) {
	var out [][]byte
	var cur [][]byte
	flush := func() {
		if len(cur) > 0 {
			out = append(out, bytes.Join(cur, []byte("\n")))
			cur = nil
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := bytes.TrimRight(sc.Bytes(), "\r")
		switch {
		case len(line) == 0:
			flush()
		case bytes.HasPrefix(line, []byte("data:")):
			d := bytes.TrimPrefix(line, []byte("data:"))
			cur = append(cur, bytes.TrimPrefix(d, []byte(" ")))
		case line[0] == ':', bytes.HasPrefix(line, []byte("event:")), bytes.HasPrefix(line, []byte("id:")):
		default:
			return nil, false
		}
	}
	flush()
	return out, true
}

type fixture struct {
	name      string
	resp      replay.Response
	streaming bool
	want      want
}

// sseFixture serves an SSE body; a body with non-SSE lines must fail.
func sseFixture(name string, r replay.Response) fixture {
	r.Header = http.Header{"Content-Type": {"text/event-stream"}}
	ps, ok := ssePayloads(r.Body)
	w := want{Err: true}
	if ok {
		w = expect(ps)
	}
	return fixture{name: name, resp: r, streaming: true, want: w}
}

// jsonFixture serves a full JSON body; an error object is served with its
// code as the HTTP status, as the API does.
func jsonFixture(name string, body []byte) fixture {
	var e struct{ Error *struct{ Code int } }
	json.Unmarshal(body, &e)
	if e.Error != nil && e.Error.Code >= 400 {
		return fixture{name: name, resp: replay.Response{Status: e.Error.Code, Body: body, Header: http.Header{"Content-Type": {"application/json"}}}, want: want{Status: e.Error.Code}}
	}
	return fixture{name: name, resp: replay.Response{Body: body, Header: http.Header{"Content-Type": {"application/json"}}}, want: expect([][]byte{body})}
}

// geminiFixtures collects every Gemini generateContent fixture INDEX.md
// lists (Gemini Developer API and Vertex AI share the response shape).
func geminiFixtures(t *testing.T) []fixture {
	wire, rows := shared.WireIndex(t, func(r shared.WireRow) bool {
		return strings.Contains(r.API, "generateContent") && !strings.Contains(r.API, "Anthropic") && !strings.HasPrefix(r.Format, "JSON schema")
	})
	var out []fixture
	for _, r := range rows {
		rel := r.Path

		if _, ok := excluded[rel]; ok {
			continue
		}
		path := filepath.Join(wire, rel)
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		switch format := r.Format; {
		case strings.HasPrefix(format, "raw SSE"):
			out = append(out, sseFixture(rel, replay.Response{Body: body}))
		case strings.HasPrefix(format, "JSON-lines"):
			rs, err := replay.ChunksFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				out = append(out, sseFixture(rel, r))
			}
		case strings.HasPrefix(format, "full JSON"):
			if !json.Valid(body) {
				t.Fatalf("%s: not JSON", rel)
			}
			out = append(out, jsonFixture(rel, body))
		case strings.HasPrefix(format, "HTTP cassette"):
			ins, err := replay.Cassette(path)
			if err != nil {
				t.Fatal(err)
			}
			for i, in := range ins {
				name := fmt.Sprintf("%s#%d", rel, i)
				switch {
				case strings.Contains(in.Request.Path, ":streamGenerateContent"):
					out = append(out, sseFixture(name, in.Response))
				case strings.Contains(in.Request.Path, ":generateContent"):
					out = append(out, jsonFixture(name, in.Response.Body))
				} // other endpoints (file search stores, uploads): not model calls
			}
		default:
			t.Fatalf("%s: unknown format %q", rel, format)
		}
	}
	return out
}

// Every Gemini fixture, served on 127.0.0.1 to the real genai client, yields
// exactly the text, thought summaries, function calls, finish reason and
// usage it holds; error bodies yield *llm.APIError with their status;
// streams without a finishReason, with unparsable data or with an error
// object are errors, never partial successes.
func TestFixtures(t *testing.T) {
	fxs := geminiFixtures(t)
	if len(fxs) < 100 {
		t.Fatalf("only %d Gemini fixtures found", len(fxs))
	}
	req := &llm.Request{Model: "gemini-2.5-flash", Messages: []llm.Message{llm.UserText("hi")}}
	for _, fx := range fxs {
		var resp *llm.Response
		var deltas strings.Builder
		_, err := replay.With(func(url string) error {
			p, err := New(Config{APIKey: "test", BaseURL: url, NonStreaming: !fx.streaming})
			if err != nil {
				return err
			}
			resp, err = p.Stream(context.Background(), req, func(d llm.Delta) {
				if d.Type == llm.DeltaText {
					deltas.WriteString(d.Text)
				}
			})
			return err
		}, fx.resp)
		switch {
		case fx.want.Status != 0:
			var ae *llm.APIError
			if !errors.As(err, &ae) || ae.StatusCode != fx.want.Status || ae.Message == "" {
				t.Errorf("%s: err %v; want APIError %d", fx.name, err, fx.want.Status)
			}
			continue
		case fx.want.Err:
			if err == nil {
				t.Errorf("%s: success %+v; want an error", fx.name, resp.Message)
			}
			continue
		case err != nil:
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
			case llm.BlockToolUse:
				c := call{Name: b.Name}
				json.Unmarshal(b.Input, &c.Args)
				got.Calls = append(got.Calls, c)
				if b.ID == "" {
					t.Errorf("%s: tool_use without id", fx.name)
				}
			}
		}
		if !reflect.DeepEqual(got, fx.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", fx.name, got, fx.want)
		}
		if deltas.String() != got.Text {
			t.Errorf("%s: text deltas %q, message text %q", fx.name, deltas.String(), got.Text)
		}
	}
}
