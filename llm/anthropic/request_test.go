package anthropic

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// errUnmodeled marks a recorded request that uses a feature strata does not
// model; the interaction is skipped with the message as the reason.
type errUnmodeled string

func (e errUnmodeled) Error() string { return string(e) }

func unmodeled(format string, args ...any) error { return errUnmodeled(fmt.Sprintf(format, args...)) }

// onlyKeys fails with errUnmodeled when m holds a key outside allowed.
func onlyKeys(where string, m map[string]any, allowed ...string) error {
	for k := range m {
		if !contains(allowed, k) {
			return unmodeled("%s.%s not modeled", where, k)
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// requestFromWire is the test's reader of a recorded Messages request body
// into an llm.Request: every field strata models, errUnmodeled for anything
// else (server tools, output_config, context_management, mcp_servers,
// container, top-level cache_control, citations, documents, …).
func requestFromWire(body []byte) (*llm.Request, error) {
	var w map[string]any
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, err
	}
	normalizeWire(w)
	if err := onlyKeys("request", w, "model", "max_tokens", "messages", "system", "tools", "tool_choice",
		"temperature", "top_p", "stop_sequences", "thinking", "metadata", "stream"); err != nil {
		return nil, err
	}
	r := &llm.Request{Model: str(w["model"])}
	r.MaxTokens, _ = num(w["max_tokens"])
	if v, ok := w["temperature"].(float64); ok {
		r.Temperature = &v
	}
	if v, ok := w["top_p"].(float64); ok {
		r.TopP = &v
	}
	for _, s := range asList(w["stop_sequences"]) {
		r.Stop = append(r.Stop, str(s))
	}
	if th, ok := w["thinking"].(map[string]any); ok {
		if str(th["type"]) != "enabled" {
			return nil, unmodeled("thinking.type %q not modeled", th["type"])
		}
		r.Reasoning.BudgetTokens, _ = num(th["budget_tokens"])
	}
	if md, ok := w["metadata"].(map[string]any); ok {
		if err := onlyKeys("metadata", md, "user_id"); err != nil {
			return nil, err
		}
		r.User = str(md["user_id"])
	}
	switch sys := w["system"].(type) {
	case nil:
	case string:
		r.System = []llm.Block{llm.TextBlock(sys)}
	case []any:
		for i, s := range sys {
			b, _ := s.(map[string]any)
			if err := onlyKeys("system block", b, "type", "text", "cache_control"); err != nil {
				return nil, err
			}
			r.System = append(r.System, llm.TextBlock(str(b["text"])))
			if err := breakpoint(r, b, llm.Breakpoint{Target: llm.BreakSystem, Block: i}); err != nil {
				return nil, err
			}
		}
	}
	for mi, m := range asList(w["messages"]) {
		mm, _ := m.(map[string]any)
		msg := llm.Message{Role: llm.Role(str(mm["role"]))}
		blocks, err := contentList(mm["content"])
		if err != nil {
			return nil, err
		}
		for bi, b := range blocks {
			blk, err := blockFromWire(b)
			if err != nil {
				return nil, err
			}
			msg.Content = append(msg.Content, blk)
			if err := breakpoint(r, b, llm.Breakpoint{Target: llm.BreakMessage, Message: mi, Block: bi}); err != nil {
				return nil, err
			}
		}
		r.Messages = append(r.Messages, msg)
	}
	for _, t := range asList(w["tools"]) {
		tm, _ := t.(map[string]any)
		if _, ok := tm["type"]; ok && str(tm["type"]) != "custom" {
			return nil, unmodeled("server tool %q not modeled", tm["type"])
		}
		if err := onlyKeys("tool", tm, "name", "description", "input_schema", "cache_control", "type"); err != nil {
			return nil, err
		}
		schema, _ := json.Marshal(tm["input_schema"])
		r.Tools = append(r.Tools, llm.ToolSpec{Name: str(tm["name"]), Description: str(tm["description"]), InputSchema: schema})
		if err := breakpoint(r, tm, llm.Breakpoint{Target: llm.BreakTools}); err != nil {
			return nil, err
		}
	}
	if tc, ok := w["tool_choice"].(map[string]any); ok {
		if err := onlyKeys("tool_choice", tc, "type", "name", "disable_parallel_tool_use"); err != nil {
			return nil, err
		}
		r.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceMode(str(tc["type"])), Name: str(tc["name"])}
		r.ToolChoice.DisableParallel, _ = tc["disable_parallel_tool_use"].(bool)
	}
	return r, nil
}

// breakpoint adds the breakpoint a block's cache_control stands for.
func breakpoint(r *llm.Request, b map[string]any, bp llm.Breakpoint) error {
	cc, ok := b["cache_control"].(map[string]any)
	if !ok {
		return nil
	}
	if err := onlyKeys("cache_control", cc, "type", "ttl"); err != nil {
		return err
	}
	if str(cc["type"]) != "ephemeral" {
		return unmodeled("cache_control.type %q not modeled", cc["type"])
	}
	bp.TTL = str(cc["ttl"])
	r.Breakpoints = append(r.Breakpoints, bp)
	return nil
}

func asList(v any) []any { l, _ := v.([]any); return l }

// contentList reads message or tool_result content: a string stands for one
// text block.
func contentList(v any) ([]map[string]any, error) {
	switch c := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []map[string]any{{"type": "text", "text": c}}, nil
	case []any:
		var out []map[string]any
		for _, x := range c {
			m, ok := x.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("content element %T", x)
			}
			out = append(out, m)
		}
		return out, nil
	}
	return nil, fmt.Errorf("content %T", v)
}

