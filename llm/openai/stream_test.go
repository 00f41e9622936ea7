package openai

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// simpleRequest is the request sent for fixtures without a recorded one.
func simpleRequest() *llm.Request {
	return &llm.Request{Model: "test-model", Messages: []llm.Message{llm.UserText("hello")}}
}

// provider returns the Chat or Responses provider for a replay server.
func provider(fam family, srv *replay.Server, nonStreaming bool) llm.Provider {
	cfg := Config{BaseURL: srv.URL() + "/v1", APIKey: "test-key", NonStreaming: nonStreaming}
	if fam == famResponses {
		return NewResponses(cfg)
	}
	return NewChat(cfg)
}

// TestFixtures replays every Chat Completions and Responses fixture of
// data/wire (INDEX.md) through the real SDK and compares the result with an
// independent reading of the fixture (expect_test.go).
func TestFixtures(t *testing.T) {
	cases, excluded, perFormat := fixtureCases(t)
	counts := map[string]int{}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			want, err := expectFor(c)
			if err != nil {
				t.Fatalf("reading fixture: %v", err)
			}
			srv, err := replay.NewServer(c.Resp)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var deltas []llm.Delta
			got, err := provider(c.Family, srv, !c.Streaming).Stream(ctx, simpleRequest(), func(d llm.Delta) { deltas = append(deltas, d) })
			if n := len(srv.Received()); n != 1 {
				t.Fatalf("server got %d requests, want 1", n)
			}
			kind := string(c.Family) + "/"
			if c.Streaming {
				kind += "stream"
			} else {
				kind += "json"
			}
			if want.Err != nil {
				checkError(t, err, want.Err)
				counts[kind+"/error"]++
				return
			}
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			checkResponse(t, got, want)
			if why, ok := deltaCheckExclusions[c.Name]; ok {
				t.Logf("delta check skipped: %s", why)
			} else {
				checkDeltas(t, got, deltas)
			}
			counts[kind]++
		})
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("covered %-28s %d", k, counts[k])
	}
	t.Logf("fixture files per format: %v", perFormat)
	for k, why := range excluded {
		t.Logf("excluded %s: %s", k, why)
	}
}

// deltaCheckExclusions lists fixtures whose streamed fragments cannot add
// up to the final message, so only the final message is checked.
var deltaCheckExclusions = map[string]string{
	"vercel-ai/openai/responses/openai-shell-container.1.chunks.txt": "abbreviated recording: the output_text deltas spell \"The command ran successfully.\" while response.completed holds a longer, different text",
}

func expectFor(c wireCase) (expected, error) {
	status := c.Resp.Status
	if status == 0 {
		status = 200
	}
	switch {
	case c.Family == famChat && c.Streaming:
		return expectChatStream(c.Resp.Body)
	case c.Family == famChat:
		return expectChatJSON(c.Resp.Body, status)
	case c.Streaming:
		if status >= 400 {
			return expectResponsesJSON(c.Resp.Body, status)
		}
		return expectResponsesStream(c.Resp.Body)
	}
	return expectResponsesJSON(c.Resp.Body, status)
}

func checkError(t *testing.T, err error, want *expErr) {
	t.Helper()
	if err == nil {
		t.Fatalf("Stream succeeded; want error %+v", *want)
	}
	if want.Truncated {
		if !errors.Is(err, llm.ErrStreamTruncated) {
			t.Fatalf("error %v; want ErrStreamTruncated", err)
		}
		return
	}
	var ae *llm.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("error %T %v; want *llm.APIError", err, err)
	}
	got := expErr{Status: ae.StatusCode, Type: ae.Type, Code: ae.Code, Message: ae.Message}
	if got != *want {
		t.Errorf("APIError\n got %+v\nwant %+v", got, *want)
	}
	if ae.Provider == "" {
		t.Errorf("APIError without provider name")
	}
}

