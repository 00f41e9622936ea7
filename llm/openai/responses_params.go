package openai

import (
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/strata-agent/strata/llm"
)

// ResponsesParams maps a provider-neutral request onto Responses API params
// (POST /responses). It validates req first (llm.Request.Validate) and
// returns an error naming the offending field for anything it cannot
// express.
//
// System blocks → instructions (joined with blank lines). Input items, in
// message order:
//
//   - User message → one function_call_output item per tool_result block,
//     in order (call_id = the tool_use id; output = the result text as a
//     string, or an input_text/input_image list when it holds several blocks
//     or an image; is_error has no field and is not sent), then one user
//     message with the remaining text and image blocks (content is a plain
//     string for exactly one text block, else input_text/input_image parts;
//     images by URL or as a base64 data: URL, detail "auto").
//   - Assistant message → one item per block, in order: text with an ItemID
//     → an output message item {id, status "completed", content
//     [output_text]}, text without one → an easy assistant message {role,
//     content}; tool_use → function_call {call_id = ID, id = ItemID when
//     set, name, arguments = Input unchanged}; thinking with an ItemID →
//     reasoning {id = ItemID, encrypted_content = Signature when set,
//     summary = [summary_text Text] or [] when Text is empty}. Thinking
//     without an ItemID (e.g. from another provider) and redacted_thinking
//     cannot be sent and are dropped; images are an error.
//
// Request fields: tools → function tools (parameters = InputSchema, an
// empty schema becomes the empty object schema; strict=false, since strict
// mode requires every property to be required and additionalProperties
// false, which strata's schemas do not guarantee); ToolChoice auto/none →
// "auto"/"none", any → "required", tool → {"type":"function","name"};
// DisableParallel → parallel_tool_calls=false; MaxTokens →
// max_output_tokens; Temperature; TopP; Reasoning.Effort/Summary →
// reasoning {effort, summary}; PromptCacheKey → prompt_cache_key; User →
// safety_identifier (OpenAI's replacement for the deprecated "user").
// store is always false: strata resends the whole conversation and never
// uses previous_response_id, so nothing needs to be kept server-side; the
// reasoning state instead travels as encrypted_content, so include
// ["reasoning.encrypted_content"] is requested whenever reasoning is
// configured (Effort or Summary set) or a reasoning item is sent (OpenAI
// rejects that include for non-reasoning models, so it is not always on).
// Stop sequences do not exist in the Responses API and are an error.
// Breakpoints are ignored (OpenAI caches prompt prefixes automatically).
func ResponsesParams(req *llm.Request) (responses.ResponseNewParams, error) {
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
	switch req.ToolChoice.Mode {
	case "":
	case llm.ToolChoiceAuto, llm.ToolChoiceNone:
		p.ToolChoice.OfToolChoiceMode = openai.Opt(responses.ToolChoiceOptions(req.ToolChoice.Mode))
	case llm.ToolChoiceAny:
		p.ToolChoice.OfToolChoiceMode = openai.Opt(responses.ToolChoiceOptionsRequired)
	case llm.ToolChoiceTool:
		if req.ToolChoice.Name == "" {
			return p, fmt.Errorf("responses params: tool_choice mode %q needs a tool name", req.ToolChoice.Mode)
		}
		p.ToolChoice.OfFunctionTool = &responses.ToolChoiceFunctionParam{Name: req.ToolChoice.Name}
	default:
		return p, fmt.Errorf("responses params: tool_choice mode %q: want auto, any, tool or none", req.ToolChoice.Mode)
	}
	if req.ToolChoice.DisableParallel {
		p.ParallelToolCalls = openai.Bool(false)
	}
	if req.MaxTokens < 0 {
		return p, fmt.Errorf("responses params: max_tokens %d is negative", req.MaxTokens)
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
				continue // not a Responses reasoning item; see ResponsesParams
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
