package gemini

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"google.golang.org/genai"

	"github.com/strata-agent/strata/llm"
)

// syntheticPrefix marks tool_use ids strata made up for function calls that
// came without an id (the Gemini API often sends none); they are not sent
// back as FunctionCall.ID / FunctionResponse.ID.
const syntheticPrefix = "gemini-call-"

// params maps req to generateContent's contents and config by the rules in
// the package documentation ("Request mapping").
func params(req *llm.Request) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	if err := req.Validate(); err != nil {
		return nil, nil, err
	}
	cfg := &genai.GenerateContentConfig{StopSequences: req.Stop}
	if s := req.SystemText(); s != "" {
		cfg.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: s}}}
	}
	names := map[string]string{} // tool_use id → function name
	var contents []*genai.Content
	for mi, m := range req.Messages {
		c := &genai.Content{Role: genai.RoleUser}
		if m.Role == llm.RoleAssistant {
			c.Role = genai.RoleModel
		}
		for bi, b := range m.Content {
			parts, err := blockParts(b, names)
			if err != nil {
				return nil, nil, fmt.Errorf("messages[%d].content[%d]: %w", mi, bi, err)
			}
			c.Parts = append(c.Parts, parts...)
		}
		contents = append(contents, c)
	}
	if len(req.Tools) > 0 {
		t := &genai.Tool{}
		for i, s := range req.Tools {
			var schema any
			if err := json.Unmarshal(s.InputSchema, &schema); err != nil {
				return nil, nil, fmt.Errorf("tools[%d] %s: input_schema: %w", i, s.Name, err)
			}
			t.FunctionDeclarations = append(t.FunctionDeclarations, &genai.FunctionDeclaration{Name: s.Name, Description: s.Description, ParametersJsonSchema: schema})
		}
		cfg.Tools = []*genai.Tool{t}
		tc, err := toolConfig(req.ToolChoice)
		if err != nil {
			return nil, nil, err
		}
		cfg.ToolConfig = tc
	}
	if req.MaxTokens > 0 {
		if req.MaxTokens > math.MaxInt32 {
			return nil, nil, fmt.Errorf("max_tokens %d: Gemini's maxOutputTokens is a 32-bit integer", req.MaxTokens)
		}
		cfg.MaxOutputTokens = int32(req.MaxTokens)
	}
	if req.Temperature != nil {
		cfg.Temperature = genai.Ptr(float32(*req.Temperature))
	}
	if req.TopP != nil {
		cfg.TopP = genai.Ptr(float32(*req.TopP))
	}
	tc, err := thinkingConfig(req.Reasoning)
	if err != nil {
		return nil, nil, err
	}
	cfg.ThinkingConfig = tc
	return contents, cfg, nil
}

// toolConfig maps a tool choice (the request has tools) to
// functionCallingConfig; nil for the zero choice (Gemini's default, AUTO).
// Gemini has no switch for parallel calls, so DisableParallel is an error.
func toolConfig(choice llm.ToolChoice) (*genai.ToolConfig, error) {
	if choice.DisableParallel && choice.Mode != llm.ToolChoiceNone {
		return nil, fmt.Errorf("tool_choice.disable_parallel: Gemini has no switch for parallel function calls (the model may answer with several); leave it false")
	}
	fc := &genai.FunctionCallingConfig{}
	switch choice.Mode {
	case llm.ToolChoiceAny:
		fc.Mode = genai.FunctionCallingConfigModeAny
	case llm.ToolChoiceTool:
		fc.Mode, fc.AllowedFunctionNames = genai.FunctionCallingConfigModeAny, []string{choice.Name}
	case llm.ToolChoiceNone:
		fc.Mode = genai.FunctionCallingConfigModeNone
	case llm.ToolChoiceAuto:
		fc.Mode = genai.FunctionCallingConfigModeAuto
	default:
		return nil, nil
	}
	return &genai.ToolConfig{FunctionCallingConfig: fc}, nil
}

// thinkingLevels maps Reasoning.Effort to Gemini's thinkingLevel values.
var thinkingLevels = map[string]genai.ThinkingLevel{
	"minimal": genai.ThinkingLevelMinimal, "low": genai.ThinkingLevelLow,
	"medium": genai.ThinkingLevelMedium, "high": genai.ThinkingLevelHigh,
}

