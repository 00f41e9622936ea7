package openai

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// Request encoding equivalence: every recorded Chat Completions / Responses
// request body of the pydantic-ai cassettes is read into an llm.Request by a
// small test-only reader, sent through the provider, and the body the SDK
// put on the wire must equal the recorded one as JSON after normalizing.
//
// Normalized on both sides (documented irrelevant or unmodeled fields):
//   - keys whose value is null (pydantic sends "content": null,
//     "description": null, "previous_response_id": null, "encrypted_content": null);
//   - "stream" false, "n": 1 (defaults), "stream_options" (compared apart:
//     strata always sends include_usage=true when streaming);
//   - tools' "strict" (strata sends none on Chat, false on Responses), an
//     empty tool "description", and an empty "tools" list;
//   - "include" (Responses; strata's own rule is tested in TestResponsesInclude),
//     "store" (strata always sends false), "service_tier", "instructions": "";
//   - explicit OpenAI cache controls "prompt_cache_breakpoint" and
//     "prompt_cache_options" (strata ignores Breakpoints on OpenAI);
//   - Chat: several system messages are merged into one (strata sends one,
//     joined with blank lines); assistant "reasoning_content" (DeepSeek) is
//     dropped (strata does not send thinking on Chat); legacy "max_tokens" is
//     compared as "max_completion_tokens";
//   - Responses: assistant message "phase" is dropped; a reasoning item's
//     summary parts are merged into one (joined with blank lines) and a
//     raw reasoning_text content with no summary is compared as that summary
//     (strata's thinking block holds one text).
//
// Skipped (features strata does not model): built-in / provider tools
// (web_search, file_search, mcp, code_interpreter, openrouter:*),
// web_search_options, moderation, background mode, conversations,
// provider-specific request options (OpenRouter models/provider/transforms/
// reasoning, Z.ai thinking), the "developer" role.
func TestRequestEquivalence(t *testing.T) {
	cases, _, _ := fixtureCases(t)
	sent, skipped := 0, map[string]string{}
	for _, c := range cases {
		if len(c.Request) == 0 || !strings.HasPrefix(c.Name, "pydantic-ai/") {
			continue
		}
		var rec obj
		if err := json.Unmarshal(c.Request, &rec); err != nil {
			t.Fatalf("%s: request body: %v", c.Name, err)
		}
		var req *llm.Request
		var why string
		if c.Family == famChat {
			req, why = chatRequestFrom(rec)
		} else {
			req, why = responsesRequestFrom(rec)
		}
		if why != "" {
			skipped[c.Name] = why
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			srv, err := replay.NewServer(c.Resp)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			stream, _ := rec["stream"].(bool)
			_, _ = provider(c.Family, srv, !stream).Stream(ctx, req, nil) // only the request matters here
			got := srv.Received()
			if len(got) != 1 {
				t.Fatalf("server got %d requests", len(got))
			}
			var sentBody obj
			if err := json.Unmarshal(got[0].Body, &sentBody); err != nil {
				t.Fatal(err)
			}
			if stream && c.Family == famChat && get(sentBody, "stream_options", "include_usage") != true {
				t.Errorf("streaming request without stream_options.include_usage=true")
			}
			want, have := normalize(rec, c.Family), normalize(sentBody, c.Family)
			if !reflect.DeepEqual(want, have) {
				w, _ := json.MarshalIndent(want, "", " ")
				h, _ := json.MarshalIndent(have, "", " ")
				t.Errorf("sent body differs from the recorded one\n--- recorded\n%s\n--- sent\n%s", w, h)
			}
		})
		sent++
	}
	t.Logf("compared %d recorded requests", sent)
	for k, v := range skipped {
		t.Logf("skipped %s: %s", k, v)
	}
	if sent < 30 {
		t.Errorf("only %d recorded requests compared", sent)
	}
}

// unmodeled returns why a recorded body uses a feature strata does not model.
func unmodeled(rec obj) string {
	for _, k := range []string{"web_search_options", "moderation", "background", "conversation", "response_format", "text", "models", "provider", "transforms", "reasoning", "thinking", "logprobs"} {
		if _, ok := rec[k]; ok {
			return "request option " + k
		}
	}
	for _, tl := range list(rec["tools"]) {
		if str(get(tl, "type")) != "function" {
			return "built-in tool " + str(get(tl, "type"))
		}
	}
	return ""
}

func textOf(v any) []llm.Block {
	if s, ok := v.(string); ok {
		return []llm.Block{llm.TextBlock(s)}
	}
	var out []llm.Block
	for _, p := range list(v) {
		switch str(get(p, "type")) {
		case "text", "input_text", "output_text":
			out = append(out, llm.TextBlock(str(get(p, "text"))))
		case "image_url":
			out = append(out, llm.Block{Type: llm.BlockImage, URL: str(get(p, "image_url", "url"))})
		case "input_image":
			out = append(out, llm.Block{Type: llm.BlockImage, URL: str(get(p, "image_url"))})
		}
	}
	return out
}

