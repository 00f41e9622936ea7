package openai

import (
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/strata-agent/strata/llm"
)

// responsesParams maps a provider-neutral request onto Responses API params
// (POST /responses) by the rules in the package documentation ("Responses
// mapping").
func responsesParams(req *llm.Request) (responses.ResponseNewParams, error) {
	var p responses.ResponseNewParams
	if req == nil {
		return p, fmt.Errorf("responses params: request is nil")
	}
	if err := req.Validate(); err != nil {
		return p, err
	}
	if len(req.Stop) > 0 {
		return p, fmt.Errorf("responses params: stop %q: the Responses API has no stop sequences", req.Stop)
	}
	p.Model = shared.ResponsesModel(req.Model)
	p.Store = openai.Bool(false)
	if len(req.System) > 0 {
		p.Instructions = openai.String(req.SystemText())
	}
	var items responses.ResponseInputParam
	sentReasoning := false
	for i, m := range req.Messages {
		var err error
		if m.Role == llm.RoleAssistant {
			items, sentReasoning, err = assistantItems(items, m, sentReasoning)
		} else {
			items, err = userItems(items, m)
		}
		if err != nil {
			return p, fmt.Errorf("responses params: messages[%d]: %w", i, err)
		}
	}
	p.Input.OfInputItemList = items
	for i, t := range req.Tools {
		schema, err := schemaMap(t.InputSchema)
		if err != nil {
			return p, fmt.Errorf("responses params: tools[%d] %q input_schema: %w", i, t.Name, err)
		}
		ft := responses.FunctionToolParam{Name: t.Name, Parameters: schema, Strict: openai.Bool(false)}
		if t.Description != "" {
			ft.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: &ft})
	}
	if len(req.Tools) > 0 {
		switch tc := req.ToolChoice; tc.Mode {
		case llm.ToolChoiceAuto, llm.ToolChoiceNone:
			p.ToolChoice.OfToolChoiceMode = openai.Opt(responses.ToolChoiceOptions(tc.Mode))
		case llm.ToolChoiceAny:
			p.ToolChoice.OfToolChoiceMode = openai.Opt(responses.ToolChoiceOptionsRequired)
		case llm.ToolChoiceTool:
			p.ToolChoice.OfFunctionTool = &responses.ToolChoiceFunctionParam{Name: tc.Name}
		}
		if req.ToolChoice.DisableParallel {
			p.ParallelToolCalls = openai.Bool(false)
		}
	}
	if req.MaxTokens > 0 {
		p.MaxOutputTokens = openai.Int(req.MaxTokens)
	}
	if req.Temperature != nil {
		p.Temperature = openai.Float(*req.Temperature)
	}
	if req.TopP != nil {
		p.TopP = openai.Float(*req.TopP)
	}
	if err := noBudget("Responses", req.Reasoning); err != nil {
		return p, fmt.Errorf("responses params: %w", err)
	}
	if req.Reasoning.Effort != "" {
		p.Reasoning.Effort = shared.ReasoningEffort(req.Reasoning.Effort)
	}
	if req.Reasoning.Summary != "" {
		p.Reasoning.Summary = shared.ReasoningSummary(req.Reasoning.Summary)
	}
	if req.Reasoning.Effort != "" || req.Reasoning.Summary != "" || sentReasoning {
		p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
	}
	if req.PromptCacheKey != "" {
		p.PromptCacheKey = openai.String(req.PromptCacheKey)
	}
	if req.User != "" {
		p.SafetyIdentifier = openai.String(req.User)
	}
	return p, nil
}

