package openai

// An independent, deliberately simple reading of fixture bodies with
// encoding/json into maps: it computes what a provider must return, without
// the SDK and without the code under test. It re-states the documented
// mapping rules (Chat.Stream, Responses.Stream) in the plainest form.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/strata-agent/strata/llm"
)

type expTool struct{ ID, ItemID, Name, Args string }

type expErr struct {
	Status              int
	Type, Code, Message string
	Truncated           bool
}

type expected struct {
	Err      *expErr
	Text     string
	Thinking []string
	Tools    []expTool
	Stop     llm.StopReason
	Raw      string
	Usage    llm.Usage
}

type obj = map[string]any

// ssePayloads returns the JSON payloads of the "data:" lines of an SSE body
// and whether a "data: [DONE]" line was present.
func ssePayloads(body []byte) (out []obj, done bool, err error) {
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "data:") {
			continue
		}
		data := strings.TrimSpace(strings.TrimPrefix(line, "data:"))
		if data == "[DONE]" {
			done = true
			continue
		}
		var m obj
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			return nil, false, err
		}
		out = append(out, m)
	}
	return out, done, sc.Err()
}

func str(v any) string { s, _ := v.(string); return s }

func num(v any) int64 { f, _ := v.(float64); return int64(f) }

func get(m any, path ...string) any {
	for _, k := range path {
		mm, ok := m.(obj)
		if !ok {
			return nil
		}
		m = mm[k]
	}
	return m
}

func list(v any) []any { l, _ := v.([]any); return l }

// codeText renders an error code that may be a string or a number.
func codeText(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case float64:
		return strconv.FormatInt(int64(t), 10)
	}
	return ""
}

// errorFrom reads an {"type","code","message","status_code"?} error object.
func errorFrom(e any, status int) *expErr {
	x := &expErr{Status: status, Type: str(get(e, "type")), Code: codeText(get(e, "code")), Message: str(get(e, "message"))}
	if status == 0 {
		if sc := num(get(e, "status_code")); sc != 0 {
			x.Status = int(sc)
		} else if c, ok := get(e, "code").(float64); ok && x.Type == "" && c >= 400 && c < 600 {
			x.Status = int(c)
		}
	}
	return x
}

// chatReasoning: reasoning_content, else reasoning (non-empty strings), else
// reasoning_details texts/summaries.
func chatReasoning(d any) string {
	if s := str(get(d, "reasoning_content")); s != "" {
		return s
	}
	if s := str(get(d, "reasoning")); s != "" {
		return s
	}
	var b strings.Builder
	for _, x := range list(get(d, "reasoning_details")) {
		switch str(get(x, "type")) {
		case "reasoning.text":
			b.WriteString(str(get(x, "text")))
		case "reasoning.summary":
			b.WriteString(str(get(x, "summary")))
		}
	}
	return b.String()
}

// chatContent splits content (a string or Mistral parts) into text and
// thinking.
func chatContent(c any) (text, thinking string) {
	if s, ok := c.(string); ok {
		return s, ""
	}
	for _, p := range list(c) {
		switch str(get(p, "type")) {
		case "text":
			text += str(get(p, "text"))
		case "thinking":
			for _, t := range list(get(p, "thinking")) {
				thinking += str(get(t, "text"))
			}
		}
	}
	return text, thinking
}

func chatUsageOf(u any) llm.Usage {
	cached := num(get(u, "prompt_tokens_details", "cached_tokens"))
	x := llm.Usage{
		Input:     num(get(u, "prompt_tokens")) - cached,
		CacheRead: cached,
		Output:    num(get(u, "completion_tokens")),
		Reasoning: num(get(u, "completion_tokens_details", "reasoning_tokens")),
	}
	x.Total = x.Input + x.CacheRead + x.Output
	return x
}

func chatStopOf(finish string, tools, refusal bool) llm.StopReason {
	switch {
	case finish == "length":
		return llm.StopMaxTokens
	case finish == "content_filter" || refusal:
		return llm.StopRefusal
	case tools || finish == "tool_calls":
		return llm.StopToolUse
	}
	return llm.StopEndTurn
}

// expectChatStream reads a Chat Completions SSE body (choice 0).
func expectChatStream(body []byte) (expected, error) {
	ps, done, err := ssePayloads(body)
	if err != nil {
		return expected{}, err
	}
	var e expected
	var text, refusal, thinking, finish string
	var usage any
	calls := map[int]*expTool{}
	n := 0
	for _, p := range ps {
		if er, ok := p["error"]; ok && er != nil {
			e.Err = errorFrom(er, 0)
			return e, nil
		}
		if u, ok := p["usage"].(obj); ok {
			usage = u
		}
		for _, ch := range list(p["choices"]) {
			if num(get(ch, "index")) != 0 {
				continue
			}
			d := get(ch, "delta")
			thinking += chatReasoning(d)
			t, th := chatContent(get(d, "content"))
			text += t
			thinking += th
			refusal += str(get(d, "refusal"))
			for _, tc := range list(get(d, "tool_calls")) {
				i := int(num(get(tc, "index")))
				if i < 0 {
					i = 0
				}
				c := calls[i]
				if c == nil {
					c = &expTool{}
					calls[i] = c
					n = max(n, i+1)
				}
				if id := str(get(tc, "id")); id != "" {
					c.ID = id
				}
				c.Name += str(get(tc, "function", "name"))
				c.Args += str(get(tc, "function", "arguments"))
			}
			if f := str(get(ch, "finish_reason")); f != "" {
				finish = f
			}
		}
	}
	if !done {
		e.Err = &expErr{Truncated: true}
		return e, nil
	}
	e.Text = text + refusal
	if thinking != "" {
		e.Thinking = []string{thinking}
	}
	for i := 0; i < n; i++ {
		if c := calls[i]; c != nil {
			e.Tools = append(e.Tools, *c)
		}
	}
	e.Raw = finish
	e.Stop = chatStopOf(finish, len(e.Tools) > 0, refusal != "")
	if usage != nil {
		e.Usage = chatUsageOf(usage)
	}
	return e, nil
}

