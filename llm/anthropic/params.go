package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/strata-agent/strata/llm"
)

// DefaultMaxTokens is the max_tokens (output tokens) sent when
// Request.MaxTokens is 0: the Messages API requires the field (Anthropic docs,
// "Create a Message"), and 4096 is within every current model's output limit.
const DefaultMaxTokens = 4096

// Params maps a provider-neutral request to the SDK's MessageNewParams, once
// and exactly:
//
//   - Model → model; MaxTokens → max_tokens (DefaultMaxTokens when 0);
//   - System → system as text blocks;
//   - Messages → messages with text, image (base64 or URL), tool_use (input
//     sent byte for byte), tool_result (text and image content, is_error only
//     when true), thinking (+signature) and redacted_thinking blocks;
//   - Tools → tools (name, description, input_schema kept key for key:
//     properties, required, and every other key such as additionalProperties
//     or $defs);
//   - ToolChoice → tool_choice auto/any/tool/none with
//     disable_parallel_tool_use (a zero Mode with DisableParallel sends auto);
//   - Temperature, TopP, Stop → temperature, top_p, stop_sequences;
//   - Reasoning.BudgetTokens → thinking {type: enabled, budget_tokens}
//     (Reasoning.Effort and Summary are OpenAI-only and ignored);
//   - User → metadata.user_id; PromptCacheKey is ignored (OpenAI only);
//   - Breakpoints → cache_control {type: ephemeral[, ttl]} on the exact block
//     named: the last tool (tools), System[Block] (system) or
//     Messages[Message].Content[Block] (message).
//
// It returns an error naming the field for a request that fails
// llm.Request.Validate or holds a value the API cannot take (unknown
// tool_choice mode, a breakpoint on a thinking block, an image media type the
// API does not accept, a thinking budget outside [1024, max_tokens), a
// schema whose type is not "object").
func Params(req *llm.Request) (sdk.MessageNewParams, error) {
	if err := req.Validate(); err != nil {
		return sdk.MessageNewParams{}, err
	}
	if req.MaxTokens < 0 {
		return sdk.MessageNewParams{}, fmt.Errorf("max_tokens %d: must not be negative", req.MaxTokens)
	}
	p := sdk.MessageNewParams{Model: sdk.Model(req.Model), MaxTokens: req.MaxTokens}
	if p.MaxTokens == 0 {
		p.MaxTokens = DefaultMaxTokens
	}
	for i, b := range req.System {
		tb := sdk.TextBlockParam{Text: b.Text}
		if bp, ok := req.BreakpointAt(llm.BreakSystem, 0, i); ok {
			tb.CacheControl = cacheControl(bp)
		}
		p.System = append(p.System, tb)
	}
	for mi, m := range req.Messages {
		mp := sdk.MessageParam{Role: sdk.MessageParamRole(m.Role)}
		for bi, b := range m.Content {
			cb, err := block(b)
			if err != nil {
				return sdk.MessageNewParams{}, fmt.Errorf("messages[%d].content[%d]: %w", mi, bi, err)
			}
			if bp, ok := req.BreakpointAt(llm.BreakMessage, mi, bi); ok {
				if cc := cb.GetCacheControl(); cc != nil {
					*cc = cacheControl(bp)
				} else {
					return sdk.MessageNewParams{}, fmt.Errorf("messages[%d].content[%d]: a %s block cannot carry a cache breakpoint", mi, bi, b.Type)
				}
			}
			mp.Content = append(mp.Content, cb)
		}
		p.Messages = append(p.Messages, mp)
	}
	for i, t := range req.Tools {
		tp, err := toolParam(t)
		if err != nil {
			return sdk.MessageNewParams{}, fmt.Errorf("tools[%d] %q: %w", i, t.Name, err)
		}
		if i == len(req.Tools)-1 {
			if bp, ok := req.BreakpointAt(llm.BreakTools, 0, 0); ok {
				tp.CacheControl = cacheControl(bp)
			}
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: &tp})
	}
	switch tc := req.ToolChoice; tc.Mode {
	case "":
		if tc.DisableParallel {
			p.ToolChoice = sdk.ToolChoiceUnionParam{OfAuto: &sdk.ToolChoiceAutoParam{DisableParallelToolUse: param.NewOpt(true)}}
		}
	case llm.ToolChoiceAuto:
		a := &sdk.ToolChoiceAutoParam{}
		if tc.DisableParallel {
			a.DisableParallelToolUse = param.NewOpt(true)
		}
		p.ToolChoice = sdk.ToolChoiceUnionParam{OfAuto: a}
	case llm.ToolChoiceAny:
		a := &sdk.ToolChoiceAnyParam{}
		if tc.DisableParallel {
			a.DisableParallelToolUse = param.NewOpt(true)
		}
		p.ToolChoice = sdk.ToolChoiceUnionParam{OfAny: a}
	case llm.ToolChoiceTool:
		if tc.Name == "" {
			return sdk.MessageNewParams{}, fmt.Errorf("tool_choice: mode tool needs a tool name")
		}
		a := &sdk.ToolChoiceToolParam{Name: tc.Name}
		if tc.DisableParallel {
			a.DisableParallelToolUse = param.NewOpt(true)
		}
		p.ToolChoice = sdk.ToolChoiceUnionParam{OfTool: a}
	case llm.ToolChoiceNone:
		p.ToolChoice = sdk.ToolChoiceUnionParam{OfNone: &sdk.ToolChoiceNoneParam{}}
	default:
		return sdk.MessageNewParams{}, fmt.Errorf("tool_choice: unknown mode %q (want auto, any, tool or none)", tc.Mode)
	}
	if req.Temperature != nil {
		p.Temperature = param.NewOpt(*req.Temperature)
	}
	if req.TopP != nil {
		p.TopP = param.NewOpt(*req.TopP)
	}
	p.StopSequences = req.Stop
	if b := req.Reasoning.BudgetTokens; b != 0 {
		// Anthropic docs, "Extended thinking": budget_tokens ≥ 1024 and
		// below max_tokens.
		if b < 1024 || b >= p.MaxTokens {
			return sdk.MessageNewParams{}, fmt.Errorf("reasoning.budget_tokens %d: want 1024 ≤ budget < max_tokens (%d)", b, p.MaxTokens)
		}
		p.Thinking = sdk.ThinkingConfigParamUnion{OfEnabled: &sdk.ThinkingConfigEnabledParam{BudgetTokens: req.Reasoning.BudgetTokens}}
	}
	if req.User != "" {
		p.Metadata = sdk.MetadataParam{UserID: param.NewOpt(req.User)}
	}
	return p, nil
}