func userItems(items responses.ResponseInputParam, m llm.Message) (responses.ResponseInputParam, error) {
	var parts responses.ResponseInputMessageContentListParam
	for i, b := range m.Content {
		switch b.Type {
		case llm.BlockToolResult:
			out := responses.ResponseInputItemFunctionCallOutputParam{CallID: openai.String(b.ID)}
			if len(b.Content) <= 1 && (len(b.Content) == 0 || b.Content[0].Type == llm.BlockText) {
				text := ""
				if len(b.Content) == 1 {
					text = b.Content[0].Text
				}
				out.Output.OfString = openai.String(text)
			} else {
				for j, c := range b.Content {
					switch c.Type {
					case llm.BlockText:
						out.Output.OfResponseFunctionCallOutputItemArray = append(out.Output.OfResponseFunctionCallOutputItemArray,
							responses.ResponseFunctionCallOutputItemUnionParam{OfInputText: &responses.ResponseInputTextContentParam{Text: c.Text}})
					case llm.BlockImage:
						u, err := imageURL(c)
						if err != nil {
							return nil, fmt.Errorf("block %d (tool_result %s) content %d: %w", i, b.ID, j, err)
						}
						out.Output.OfResponseFunctionCallOutputItemArray = append(out.Output.OfResponseFunctionCallOutputItemArray,
							responses.ResponseFunctionCallOutputItemUnionParam{OfInputImage: &responses.ResponseInputImageContentParam{ImageURL: openai.String(u), Detail: "auto"}})
					default:
						return nil, fmt.Errorf("block %d (tool_result %s) content %d: type %q not allowed in a tool result (text or image)", i, b.ID, j, c.Type)
					}
				}
			}
			items = append(items, responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &out})
		case llm.BlockText:
			parts = append(parts, responses.ResponseInputContentUnionParam{OfInputText: &responses.ResponseInputTextParam{Text: b.Text}})
		case llm.BlockImage:
			u, err := imageURL(b)
			if err != nil {
				return nil, fmt.Errorf("block %d: %w", i, err)
			}
			parts = append(parts, responses.ResponseInputContentUnionParam{OfInputImage: &responses.ResponseInputImageParam{ImageURL: openai.String(u), Detail: "auto"}})
		case llm.BlockThinking, llm.BlockRedactedThinking:
			// Reasoning belongs to assistant turns; dropped here.
		default:
			return nil, fmt.Errorf("block %d: type %q is not allowed in a user message", i, b.Type)
		}
	}
	switch {
	case len(parts) == 1 && parts[0].OfInputText != nil:
		items = append(items, responses.ResponseInputItemParamOfMessage(parts[0].OfInputText.Text, responses.EasyInputMessageRoleUser))
	case len(parts) > 0:
		items = append(items, responses.ResponseInputItemParamOfMessage(parts, responses.EasyInputMessageRoleUser))
	}
	return items, nil
}

func assistantItems(items responses.ResponseInputParam, m llm.Message, sentReasoning bool) (responses.ResponseInputParam, bool, error) {
	for i, b := range m.Content {
		switch b.Type {
		case llm.BlockText:
			if b.ItemID == "" {
				items = append(items, responses.ResponseInputItemParamOfMessage(b.Text, responses.EasyInputMessageRoleAssistant))
				continue
			}
			items = append(items, responses.ResponseInputItemUnionParam{OfOutputMessage: &responses.ResponseOutputMessageParam{
				ID:     b.ItemID,
				Status: responses.ResponseOutputMessageStatusCompleted,
				Content: []responses.ResponseOutputMessageContentUnionParam{{OfOutputText: &responses.ResponseOutputTextParam{
					Text: b.Text, Annotations: []responses.ResponseOutputTextAnnotationUnionParam{},
				}}},
			}})
		case llm.BlockToolUse:
			fc := responses.ResponseFunctionToolCallParam{CallID: b.ID, Name: b.Name, Arguments: string(b.Input)}
			if b.ItemID != "" {
				fc.ID = openai.String(b.ItemID)
			}
			items = append(items, responses.ResponseInputItemUnionParam{OfFunctionCall: &fc})
		case llm.BlockThinking:
			if b.ItemID == "" {
				continue // not a Responses reasoning item (see the package documentation)
			}
			r := responses.ResponseReasoningItemParam{ID: b.ItemID, Summary: []responses.ResponseReasoningItemSummaryParam{}}
			if b.Text != "" {
				r.Summary = append(r.Summary, responses.ResponseReasoningItemSummaryParam{Text: b.Text})
			}
			if b.Signature != "" {
				r.EncryptedContent = openai.String(b.Signature)
			}
			items = append(items, responses.ResponseInputItemUnionParam{OfReasoning: &r})
			sentReasoning = true
		case llm.BlockRedactedThinking:
			// Anthropic-only payload; dropped.
		default:
			return nil, false, fmt.Errorf("block %d: type %q is not allowed in an assistant message on the Responses API (text, tool_use, thinking)", i, b.Type)
		}
	}
	return items, sentReasoning, nil
}
