package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/strata-agent/strata/llm"
)

// DefaultMaxTokens is the max_tokens (output tokens) sent when
// Request.MaxTokens is 0: the Messages API requires the field (Anthropic docs,
// "Create a Message"), and 4096 is within every current model's output limit.
const DefaultMaxTokens = 4096

// Body is a request mapped to the Messages API request body (POST
// /v1/messages), not yet encoded: json.Marshal of a Body returns the JSON
// Stream sends, less the "stream": true that streaming adds. A Body is not
// modified after NewBody and is safe for concurrent use.
type Body struct{ p sdk.MessageNewParams }

// NewBody maps req as Stream does ("Request mapping" in the package
// documentation) and returns the same errors. `strata bench assemble` uses
// it to time layout and encoding without sending anything.
func NewBody(req *llm.Request) (*Body, error) {
	p, err := params(req)
	if err != nil {
		return nil, err
	}
	return &Body{p: p}, nil
}

// MarshalJSON encodes the body with the SDK's encoder.
func (b *Body) MarshalJSON() ([]byte, error) { return b.p.MarshalJSON() }

// params maps a provider-neutral request to the SDK's MessageNewParams, once
// and exactly, by the rules in the package documentation ("Request
// mapping"). It returns an error naming the field for a request that fails
// llm.Request.Validate or holds a value the API cannot take.
func params(req *llm.Request) (sdk.MessageNewParams, error) {
	if err := req.Validate(); err != nil {
		return sdk.MessageNewParams{}, err
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
	if len(req.Tools) > 0 {
		p.ToolChoice = toolChoice(req.ToolChoice)
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
		p.Thinking = sdk.ThinkingConfigParamUnion{OfEnabled: &sdk.ThinkingConfigEnabledParam{BudgetTokens: b}}
	}
	if e := req.Reasoning.Effort; e != "" {
		level, err := effort(e)
		if err != nil {
			return sdk.MessageNewParams{}, err
		}
		p.OutputConfig.Effort = level
	}
	if req.User != "" {
		p.Metadata = sdk.MetadataParam{UserID: param.NewOpt(req.User)}
	}
	return p, nil
}

// toolChoice maps a validated tool choice (the request has tools). A zero
// Mode with DisableParallel sends auto; none has no
// disable_parallel_tool_use field and needs none (no call is made at all).
func toolChoice(tc llm.ToolChoice) sdk.ToolChoiceUnionParam {
	var disable param.Opt[bool]
	if tc.DisableParallel {
		disable = param.NewOpt(true)
	}
	switch tc.Mode {
	case llm.ToolChoiceAny:
		return sdk.ToolChoiceUnionParam{OfAny: &sdk.ToolChoiceAnyParam{DisableParallelToolUse: disable}}
	case llm.ToolChoiceTool:
		return sdk.ToolChoiceUnionParam{OfTool: &sdk.ToolChoiceToolParam{Name: tc.Name, DisableParallelToolUse: disable}}
	case llm.ToolChoiceNone:
		return sdk.ToolChoiceUnionParam{OfNone: &sdk.ToolChoiceNoneParam{}}
	case llm.ToolChoiceAuto:
		return sdk.ToolChoiceUnionParam{OfAuto: &sdk.ToolChoiceAutoParam{DisableParallelToolUse: disable}}
	}
	if tc.DisableParallel { // Mode "": the default (auto), made explicit to carry the flag
		return sdk.ToolChoiceUnionParam{OfAuto: &sdk.ToolChoiceAutoParam{DisableParallelToolUse: disable}}
	}
	return sdk.ToolChoiceUnionParam{}
}

// efforts are the output_config.effort levels the Messages API accepts
// (Anthropic docs, "Effort"; the SDK's OutputConfigEffort values), lowest
// first.
var efforts = []string{"low", "medium", "high", "xhigh", "max"}

// effort checks a reasoning effort level against efforts: OpenAI's "none"
// and "minimal" have no Claude form.
func effort(level string) (sdk.OutputConfigEffort, error) {
	if !slices.Contains(efforts, level) {
		return "", fmt.Errorf("reasoning.effort %q: the Messages API's output_config.effort takes %s", level, strings.Join(efforts, ", "))
	}
	return sdk.OutputConfigEffort(level), nil
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