// thinkingConfig maps Reasoning to thinkingConfig (nil when r is zero):
// BudgetTokens → thinkingBudget, Effort → thinkingLevel (minimal, low,
// medium, high), and includeThoughts=true whenever any of them or Summary
// is set, so the thought summaries come back as thinking. Gemini rejects a
// budget together with a level (400), so that is an error here.
func thinkingConfig(r llm.Reasoning) (*genai.ThinkingConfig, error) {
	if r == (llm.Reasoning{}) {
		return nil, nil
	}
	tc := &genai.ThinkingConfig{IncludeThoughts: true}
	if n := r.BudgetTokens; n > 0 {
		if r.Effort != "" {
			return nil, fmt.Errorf("reasoning: budget_tokens %d and effort %q are both set; Gemini takes thinkingBudget or thinkingLevel, not both", n, r.Effort)
		}
		if n > math.MaxInt32 {
			return nil, fmt.Errorf("reasoning.budget_tokens %d: Gemini's thinkingBudget is a 32-bit integer", n)
		}
		tc.ThinkingBudget = genai.Ptr(int32(n))
	}
	if e := r.Effort; e != "" {
		l, ok := thinkingLevels[e]
		if !ok {
			return nil, fmt.Errorf("reasoning.effort %q: Gemini's thinkingLevel takes minimal, low, medium or high", e)
		}
		tc.ThinkingLevel = l
	}
	return tc, nil
}

func signature(s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	// Gemini sends standard base64; protobuf JSON also accepts the URL-safe
	// alphabet, which some clients record.
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, fmt.Errorf("signature %.20q… is not base64 (a signature from another provider?)", s)
}

func imagePart(b llm.Block) *genai.Part {
	if len(b.Data) > 0 {
		return &genai.Part{InlineData: &genai.Blob{MIMEType: b.MediaType, Data: b.Data}}
	}
	return &genai.Part{FileData: &genai.FileData{MIMEType: b.MediaType, FileURI: b.URL}}
}

func blockParts(b llm.Block, names map[string]string) ([]*genai.Part, error) {
	switch b.Type {
	case llm.BlockText, llm.BlockThinking:
		sig, err := signature(b.Signature)
		if err != nil {
			return nil, err
		}
		return []*genai.Part{{Text: b.Text, Thought: b.Type == llm.BlockThinking, ThoughtSignature: sig}}, nil
	case llm.BlockImage:
		return []*genai.Part{imagePart(b)}, nil
	case llm.BlockToolUse:
		sig, err := signature(b.Signature)
		if err != nil {
			return nil, err
		}
		var args map[string]any
		d := json.NewDecoder(bytes.NewReader(b.Input))
		d.UseNumber()
		if err := d.Decode(&args); err != nil {
			return nil, fmt.Errorf("tool_use %s input: %w", b.ID, err)
		}
		names[b.ID] = b.Name
		fc := &genai.FunctionCall{Name: b.Name, Args: args}
		if !strings.HasPrefix(b.ID, syntheticPrefix) {
			fc.ID = b.ID
		}
		return []*genai.Part{{FunctionCall: fc, ThoughtSignature: sig}}, nil
	case llm.BlockToolResult:
		name, ok := names[b.ID]
		if !ok {
			return nil, fmt.Errorf("tool_result %s answers no earlier tool_use (Gemini needs the function name)", b.ID)
		}
		var text []string
		var images []*genai.Part
		for _, c := range b.Content {
			switch c.Type {
			case llm.BlockText:
				text = append(text, c.Text)
			case llm.BlockImage:
				images = append(images, imagePart(c))
			}
		}
		key := "output"
		if b.IsError {
			key = "error"
		}
		fr := &genai.FunctionResponse{Name: name, Response: map[string]any{key: strings.Join(text, "\n")}}
		if !strings.HasPrefix(b.ID, syntheticPrefix) {
			fr.ID = b.ID
		}
		return append([]*genai.Part{{FunctionResponse: fr}}, images...), nil
	}
	return nil, fmt.Errorf("block type %q has no Gemini form", b.Type)
}