func commonFields(req *llm.Request, rec obj) {
	req.Model = str(rec["model"])
	for _, tl := range list(rec["tools"]) {
		fn := tl
		if f := get(tl, "function"); f != nil {
			fn = f
		}
		schema, _ := json.Marshal(get(fn, "parameters"))
		req.Tools = append(req.Tools, llm.ToolSpec{Name: str(get(fn, "name")), Description: str(get(fn, "description")), InputSchema: schema})
	}
	switch tc := rec["tool_choice"].(type) {
	case string:
		req.ToolChoice.Mode = map[string]llm.ToolChoiceMode{"auto": llm.ToolChoiceAuto, "required": llm.ToolChoiceAny, "none": llm.ToolChoiceNone}[tc]
	case obj:
		req.ToolChoice.Mode = llm.ToolChoiceTool
		req.ToolChoice.Name = str(get(tc, "name"))
		if n := str(get(tc, "function", "name")); n != "" {
			req.ToolChoice.Name = n
		}
	}
	if p, ok := rec["parallel_tool_calls"].(bool); ok && !p {
		req.ToolChoice.DisableParallel = true
	}
	for _, k := range []string{"max_completion_tokens", "max_tokens", "max_output_tokens"} {
		if v, ok := rec[k].(float64); ok {
			req.MaxTokens = int64(v)
		}
	}
	if v, ok := rec["temperature"].(float64); ok {
		req.Temperature = &v
	}
	if v, ok := rec["top_p"].(float64); ok {
		req.TopP = &v
	}
	req.PromptCacheKey = str(rec["prompt_cache_key"])
	req.Reasoning.Effort = str(rec["reasoning_effort"])
}

// chatRequestFrom reads a recorded Chat Completions body into an llm.Request.
func chatRequestFrom(rec obj) (*llm.Request, string) {
	if why := unmodeled(rec); why != "" {
		return nil, why
	}
	req := &llm.Request{}
	commonFields(req, rec)
	req.User = str(rec["user"])
	switch st := rec["stop"].(type) {
	case string:
		req.Stop = []string{st}
	case []any:
		for _, x := range st {
			req.Stop = append(req.Stop, str(x))
		}
	}
	var pending *llm.Message // user message collecting tool results
	flush := func() {
		if pending != nil {
			req.Messages = append(req.Messages, *pending)
			pending = nil
		}
	}
	for _, m := range list(rec["messages"]) {
		switch str(get(m, "role")) {
		case "system":
			req.System = append(req.System, textOf(get(m, "content"))...)
		case "developer":
			return nil, "developer role"
		case "user":
			if pending == nil {
				pending = &llm.Message{Role: llm.RoleUser}
			}
			pending.Content = append(pending.Content, textOf(get(m, "content"))...)
			flush()
		case "tool":
			if pending == nil {
				pending = &llm.Message{Role: llm.RoleUser}
			}
			pending.Content = append(pending.Content, llm.Block{Type: llm.BlockToolResult, ID: str(get(m, "tool_call_id")), Content: textOf(get(m, "content"))})
		case "assistant":
			flush()
			am := llm.Message{Role: llm.RoleAssistant}
			if c := get(m, "content"); c != nil {
				am.Content = append(am.Content, textOf(c)...)
			}
			for _, tc := range list(get(m, "tool_calls")) {
				am.Content = append(am.Content, llm.Block{Type: llm.BlockToolUse, ID: str(get(tc, "id")), Name: str(get(tc, "function", "name")), Input: json.RawMessage(str(get(tc, "function", "arguments")))})
			}
			req.Messages = append(req.Messages, am)
		}
	}
	flush()
	return req, ""
}