func blockFromWire(b map[string]any) (llm.Block, error) {
	common := []string{"type", "cache_control"}
	switch typ := str(b["type"]); typ {
	case "text":
		return llm.TextBlock(str(b["text"])), onlyKeys("text block", b, append(common, "text")...)
	case "image":
		src, _ := b["source"].(map[string]any)
		switch str(src["type"]) {
		case "base64":
			data, err := base64.StdEncoding.DecodeString(str(src["data"]))
			if err != nil {
				return llm.Block{}, err
			}
			return llm.Block{Type: llm.BlockImage, MediaType: str(src["media_type"]), Data: data}, onlyKeys("image block", b, append(common, "source")...)
		case "url":
			return llm.Block{Type: llm.BlockImage, URL: str(src["url"])}, onlyKeys("image block", b, append(common, "source")...)
		}
		return llm.Block{}, unmodeled("image source %q not modeled", src["type"])
	case "tool_use":
		input, _ := json.Marshal(b["input"])
		return llm.ToolUseBlock(str(b["id"]), str(b["name"]), input), onlyKeys("tool_use block", b, append(common, "id", "name", "input")...)
	case "tool_result":
		blk := llm.Block{Type: llm.BlockToolResult, ID: str(b["tool_use_id"])}
		blk.IsError, _ = b["is_error"].(bool)
		inner, err := contentList(b["content"])
		if err != nil {
			return llm.Block{}, err
		}
		for _, c := range inner {
			ib, err := blockFromWire(c)
			if err != nil {
				return llm.Block{}, err
			}
			blk.Content = append(blk.Content, ib)
		}
		return blk, onlyKeys("tool_result block", b, append(common, "tool_use_id", "is_error", "content")...)
	case "thinking":
		return llm.Block{Type: llm.BlockThinking, Text: str(b["thinking"]), Signature: str(b["signature"])}, onlyKeys("thinking block", b, "type", "thinking", "signature")
	case "redacted_thinking":
		return llm.Block{Type: llm.BlockRedactedThinking, Data: []byte(str(b["data"]))}, onlyKeys("redacted_thinking block", b, "type", "data")
	default:
		return llm.Block{}, unmodeled("content block %q not modeled", typ)
	}
}

