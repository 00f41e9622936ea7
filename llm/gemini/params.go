package gemini

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/genai"

	"github.com/strata-agent/strata/llm"
)

// syntheticPrefix marks tool_use ids strata made up for function calls that
// came without an id (the Gemini API often sends none); they are not sent
// back as FunctionCall.ID / FunctionResponse.ID.
const syntheticPrefix = "gemini-call-"

// Params maps req to generateContent's contents and config.
//
//   - System blocks → systemInstruction; user / assistant messages →
//     contents with role user / model.
//   - text → text parts; thinking → thought parts; a block's Signature
//     (base64) → the part's thoughtSignature, replayed unchanged (Gemini docs,
//     "Thought signatures": function calls of Gemini 3 must carry theirs);
//     image → inlineData (bytes) or fileData (URL).
//   - tool_use → functionCall (name, args); tool_result → functionResponse
//     with the call's name and {"output": text} or {"error": text}, images as
//     inlineData parts after it.
//   - Tools → one tool with functionDeclarations (parametersJsonSchema);
//     ToolChoice → functionCallingConfig AUTO / ANY / NONE (a named tool is
//     ANY with allowedFunctionNames).
//   - MaxTokens, Temperature, TopP, Stop → maxOutputTokens, temperature,
//     topP, stopSequences; Reasoning.BudgetTokens → thinkingConfig
//     thinkingBudget (with includeThoughts); Effort low/medium/high →
//     thinkingLevel.
//   - Breakpoints are not sent: Gemini caches implicitly (Gemini docs,
//     "Context caching"). redacted_thinking (Anthropic-only opaque data) has
//     no Gemini form and is an error naming the block.
func Params(req *llm.Request) ([]*genai.Content, *genai.GenerateContentConfig, error) {
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
		fc := &genai.FunctionCallingConfig{}
		switch req.ToolChoice.Mode {
		case llm.ToolChoiceAny:
			fc.Mode = genai.FunctionCallingConfigModeAny
		case llm.ToolChoiceTool:
			fc.Mode, fc.AllowedFunctionNames = genai.FunctionCallingConfigModeAny, []string{req.ToolChoice.Name}
		case llm.ToolChoiceNone:
			fc.Mode = genai.FunctionCallingConfigModeNone
		case llm.ToolChoiceAuto:
			fc.Mode = genai.FunctionCallingConfigModeAuto
		}
		if fc.Mode != "" {
			cfg.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: fc}
		}
	}
	if req.MaxTokens > 0 {
		cfg.MaxOutputTokens = int32(min(req.MaxTokens, 1<<31-1))
	}
	if req.Temperature != nil {
		cfg.Temperature = genai.Ptr(float32(*req.Temperature))
	}
	if req.TopP != nil {
		cfg.TopP = genai.Ptr(float32(*req.TopP))
	}
	if n := req.Reasoning.BudgetTokens; n > 0 {
		cfg.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: true, ThinkingBudget: genai.Ptr(int32(min(n, 1<<31-1)))}
	} else if l, ok := map[string]genai.ThinkingLevel{"low": genai.ThinkingLevelLow, "medium": genai.ThinkingLevelMedium, "high": genai.ThinkingLevelHigh}[req.Reasoning.Effort]; ok {
		cfg.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: true, ThinkingLevel: l}
	}
	return contents, cfg, nil
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
