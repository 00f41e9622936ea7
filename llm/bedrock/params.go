package bedrock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/strata-agent/strata/llm"
)

// params maps req to ConverseStream input (Converse takes the same fields)
// by the rules in the package documentation ("Request mapping"). Errors name
// the message, block and field that cannot be expressed.
func params(req *llm.Request) (*bedrockruntime.ConverseStreamInput, error) {
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
	tc, err := toolConfig(req, cache)
	if err != nil {
		return nil, err
	}
	in.ToolConfig = tc
	ic := &types.InferenceConfiguration{StopSequences: req.Stop}
	if req.MaxTokens > 0 {
		if req.MaxTokens > math.MaxInt32 {
			return nil, fmt.Errorf("max_tokens %d: Bedrock's inferenceConfig.maxTokens is a 32-bit integer", req.MaxTokens)
		}
		ic.MaxTokens = aws.Int32(int32(req.MaxTokens))
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
	extra, err := claudeFields(req)
	if err != nil {
		return nil, err
	}
	if extra != nil {
		in.AdditionalModelRequestFields = document.NewLazyDocument(extra)
	}
	return in, nil
}

// toolConfig maps Tools and ToolChoice to toolConfig (nil without tools).
// Converse's toolChoice is auto, any or tool, with no "none" and no switch
// for parallel calls: none is expressed by withholding the tools, which
// Bedrock allows only while no message holds tool_use / tool_result blocks
// (it then requires toolConfig), and DisableParallel is an error.
func toolConfig(req *llm.Request, cache func(llm.Breakpoint) types.CachePointBlock) (*types.ToolConfiguration, error) {
	if len(req.Tools) == 0 {
		return nil, nil
	}
	choice := req.ToolChoice
	if choice.Mode == llm.ToolChoiceNone {
		if i, ok := toolBlock(req.Messages); ok {
			return nil, fmt.Errorf("tool_choice none: Bedrock Converse has no \"none\" tool choice, and the tools cannot be withheld because messages[%d] holds tool_use/tool_result blocks (Bedrock then requires toolConfig); drop tool_choice none or the tools' history", i)
		}
		return nil, nil // no tools sent: the model cannot call any
	}
	if choice.DisableParallel {
		return nil, fmt.Errorf("tool_choice.disable_parallel: Bedrock Converse has no switch for parallel tool calls (the model may answer with several toolUse blocks); leave it false")
	}
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
	switch choice.Mode {
	case llm.ToolChoiceAny:
		tc.ToolChoice = &types.ToolChoiceMemberAny{}
	case llm.ToolChoiceTool:
		tc.ToolChoice = &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String(choice.Name)}}
	case llm.ToolChoiceAuto:
		tc.ToolChoice = &types.ToolChoiceMemberAuto{}
	}
	return tc, nil
}

// toolBlock returns the index of the first message holding a tool_use or
// tool_result block.
func toolBlock(msgs []llm.Message) (int, bool) {
	for i, m := range msgs {
		for _, b := range m.Content {
			if b.Type == llm.BlockToolUse || b.Type == llm.BlockToolResult {
				return i, true
			}
		}
	}
	return 0, false
}

// claudeEfforts are the output_config.effort levels Claude takes (Anthropic
// docs, "Effort"), lowest first.
var claudeEfforts = []string{"low", "medium", "high", "xhigh", "max"}

// claudeFields builds additionalModelRequestFields from Reasoning in the
// form Claude models read there (Anthropic Messages fields, Bedrock docs
// "Anthropic Claude Messages API" request parameters): thinking {type:
// enabled, budget_tokens} (1024 ≤ budget, below max_tokens when that is
// set) and output_config {effort}. Summary needs nothing (Claude returns
// its summarized thinking whenever thinking is on). nil when neither is set.
func claudeFields(req *llm.Request) (map[string]any, error) {
	r := req.Reasoning
	fields := map[string]any{}
	if n := r.BudgetTokens; n > 0 {
		if n < 1024 || (req.MaxTokens > 0 && n >= req.MaxTokens) {
			return nil, fmt.Errorf("reasoning.budget_tokens %d: Claude wants 1024 ≤ budget < max_tokens (%d)", n, req.MaxTokens)
		}
		fields["thinking"] = map[string]any{"type": "enabled", "budget_tokens": n}
	}
	if e := r.Effort; e != "" {
		if !slices.Contains(claudeEfforts, e) {
			return nil, fmt.Errorf("reasoning.effort %q: Claude's output_config.effort takes %s", e, strings.Join(claudeEfforts, ", "))
		}
		fields["output_config"] = map[string]any{"effort": e}
	}
	if len(fields) == 0 {
		return nil, nil
	}
	return fields, nil
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