// normalizeWire rewrites a decoded request body into the canonical form both
// sides are compared in. Every rewrite is a documented equivalence, not a
// loss of information strata models:
//
//   - "stream": false ≡ absent (the API default; true is compared as is);
//   - system, message content and tool_result content given as a string ≡ one
//     text block with that text (Messages API: "a string is shorthand for an
//     array of one text block");
//   - tool_result "is_error": false ≡ absent (the API default);
//   - "tools": [] ≡ absent (no tools); a tool's "description": "" ≡ absent;
//   - tool_use "caller": {"type": "direct"}: a beta field the Python tool
//     runner echoes back from the response (direct is the default caller;
//     strata does not model callers), removed.
func normalizeWire(v map[string]any) {
	if s, ok := v["stream"].(bool); ok && !s {
		delete(v, "stream")
	}
	if s, ok := v["system"].(string); ok {
		v["system"] = []any{map[string]any{"type": "text", "text": s}}
	}
	if l, ok := v["tools"].([]any); ok && len(l) == 0 {
		delete(v, "tools")
	}
	for _, t := range asList(v["tools"]) {
		if tm, _ := t.(map[string]any); tm != nil && tm["description"] == "" {
			delete(tm, "description")
		}
	}
	for _, m := range asList(v["messages"]) {
		mm, _ := m.(map[string]any)
		if s, ok := mm["content"].(string); ok {
			mm["content"] = []any{map[string]any{"type": "text", "text": s}}
		}
		for _, b := range asList(mm["content"]) {
			bm, _ := b.(map[string]any)
			if c, ok := bm["caller"].(map[string]any); ok && str(c["type"]) == "direct" && len(c) == 1 {
				delete(bm, "caller")
			}
			if bm["type"] != "tool_result" {
				continue
			}
			if e, ok := bm["is_error"].(bool); ok && !e {
				delete(bm, "is_error")
			}
			if s, ok := bm["content"].(string); ok {
				bm["content"] = []any{map[string]any{"type": "text", "text": s}}
			}
		}
	}
}

// TestRequestEncoding converts each recorded Anthropic request body into an
// llm.Request, sends it through the provider, and checks that the body the
// SDK sent is JSON-equivalent to the recorded one (after normalizeWire on
// both sides).
func TestRequestEncoding(t *testing.T) {
	_, cases := anthropicFixtures(t)
	compared, skipped := 0, map[string]string{}
	for _, c := range cases {
		if c.format != "cassette" {
			continue
		}
		req, err := requestFromWire(c.reqBody)
		if _, ok := err.(errUnmodeled); ok {
			skipped[c.name] = err.Error()
			continue
		}
		if err != nil {
			t.Errorf("%s: reading the recorded request: %v", c.name, err)
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			srv, err := replay.NewServer(c.resp)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			p := New(Config{APIKey: "k", BaseURL: srv.URL(), NonStreaming: !c.streaming})
			_, streamErr := p.Stream(context.Background(), req, nil)
			got := srv.Received()
			if len(got) != 1 {
				t.Fatalf("server received %d requests (Stream error: %v)", len(got), streamErr)
			}
			if got[0].Method != "POST" || !strings.HasPrefix(got[0].Path, "/v1/messages") {
				t.Errorf("request %s %s", got[0].Method, got[0].Path)
			}
			var want, sent map[string]any
			if err := json.Unmarshal(c.reqBody, &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(got[0].Body, &sent); err != nil {
				t.Fatalf("sent body is not JSON: %v", err)
			}
			normalizeWire(want)
			normalizeWire(sent)
			if !reflect.DeepEqual(want, sent) {
				wb, _ := json.Marshal(want)
				sb, _ := json.Marshal(sent)
				t.Errorf("sent body differs from the recorded one\nrecorded: %.3000s\nsent:     %.3000s", wb, sb)
			}
		})
		compared++
	}
	names := make([]string, 0, len(skipped))
	for n := range skipped {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Logf("skipped %s: %s", n, skipped[n])
	}
	t.Logf("compared %d recorded request bodies, skipped %d", compared, len(skipped))
	if compared < 30 {
		t.Errorf("only %d request bodies compared", compared)
	}
}
