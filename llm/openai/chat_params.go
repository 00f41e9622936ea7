package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/strata-agent/strata/llm"
)

// chatParams maps a provider-neutral request onto Chat Completions params
// (POST /chat/completions) by the rules in the package documentation ("Chat
// Completions mapping").
func chatParams(req *llm.Request) (openai.ChatCompletionNewParams, error) {
	var p openai.ChatCompletionNewParams
	if req == nil {
		return p, fmt.Errorf("chat params: request is nil")
	}
	if err := req.Validate(); err != nil {
		return p, err
	}
	p.Model = shared.ChatModel(req.Model)
	if len(req.System) > 0 {
		p.Messages = append(p.Messages, openai.SystemMessage(req.SystemText()))
	}
	for i, m := range req.Messages {
		msgs, err := chatMessages(m)
		if err != nil {
			return p, fmt.Errorf("chat params: messages[%d]: %w", i, err)
		}
		p.Messages = append(p.Messages, msgs...)
	}
	for i, t := range req.Tools {
		schema, err := schemaMap(t.InputSchema)
		if err != nil {
			return p, fmt.Errorf("chat params: tools[%d] %q input_schema: %w", i, t.Name, err)
		}
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
		if t.Description != "" {
			fd.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fd))
	}
	if len(req.Tools) > 0 {
		switch tc := req.ToolChoice; tc.Mode {
		case llm.ToolChoiceAuto, llm.ToolChoiceNone:
			p.ToolChoice.OfAuto = openai.String(string(tc.Mode))
		case llm.ToolChoiceAny:
			p.ToolChoice.OfAuto = openai.String("required")
		case llm.ToolChoiceTool:
			p.ToolChoice = openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: tc.Name})
		}
		if req.ToolChoice.DisableParallel {
			p.ParallelToolCalls = openai.Bool(false)
		}
	}
	if req.MaxTokens > 0 {
		p.MaxCompletionTokens = openai.Int(req.MaxTokens)
	}
	if req.Temperature != nil {
		p.Temperature = openai.Float(*req.Temperature)
	}
	if req.TopP != nil {
		p.TopP = openai.Float(*req.TopP)
	}
	if len(req.Stop) > 0 {
		p.Stop.OfStringArray = append([]string(nil), req.Stop...)
	}
	if err := noBudget("Chat Completions", req.Reasoning); err != nil {
		return p, fmt.Errorf("chat params: %w", err)
	}
	if s := req.Reasoning.Summary; s != "" {
		return p, fmt.Errorf("chat params: reasoning.summary %q: Chat Completions returns no reasoning summaries (use openai-responses, or leave summary empty)", s)
	}
	if req.Reasoning.Effort != "" {
		p.ReasoningEffort = shared.ReasoningEffort(req.Reasoning.Effort)
	}
	if req.PromptCacheKey != "" {
		p.PromptCacheKey = openai.String(req.PromptCacheKey)
	}
	if req.User != "" {
		p.User = openai.String(req.User)
	}
	return p, nil
}

func chatMessages(m llm.Message) ([]openai.ChatCompletionMessageParamUnion, error) {
	if m.Role == llm.RoleAssistant {
		return chatAssistant(m)
	}
	var out []openai.ChatCompletionMessageParamUnion
	var parts []openai.ChatCompletionContentPartUnionParam
	for i, b := range m.Content {
		switch b.Type {
		case llm.BlockToolResult:
			var texts []string
			for j, c := range b.Content {
				switch c.Type {
				case llm.BlockText:
					texts = append(texts, c.Text)
				case llm.BlockImage:
					part, err := chatImage(c)
					if err != nil {
						return nil, fmt.Errorf("block %d (tool_result %s) content %d: %w", i, b.ID, j, err)
					}
					parts = append(parts, part)
				default:
					return nil, fmt.Errorf("block %d (tool_result %s) content %d: type %q not allowed in a tool result (text or image)", i, b.ID, j, c.Type)
				}
			}
			tm := openai.ChatCompletionToolMessageParam{ToolCallID: b.ID}
			if len(texts) == 1 || len(texts) == 0 {
				tm.Content.OfString = openai.String(strings.Join(texts, ""))
			} else {
				for _, t := range texts {
					tm.Content.OfArrayOfContentParts = append(tm.Content.OfArrayOfContentParts, openai.ChatCompletionContentPartTextParam{Text: t})
				}
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfTool: &tm})
		case llm.BlockText:
			parts = append(parts, openai.TextContentPart(b.Text))
		case llm.BlockImage:
			part, err := chatImage(b)
			if err != nil {
				return nil, fmt.Errorf("block %d: %w", i, err)
			}
			parts = append(parts, part)
		case llm.BlockThinking, llm.BlockRedactedThinking:
			// Not sendable on Chat Completions (see the package documentation).
		default:
			return nil, fmt.Errorf("block %d: type %q is not allowed in a user message", i, b.Type)
		}
	}
	if len(parts) == 1 && parts[0].OfText != nil {
		out = append(out, openai.UserMessage(parts[0].OfText.Text))
	} else if len(parts) > 0 {
		out = append(out, openai.UserMessage(parts))
	}
	return out, nil
}

