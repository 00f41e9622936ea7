package bedrock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/strata-agent/strata/llm"
)

// Params maps req to ConverseStream input (Converse takes the same fields).
//
//   - System blocks → system text blocks; messages → user / assistant
//     messages with text, image (bytes; png, jpeg, gif, webp), toolUse,
//     toolResult (text and image content, status "success" or "error"),
//     reasoningContent (reasoningText with signature; redactedContent).
//   - Tools → toolConfig.tools (toolSpec with the JSON schema); ToolChoice →
//     toolChoice auto / any / tool (Bedrock has no "none": with ToolChoiceNone
//     the tools are not sent).
//   - MaxTokens, Temperature, TopP, Stop → inferenceConfig.
//   - Reasoning.BudgetTokens → additionalModelRequestFields
//     {"thinking":{"type":"enabled","budget_tokens":N}} (Claude on Bedrock).
//   - Breakpoints → a cachePoint block right after the block each one closes
//     (Bedrock docs, "Prompt caching": cachePoint marks the end of a cached
//     prefix in tools, system or messages; TTL "1h" → ttl 1h).
//
// Errors name the message, block and field that cannot be expressed.
func Params(req *llm.Request) (*bedrockruntime.ConverseStreamInput, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	in := &bedrockruntime.ConverseStreamInput{ModelId: aws.String(req.Model)}
	cache := func(bp llm.Breakpoint) types.CachePointBlock {
		c := types.CachePointBlock{Type: types.CachePointTypeDefault}
		if bp.TTL == "1h" {
			c.Ttl = types.CacheTTL("1h")
		}
		return c
	}
	for i, b := range req.System {
		in.System = append(in.System, &types.SystemContentBlockMemberText{Value: b.Text})
		if bp, ok := req.BreakpointAt(llm.BreakSystem, 0, i); ok {
			in.System = append(in.System, &types.SystemContentBlockMemberCachePoint{Value: cache(bp)})
		}
	}
	for mi, m := range req.Messages {
		msg := types.Message{Role: types.ConversationRoleUser}
		if m.Role == llm.RoleAssistant {
			msg.Role = types.ConversationRoleAssistant
		}
		for bi, b := range m.Content {
			cb, err := contentBlock(b)
			if err != nil {
				return nil, fmt.Errorf("messages[%d].content[%d]: %w", mi, bi, err)
			}
			msg.Content = append(msg.Content, cb)
			if bp, ok := req.BreakpointAt(llm.BreakMessage, mi, bi); ok {
				msg.Content = append(msg.Content, &types.ContentBlockMemberCachePoint{Value: cache(bp)})
			}
		}
		in.Messages = append(in.Messages, msg)
	}
	if len(req.Tools) > 0 && req.ToolChoice.Mode != llm.ToolChoiceNone {
		tc := &types.ToolConfiguration{}
		for i, t := range req.Tools {
			var schema any
			if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
				return nil, fmt.Errorf("tools[%d] %s: input_schema: %w", i, t.Name, err)
			}
			spec := types.ToolSpecification{Name: aws.String(t.Name), InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(schema)}}
			if t.Description != "" {
				spec.Description = aws.String(t.Description)
			}
			tc.Tools = append(tc.Tools, &types.ToolMemberToolSpec{Value: spec})
		}
		if bp, ok := req.BreakpointAt(llm.BreakTools, 0, 0); ok {
			tc.Tools = append(tc.Tools, &types.ToolMemberCachePoint{Value: cache(bp)})
		}
		switch req.ToolChoice.Mode {
		case llm.ToolChoiceAny:
			tc.ToolChoice = &types.ToolChoiceMemberAny{}
		case llm.ToolChoiceTool:
			tc.ToolChoice = &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String(req.ToolChoice.Name)}}
		case llm.ToolChoiceAuto:
			tc.ToolChoice = &types.ToolChoiceMemberAuto{}
		}
		in.ToolConfig = tc
	}
	ic := &types.InferenceConfiguration{StopSequences: req.Stop}
	if req.MaxTokens > 0 {
		ic.MaxTokens = aws.Int32(int32(min(req.MaxTokens, 1<<31-1)))
	}
	if req.Temperature != nil {
		ic.Temperature = aws.Float32(float32(*req.Temperature))
	}
	if req.TopP != nil {
		ic.TopP = aws.Float32(float32(*req.TopP))
	}
	if ic.MaxTokens != nil || ic.Temperature != nil || ic.TopP != nil || len(ic.StopSequences) > 0 {
		in.InferenceConfig = ic
	}
	if n := req.Reasoning.BudgetTokens; n > 0 {
		in.AdditionalModelRequestFields = document.NewLazyDocument(map[string]any{
			"thinking": map[string]any{"type": "enabled", "budget_tokens": n}})
	}
	return in, nil
}

// imageFormats maps media types to Bedrock image formats.
var imageFormats = map[string]types.ImageFormat{
	"image/png": types.ImageFormatPng, "image/jpeg": types.ImageFormatJpeg,
	"image/gif": types.ImageFormatGif, "image/webp": types.ImageFormatWebp,
}

func image(b llm.Block) (types.ImageBlock, error) {
	f, ok := imageFormats[b.MediaType]
	if !ok || len(b.Data) == 0 {
		return types.ImageBlock{}, fmt.Errorf("image: Bedrock takes png, jpeg, gif or webp bytes (got media type %q, %d bytes, url %q)", b.MediaType, len(b.Data), b.URL)
	}
	return types.ImageBlock{Format: f, Source: &types.ImageSourceMemberBytes{Value: b.Data}}, nil
}

func contentBlock(b llm.Block) (types.ContentBlock, error) {
	switch b.Type {
	case llm.BlockText:
		return &types.ContentBlockMemberText{Value: b.Text}, nil
	case llm.BlockImage:
		img, err := image(b)
		if err != nil {
			return nil, err
		}
		return &types.ContentBlockMemberImage{Value: img}, nil
	case llm.BlockToolUse:
		var input any
		d := json.NewDecoder(bytes.NewReader(b.Input))
		d.UseNumber()
		if err := d.Decode(&input); err != nil {
			return nil, fmt.Errorf("tool_use %s input: %w", b.ID, err)
		}
		return &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String(b.ID), Name: aws.String(b.Name), Input: document.NewLazyDocument(input)}}, nil
	case llm.BlockToolResult:
		r := types.ToolResultBlock{ToolUseId: aws.String(b.ID), Status: types.ToolResultStatusSuccess}
		if b.IsError {
			r.Status = types.ToolResultStatusError
		}
		for _, c := range b.Content {
			switch c.Type {
			case llm.BlockText:
				r.Content = append(r.Content, &types.ToolResultContentBlockMemberText{Value: c.Text})
			case llm.BlockImage:
				img, err := image(c)
				if err != nil {
					return nil, fmt.Errorf("tool_result %s: %w", b.ID, err)
				}
				r.Content = append(r.Content, &types.ToolResultContentBlockMemberImage{Value: img})
			}
		}
		if len(r.Content) == 0 {
			r.Content = []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: ""}}
		}
		return &types.ContentBlockMemberToolResult{Value: r}, nil
	case llm.BlockThinking:
		t := types.ReasoningTextBlock{Text: aws.String(b.Text)}
		if b.Signature != "" {
			t.Signature = aws.String(b.Signature)
		}
		return &types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberReasoningText{Value: t}}, nil
	case llm.BlockRedactedThinking:
		return &types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberRedactedContent{Value: b.Data}}, nil
	}
	return nil, fmt.Errorf("block type %q has no Bedrock form", strings.TrimSpace(string(b.Type)))
}