// expectChatJSON reads a non-streaming Chat Completions body with its
// HTTP status.
func expectChatJSON(body []byte, status int) (expected, error) {
	var p obj
	if err := json.Unmarshal(body, &p); err != nil {
		return expected{}, err
	}
	var e expected
	if status >= 400 {
		e.Err = errorFrom(p["error"], status)
		return e, nil
	}
	var ch any
	for _, c := range list(p["choices"]) {
		if num(get(c, "index")) == 0 {
			ch = c
			break
		}
	}
	m := get(ch, "message")
	thinking := chatReasoning(m)
	text, th := chatContent(get(m, "content"))
	thinking += th
	refusal := str(get(m, "refusal"))
	e.Text = text + refusal
	if thinking != "" {
		e.Thinking = []string{thinking}
	}
	for _, tc := range list(get(m, "tool_calls")) {
		e.Tools = append(e.Tools, expTool{ID: str(get(tc, "id")), Name: str(get(tc, "function", "name")), Args: str(get(tc, "function", "arguments"))})
	}
	e.Raw = str(get(ch, "finish_reason"))
	e.Stop = chatStopOf(e.Raw, len(e.Tools) > 0, refusal != "")
	if u, ok := p["usage"].(obj); ok {
		e.Usage = chatUsageOf(u)
	}
	return e, nil
}

// expectResponse reads a final Responses "response" object (output items,
// status, usage); items stands in for an empty output.
func expectResponse(r any, items []any) expected {
	var e expected
	if str(get(r, "status")) == "failed" {
		e.Err = errorFrom(get(r, "error"), 0)
		if e.Err.Type == "" {
			e.Err.Type = e.Err.Code
		}
		return e
	}
	output := list(get(r, "output"))
	if len(output) == 0 {
		output = items
	}
	refusal := false
	for _, it := range output {
		switch str(get(it, "type")) {
		case "reasoning":
			var parts []string
			for _, s := range list(get(it, "summary")) {
				parts = append(parts, str(get(s, "text")))
			}
			if len(parts) == 0 {
				for _, c := range list(get(it, "content")) {
					parts = append(parts, str(get(c, "text")))
				}
			}
			e.Thinking = append(e.Thinking, strings.Join(parts, "\n\n"))
		case "message":
			for _, c := range list(get(it, "content")) {
				switch str(get(c, "type")) {
				case "output_text":
					e.Text += str(get(c, "text"))
				case "refusal":
					refusal = true
					e.Text += str(get(c, "refusal"))
				}
			}
		case "function_call":
			e.Tools = append(e.Tools, expTool{ID: str(get(it, "call_id")), ItemID: str(get(it, "id")), Name: str(get(it, "name")), Args: str(get(it, "arguments"))})
		}
	}
	e.Raw = str(get(r, "status"))
	switch {
	case e.Raw == "incomplete":
		e.Raw = str(get(r, "incomplete_details", "reason"))
		e.Stop = map[string]llm.StopReason{"max_output_tokens": llm.StopMaxTokens, "content_filter": llm.StopRefusal}[e.Raw]
		if e.Stop == "" {
			e.Stop = llm.StopEndTurn
		}
	case refusal:
		e.Stop = llm.StopRefusal
	case len(e.Tools) > 0:
		e.Stop = llm.StopToolUse
	default:
		e.Stop = llm.StopEndTurn
	}
	u := get(r, "usage")
	cached := num(get(u, "input_tokens_details", "cached_tokens"))
	e.Usage = llm.Usage{Input: num(get(u, "input_tokens")) - cached, CacheRead: cached, Output: num(get(u, "output_tokens")),
		Reasoning: num(get(u, "output_tokens_details", "reasoning_tokens"))}
	e.Usage.Total = e.Usage.Input + e.Usage.CacheRead + e.Usage.Output
	return e
}

// expectResponsesStream reads a Responses SSE body: the first error /
// response.failed event, or the response of response.completed /
// response.incomplete; without either the stream is truncated.
func expectResponsesStream(body []byte) (expected, error) {
	ps, _, err := ssePayloads(body)
	if err != nil {
		return expected{}, err
	}
	var done []any
	for _, p := range ps {
		switch str(p["type"]) {
		case "error":
			if er, ok := p["error"].(obj); ok {
				return expected{Err: errorFrom(er, 0)}, nil
			}
			return expected{Err: &expErr{Type: "error", Code: codeText(p["code"]), Message: str(p["message"])}}, nil
		case "response.failed", "response.completed", "response.incomplete":
			return expectResponse(p["response"], done), nil
		case "response.output_item.done":
			switch str(get(p, "item", "type")) {
			case "message", "reasoning", "function_call":
				done = append(done, p["item"])
			}
		}
	}
	return expected{Err: &expErr{Truncated: true}}, nil
}

// expectResponsesJSON reads a non-streaming Responses body.
func expectResponsesJSON(body []byte, status int) (expected, error) {
	var p obj
	if err := json.Unmarshal(body, &p); err != nil {
		return expected{}, err
	}
	if status >= 400 {
		return expected{Err: errorFrom(p["error"], status)}, nil
	}
	return expectResponse(p, nil), nil
}