func cacheControl(bp llm.Breakpoint) sdk.CacheControlEphemeralParam {
	cc := sdk.NewCacheControlEphemeralParam()
	if bp.TTL != "" {
		cc.TTL = sdk.CacheControlEphemeralTTL(bp.TTL)
	}
	return cc
}

// block maps one content block.
func block(b llm.Block) (sdk.ContentBlockParamUnion, error) {
	switch b.Type {
	case llm.BlockText:
		return sdk.ContentBlockParamUnion{OfText: &sdk.TextBlockParam{Text: b.Text}}, nil
	case llm.BlockImage:
		img, err := image(b)
		if err != nil {
			return sdk.ContentBlockParamUnion{}, err
		}
		return sdk.ContentBlockParamUnion{OfImage: &img}, nil
	case llm.BlockToolUse:
		return sdk.ContentBlockParamUnion{OfToolUse: &sdk.ToolUseBlockParam{ID: b.ID, Name: b.Name, Input: json.RawMessage(b.Input)}}, nil
	case llm.BlockToolResult:
		tr := &sdk.ToolResultBlockParam{ToolUseID: b.ID}
		if b.IsError {
			tr.IsError = param.NewOpt(true)
		}
		for i, c := range b.Content {
			switch c.Type {
			case llm.BlockText:
				tr.Content = append(tr.Content, sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: c.Text}})
			case llm.BlockImage:
				img, err := image(c)
				if err != nil {
					return sdk.ContentBlockParamUnion{}, fmt.Errorf("tool_result content[%d]: %w", i, err)
				}
				tr.Content = append(tr.Content, sdk.ToolResultBlockParamContentUnion{OfImage: &img})
			default:
				return sdk.ContentBlockParamUnion{}, fmt.Errorf("tool_result content[%d]: %s blocks are not allowed (text and image only)", i, c.Type)
			}
		}
		return sdk.ContentBlockParamUnion{OfToolResult: tr}, nil
	case llm.BlockThinking:
		return sdk.ContentBlockParamUnion{OfThinking: &sdk.ThinkingBlockParam{Thinking: b.Text, Signature: b.Signature}}, nil
	case llm.BlockRedactedThinking:
		return sdk.ContentBlockParamUnion{OfRedactedThinking: &sdk.RedactedThinkingBlockParam{Data: string(b.Data)}}, nil
	}
	return sdk.ContentBlockParamUnion{}, fmt.Errorf("unknown block type %q", b.Type)
}