func checkResponse(t *testing.T, got *llm.Response, want expected) {
	t.Helper()
	var text strings.Builder
	var thinking []string
	var tools []expTool
	for _, b := range got.Message.Content {
		switch b.Type {
		case llm.BlockText:
			text.WriteString(b.Text)
		case llm.BlockThinking:
			thinking = append(thinking, b.Text)
		case llm.BlockToolUse:
			tools = append(tools, expTool{ID: b.ID, ItemID: b.ItemID, Name: b.Name, Args: string(b.Input)})
		default:
			t.Errorf("unexpected block type %q", b.Type)
		}
	}
	if got.Message.Role != llm.RoleAssistant {
		t.Errorf("role %q", got.Message.Role)
	}
	if text.String() != want.Text {
		t.Errorf("text\n got %q\nwant %q", text.String(), want.Text)
	}
	if !reflect.DeepEqual(thinking, want.Thinking) {
		t.Errorf("thinking\n got %q\nwant %q", thinking, want.Thinking)
	}
	if len(tools) != len(want.Tools) {
		t.Fatalf("tool calls\n got %+v\nwant %+v", tools, want.Tools)
	}
	for i := range tools {
		g, w := tools[i], want.Tools[i]
		if g.ID != w.ID || g.Name != w.Name || g.ItemID != w.ItemID {
			t.Errorf("tool call %d: got id=%q item=%q name=%q, want id=%q item=%q name=%q", i, g.ID, g.ItemID, g.Name, w.ID, w.ItemID, w.Name)
		}
		if !jsonEqual(g.Args, orEmptyObject(w.Args)) {
			t.Errorf("tool call %d arguments\n got %s\nwant %s", i, g.Args, w.Args)
		}
	}
	if got.StopReason != want.Stop || got.ProviderStopReason != want.Raw {
		t.Errorf("stop got %q (%q), want %q (%q)", got.StopReason, got.ProviderStopReason, want.Stop, want.Raw)
	}
	if got.Usage != want.Usage {
		t.Errorf("usage\n got %+v\nwant %+v", got.Usage, want.Usage)
	}
}

// checkDeltas: the fragments of each block concatenate to the block.
func checkDeltas(t *testing.T, got *llm.Response, deltas []llm.Delta) {
	t.Helper()
	byIndex := map[int]*strings.Builder{}
	for _, d := range deltas {
		if d.Index < 0 || d.Index >= len(got.Message.Content) {
			t.Fatalf("delta %+v: index out of range (%d blocks)", d, len(got.Message.Content))
		}
		b := got.Message.Content[d.Index]
		wantType := map[llm.BlockType]llm.DeltaType{llm.BlockText: llm.DeltaText, llm.BlockThinking: llm.DeltaThinking, llm.BlockToolUse: llm.DeltaToolCall}[b.Type]
		if d.Type != wantType {
			t.Fatalf("delta %+v for a %s block", d, b.Type)
		}
		if d.Type == llm.DeltaToolCall && (d.ID != b.ID || d.Name != b.Name) {
			t.Errorf("tool delta id/name %q/%q, block %q/%q", d.ID, d.Name, b.ID, b.Name)
		}
		if byIndex[d.Index] == nil {
			byIndex[d.Index] = &strings.Builder{}
		}
		byIndex[d.Index].WriteString(d.Text)
	}
	for i, b := range got.Message.Content {
		s := ""
		if byIndex[i] != nil {
			s = byIndex[i].String()
		}
		switch b.Type {
		case llm.BlockToolUse:
			if !jsonEqual(orEmptyObject(s), string(b.Input)) {
				t.Errorf("block %d: tool deltas %q != input %s", i, s, b.Input)
			}
		default:
			if s != b.Text {
				t.Errorf("block %d (%s): deltas %q != text %q", i, b.Type, s, b.Text)
			}
		}
	}
}

func orEmptyObject(s string) string {
	if strings.TrimSpace(s) == "" {
		return "{}"
	}
	return s
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