// AssistantTextSeparator joins an assistant message's text blocks into the
// one content string Chat Completions takes: a blank line, as Context
// Pilot's OpenAI-compatible builder joins the panel header and timestamp
// (src/llms/openai_compat.rs, build_messages: format!("{}\n\n{}", header,
// timestamp); docs/panels.md, rule 10), so block boundaries stay visible.
const AssistantTextSeparator = "\n\n"

func chatAssistant(m llm.Message) ([]openai.ChatCompletionMessageParamUnion, error) {
	var am openai.ChatCompletionAssistantMessageParam
	var text strings.Builder
	hasText := false
	for i, b := range m.Content {
		switch b.Type {
		case llm.BlockText:
			if text.Len() > 0 && b.Text != "" {
				text.WriteString(AssistantTextSeparator)
			}
			text.WriteString(b.Text)
			hasText = true
		case llm.BlockToolUse:
			am.ToolCalls = append(am.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID:       b.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.Name, Arguments: string(b.Input)},
				},
			})
		case llm.BlockThinking, llm.BlockRedactedThinking:
			// Dropped: Chat Completions has no reasoning input field.
		default:
			return nil, fmt.Errorf("block %d: type %q is not allowed in an assistant message on Chat Completions (text, tool_use, thinking)", i, b.Type)
		}
	}
	if hasText && (text.Len() > 0 || len(am.ToolCalls) == 0) {
		am.Content.OfString = openai.String(text.String())
	}
	if !hasText && len(am.ToolCalls) == 0 {
		return nil, nil
	}
	return []openai.ChatCompletionMessageParamUnion{{OfAssistant: &am}}, nil
}

func chatImage(b llm.Block) (openai.ChatCompletionContentPartUnionParam, error) {
	u, err := imageURL(b)
	if err != nil {
		return openai.ChatCompletionContentPartUnionParam{}, err
	}
	return openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: u}), nil
}

// imageURL returns the image's URL, or a data: URL of its base64-encoded
// bytes (RFC 2397), which needs a MediaType.
func imageURL(b llm.Block) (string, error) {
	if b.URL != "" {
		return b.URL, nil
	}
	if len(b.Data) == 0 {
		return "", fmt.Errorf("image has neither data nor url")
	}
	if !strings.HasPrefix(b.MediaType, "image/") {
		return "", fmt.Errorf("image media_type %q: want image/png, image/jpeg, image/gif or image/webp", b.MediaType)
	}
	return "data:" + b.MediaType + ";base64," + base64.StdEncoding.EncodeToString(b.Data), nil
}

// noBudget rejects a thinking budget, which neither OpenAI API can express
// (reasoning is set by effort level only).
func noBudget(api string, r llm.Reasoning) error {
	if r.BudgetTokens != 0 {
		return fmt.Errorf("reasoning.budget_tokens %d: the %s API has no thinking budget; set reasoning.effort (e.g. \"low\", \"medium\", \"high\") instead", r.BudgetTokens, api)
	}
	return nil
}

// schemaMap decodes a tool input schema into the map the SDK params take,
// keeping numbers exact: they stay as their JSON text (json.RawMessage; the
// SDK's encoder would quote a json.Number). An empty schema is the empty
// object schema.
func schemaMap(raw json.RawMessage) (map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("schema is null, want a JSON object")
	}
	return rawNumbers(m).(map[string]any), nil
}

func rawNumbers(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = rawNumbers(x)
		}
	case []any:
		for i, x := range t {
			t[i] = rawNumbers(x)
		}
	case json.Number:
		return json.RawMessage(t)
	}
	return v
}