// responsesRequestFrom reads a recorded Responses body into an llm.Request.
func responsesRequestFrom(rec obj) (*llm.Request, string) {
	noReasoning := obj{}
	for k, v := range rec {
		if k != "reasoning" { // modeled on Responses
			noReasoning[k] = v
		}
	}
	if why := unmodeled(noReasoning); why != "" {
		return nil, why
	}
	req := &llm.Request{}
	commonFields(req, rec)
	req.Reasoning.Effort = str(get(rec, "reasoning", "effort"))
	req.Reasoning.Summary = str(get(rec, "reasoning", "summary"))
	req.User = str(rec["safety_identifier"])
	if s := str(rec["instructions"]); s != "" {
		req.System = []llm.Block{llm.TextBlock(s)}
	}
	var cur *llm.Message
	add := func(role llm.Role, b ...llm.Block) {
		// function_call_output items and the user message after them share
		// one user message; a user message closes it.
		if cur == nil || cur.Role != role {
			if cur != nil {
				req.Messages = append(req.Messages, *cur)
			}
			cur = &llm.Message{Role: role}
		}
		cur.Content = append(cur.Content, b...)
	}
	closeUser := func() {
		if cur != nil && cur.Role == llm.RoleUser {
			req.Messages = append(req.Messages, *cur)
			cur = nil
		}
	}
	for _, it := range list(rec["input"]) {
		switch typ, role := str(get(it, "type")), str(get(it, "role")); {
		case role == "user":
			add(llm.RoleUser, textOf(get(it, "content"))...)
			closeUser()
		case role == "assistant":
			blocks := textOf(get(it, "content"))
			for i := range blocks {
				blocks[i].ItemID = str(get(it, "id"))
			}
			add(llm.RoleAssistant, blocks...)
		case typ == "function_call":
			add(llm.RoleAssistant, llm.Block{Type: llm.BlockToolUse, ID: str(get(it, "call_id")), ItemID: str(get(it, "id")), Name: str(get(it, "name")), Input: json.RawMessage(str(get(it, "arguments")))})
		case typ == "reasoning":
			var parts []string
			for _, s := range list(get(it, "summary")) {
				parts = append(parts, str(get(s, "text")))
			}
			if len(parts) == 0 {
				for _, c := range list(get(it, "content")) {
					parts = append(parts, str(get(c, "text")))
				}
			}
			add(llm.RoleAssistant, llm.Block{Type: llm.BlockThinking, ItemID: str(get(it, "id")), Signature: str(get(it, "encrypted_content")), Text: strings.Join(parts, "\n\n")})
		case typ == "function_call_output":
			add(llm.RoleUser, llm.Block{Type: llm.BlockToolResult, ID: str(get(it, "call_id")), Content: textOf(get(it, "output"))})
		default:
			return nil, "input item " + typ
		}
	}
	if cur != nil {
		req.Messages = append(req.Messages, *cur)
	}
	return req, ""
}

// normalize applies the documented normalizations (see TestRequestEquivalence).
func normalize(body obj, fam family) any {
	b := dropNulls(body).(obj)
	for _, k := range []string{"stream_options", "include", "store", "service_tier", "prompt_cache_options"} {
		delete(b, k)
	}
	if b["stream"] == false {
		delete(b, "stream")
	}
	if b["n"] == float64(1) {
		delete(b, "n")
	}
	if b["instructions"] == "" {
		delete(b, "instructions")
	}
	if tl, ok := b["tools"].([]any); ok && len(tl) == 0 {
		delete(b, "tools")
	}
	if v, ok := b["max_tokens"]; ok {
		b["max_completion_tokens"] = v
		delete(b, "max_tokens")
	}
	for _, tl := range list(b["tools"]) {
		for _, m := range []any{tl, get(tl, "function")} {
			if mm, ok := m.(obj); ok {
				delete(mm, "strict")
				if mm["description"] == "" {
					delete(mm, "description")
				}
			}
		}
	}
	var msgs []any
	var system []string
	key := "messages"
	if fam == famResponses {
		key = "input"
	}
	for _, m := range list(b[key]) {
		mm, _ := m.(obj)
		stripBreakpoints(mm)
		delete(mm, "phase")
		delete(mm, "reasoning_content")
		if fam == famChat && mm["role"] == "system" {
			for _, blk := range textOf(mm["content"]) {
				system = append(system, blk.Text)
			}
			continue
		}
		if mm["type"] == "reasoning" {
			var parts []string
			for _, s := range list(mm["summary"]) {
				parts = append(parts, str(get(s, "text")))
			}
			if len(parts) == 0 {
				for _, c := range list(mm["content"]) {
					parts = append(parts, str(get(c, "text")))
				}
			}
			delete(mm, "content")
			mm["summary"] = []any{}
			if len(parts) > 0 {
				mm["summary"] = []any{obj{"type": "summary_text", "text": strings.Join(parts, "\n\n")}}
			}
		}
		msgs = append(msgs, mm)
	}
	if len(system) > 0 {
		msgs = append([]any{obj{"role": "system", "content": strings.Join(system, "\n\n")}}, msgs...)
	}
	if msgs != nil {
		b[key] = msgs
	}
	return b
}

func stripBreakpoints(m obj) {
	for _, p := range list(m["content"]) {
		if pm, ok := p.(obj); ok {
			delete(pm, "prompt_cache_breakpoint")
		}
	}
}

func dropNulls(v any) any {
	switch t := v.(type) {
	case obj:
		out := obj{}
		for k, x := range t {
			if x != nil {
				out[k] = dropNulls(x)
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = dropNulls(x)
		}
		return out
	}
	return v
}