// image maps an image block: a URL source when URL is set, else a base64
// source. Base64 media types are limited to image/jpeg, image/png, image/gif
// and image/webp (Anthropic docs, "Vision").
func image(b llm.Block) (sdk.ImageBlockParam, error) {
	if b.URL != "" {
		return sdk.ImageBlockParam{Source: sdk.ImageBlockParamSourceUnion{OfURL: &sdk.URLImageSourceParam{URL: b.URL}}}, nil
	}
	switch mt := sdk.Base64ImageSourceMediaType(b.MediaType); mt {
	case sdk.Base64ImageSourceMediaTypeImageJPEG, sdk.Base64ImageSourceMediaTypeImagePNG,
		sdk.Base64ImageSourceMediaTypeImageGIF, sdk.Base64ImageSourceMediaTypeImageWebP:
		return sdk.ImageBlockParam{Source: sdk.ImageBlockParamSourceUnion{OfBase64: &sdk.Base64ImageSourceParam{
			MediaType: mt, Data: base64.StdEncoding.EncodeToString(b.Data)}}}, nil
	}
	return sdk.ImageBlockParam{}, fmt.Errorf("image media_type %q: want image/jpeg, image/png, image/gif or image/webp", b.MediaType)
}

// toolParam keeps the input schema key for key: properties and required map
// to the SDK's fields, every other key ($defs, additionalProperties, …) goes
// through ExtraFields.
func toolParam(t llm.ToolSpec) (sdk.ToolParam, error) {
	tp := sdk.ToolParam{Name: t.Name}
	if t.Description != "" {
		tp.Description = param.NewOpt(t.Description)
	}
	if len(t.InputSchema) == 0 {
		return tp, nil
	}
	var schema map[string]json.RawMessage
	if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
		return tp, fmt.Errorf("input_schema: %w", err)
	}
	for k, v := range schema {
		switch k {
		case "type":
			var typ string
			if json.Unmarshal(v, &typ) != nil || typ != "object" {
				return tp, fmt.Errorf("input_schema: type must be \"object\", got %s", v)
			}
		case "properties":
			tp.InputSchema.Properties = v
		case "required":
			if err := json.Unmarshal(v, &tp.InputSchema.Required); err != nil {
				return tp, fmt.Errorf("input_schema.required: %w", err)
			}
		default:
			if tp.InputSchema.ExtraFields == nil {
				tp.InputSchema.ExtraFields = map[string]any{}
			}
			tp.InputSchema.ExtraFields[k] = v
		}
	}
	return tp, nil
}
