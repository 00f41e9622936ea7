package llm

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
)

// ToolSpec describes one tool to the model: a provider-legal name
// (Anthropic and OpenAI: ≤ 64 chars of [a-zA-Z0-9_-]), a description and a
// JSON Schema (draft 2020-12 subset the providers accept) for its input
// object.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// ToolChoiceMode says whether and how the model must call tools.
type ToolChoiceMode string

// Tool choice modes (Anthropic names; OpenAI "required" is ToolChoiceAny).
const (
	ToolChoiceAuto ToolChoiceMode = "auto" // the model decides (the default when zero)
	ToolChoiceAny  ToolChoiceMode = "any"  // the model must call some tool
	ToolChoiceTool ToolChoiceMode = "tool" // the model must call ToolChoice.Name
	ToolChoiceNone ToolChoiceMode = "none" // the model must not call tools
)

// ToolChoice constrains tool calling. The zero value leaves the provider's
// default (auto) and is not sent.
//
// Request.Validate checks the shape: Mode is "" or one of the four modes,
// Name is set exactly when Mode is ToolChoiceTool and names one of
// Request.Tools, and any/tool need at least one tool. A request without
// tools satisfies auto, none and DisableParallel by construction, so
// providers send no tool choice for it (OpenAI rejects tool_choice and
// parallel_tool_calls without tools).
//
// Per wire API (with tools): Anthropic tool_choice {type auto|any|tool|none,
// name, disable_parallel_tool_use}; OpenAI Chat and Responses tool_choice
// "auto"|"required"|"none" or a named function, parallel_tool_calls=false;
// Bedrock toolConfig.toolChoice auto|any|tool; Gemini
// functionCallingConfig.mode AUTO|ANY|NONE (a named tool is ANY with
// allowedFunctionNames). Bedrock has no "none" and Bedrock and Gemini have
// no parallel-call switch: see those providers for what they do instead or
// the error they return.
type ToolChoice struct {
	Mode ToolChoiceMode `json:"mode,omitempty"`
	Name string         `json:"name,omitempty"` // the tool ToolChoiceTool forces
	// DisableParallel asks for at most one tool call per response
	// (Anthropic disable_parallel_tool_use; OpenAI parallel_tool_calls=false).
	DisableParallel bool `json:"disable_parallel,omitempty"`
}

// BreakpointTarget says which part of the prompt a cache breakpoint closes.
// Prompt order is tools → system → messages (Anthropic docs, prompt caching).
type BreakpointTarget string

// Breakpoint targets.
const (
	BreakTools   BreakpointTarget = "tools"   // after the last tool spec
	BreakSystem  BreakpointTarget = "system"  // after System[Block]
	BreakMessage BreakpointTarget = "message" // after Messages[Message].Content[Block]
)

// Breakpoint marks the end of a cacheable prefix: everything in prompt order up
// to and including the named block. Anthropic encodes it as cache_control on
// that block (≤ 4 per request, Anthropic docs "Prompt caching"); Bedrock as a
// cachePoint block after it; OpenAI caches automatically and ignores it.
type Breakpoint struct {
	Target  BreakpointTarget `json:"target"`
	Message int              `json:"message,omitempty"` // index into Request.Messages (BreakMessage)
	Block   int              `json:"block,omitempty"`   // index into System or the message's Content
	// TTL is "" (provider default, 5 minutes on Anthropic) or "1h".
	TTL string `json:"ttl,omitempty"`
}

// MaxBreakpoints is the most cache breakpoints one Anthropic request may carry
// (Anthropic docs, "Prompt caching": up to 4 cache_control breakpoints).
const MaxBreakpoints = 4

// Reasoning configures extended thinking / reasoning. The zero value sends
// nothing. Each wire API sends the fields it has a form for and rejects the
// others with an error naming the field, before anything is sent; a field
// is ignored only where the API already does what it asks (see Summary).
type Reasoning struct {
	// BudgetTokens caps the tokens spent thinking; 0 = no budget sent.
	// Anthropic thinking {type: enabled, budget_tokens} (≥ 1024 and below
	// max_tokens, Anthropic docs "Extended thinking"); Bedrock the same
	// object in additionalModelRequestFields (Claude models); Gemini
	// thinkingConfig.thinkingBudget. OpenAI Chat and Responses have no
	// budget: an error (set Effort instead).
	BudgetTokens int64 `json:"budget_tokens,omitempty"`
	// Effort is a reasoning effort level, sent as given where the API names
	// levels: OpenAI Chat reasoning_effort and Responses reasoning.effort
	// ("none", "minimal", "low", "medium", "high", "xhigh", "max"; models
	// accept subsets); Anthropic output_config.effort and Bedrock
	// additionalModelRequestFields.output_config.effort ("low", "medium",
	// "high", "xhigh", "max"; other values are an error); Gemini
	// thinkingConfig.thinkingLevel ("minimal", "low", "medium", "high";
	// Gemini rejects a level together with a budget, so both set is an
	// error there).
	Effort string `json:"effort,omitempty"`
	// Summary asks for a summary of the reasoning in the response: OpenAI
	// Responses reasoning.summary ("auto", "concise", "detailed"); Gemini
	// thinkingConfig.includeThoughts=true (thought summaries). Chat
	// Completions returns no reasoning summaries: an error. Anthropic and
	// Bedrock ignore it: Claude returns its (summarized) thinking whenever
	// thinking is on, and has no summary level to choose.
	Summary string `json:"summary,omitempty"`
}

// Request is one model call in provider-neutral form. Providers map it to their
// SDK params; they never mutate it.
//
// The generation knobs (ToolChoice, MaxTokens, Temperature, TopP, Stop,
// Reasoning) are sent only when set; a knob a wire API cannot express is an
// error from Provider.Stream before anything is sent, never silently dropped
// (each field and each provider package documents its mapping).
type Request struct {
	Model      string     `json:"model"`
	System     []Block    `json:"system,omitempty"` // text blocks only
	Messages   []Message  `json:"messages"`
	Tools      []ToolSpec `json:"tools,omitempty"`
	ToolChoice ToolChoice `json:"tool_choice,omitzero"`
	// MaxTokens caps the output in tokens; 0 = the provider default
	// (Anthropic requires the field: its provider then sends
	// anthropic.DefaultMaxTokens). Anthropic max_tokens, OpenAI Chat
	// max_completion_tokens, Responses max_output_tokens, Bedrock
	// inferenceConfig.maxTokens, Gemini maxOutputTokens.
	MaxTokens int64 `json:"max_tokens,omitempty"`
	// Temperature is the sampling temperature (Anthropic accepts 0–1,
	// OpenAI 0–2; the API checks the range); nil = provider default.
	// temperature on every API (Bedrock inferenceConfig.temperature).
	Temperature *float64 `json:"temperature,omitempty"`
	// TopP is the nucleus-sampling mass, 0–1 (the API checks the range);
	// nil = provider default. top_p / topP on every API (Bedrock
	// inferenceConfig.topP).
	TopP *float64 `json:"top_p,omitempty"`
	// Stop lists sequences that end the output (non-empty strings).
	// Anthropic stop_sequences, OpenAI Chat stop, Bedrock
	// inferenceConfig.stopSequences, Gemini stopSequences; the Responses API
	// has none (an error).
	Stop      []string  `json:"stop,omitempty"`
	Reasoning Reasoning `json:"reasoning,omitzero"`
	// Breakpoints are the cache breakpoints chosen by the layout, in prompt
	// order. See Breakpoint.
	Breakpoints []Breakpoint `json:"breakpoints,omitempty"`
	// PromptCacheKey is OpenAI's prompt_cache_key routing hint; ignored by
	// providers without one.
	PromptCacheKey string `json:"prompt_cache_key,omitempty"`
	// User is an end-user id for abuse monitoring (Anthropic metadata.user_id,
	// OpenAI user / safety_identifier); Bedrock and Gemini have no such field
	// and ignore it (it does not change the answer).
	User string `json:"user,omitempty"`
}

// SystemText returns the system blocks joined with blank lines.
func (r *Request) SystemText() string {
	s := ""
	for i, b := range r.System {
		if i > 0 {
			s += "\n\n"
		}
		s += b.Text
	}
	return s
}

// Validate checks what every provider relies on: a model name, messages that
// validate, text-only system blocks, tool specs with names and object
// schemas, breakpoints that point at existing blocks (at most
// MaxBreakpoints), and the knobs every API constrains alike: max_tokens and
// budget_tokens not negative, finite temperature and top_p, no empty stop
// sequence, and a ToolChoice of the shape its doc gives. Errors name the
// field and index.
func (r *Request) Validate() error {
	if r.Model == "" {
		return fmt.Errorf("request: model is empty")
	}
	for i, b := range r.System {
		if b.Type != BlockText {
			return fmt.Errorf("request: system block %d has type %q; only text is allowed", i, b.Type)
		}
	}
	for i, m := range r.Messages {
		if err := m.Validate(); err != nil {
			return fmt.Errorf("request: messages[%d]: %w", i, err)
		}
	}
	for i, t := range r.Tools {
		if t.Name == "" {
			return fmt.Errorf("request: tools[%d] has no name", i)
		}
		if len(t.InputSchema) > 0 && !isJSONObject(t.InputSchema) {
			return fmt.Errorf("request: tools[%d] %q input_schema is not a JSON object", i, t.Name)
		}
	}
	if err := r.validateKnobs(); err != nil {
		return err
	}
	if len(r.Breakpoints) > MaxBreakpoints {
		return fmt.Errorf("request: %d cache breakpoints; at most %d are allowed (Anthropic prompt caching)", len(r.Breakpoints), MaxBreakpoints)
	}
	for i, bp := range r.Breakpoints {
		switch bp.Target {
		case BreakTools:
			if len(r.Tools) == 0 {
				return fmt.Errorf("request: breakpoints[%d] targets tools but there are none", i)
			}
		case BreakSystem:
			if bp.Block < 0 || bp.Block >= len(r.System) {
				return fmt.Errorf("request: breakpoints[%d] targets system block %d of %d", i, bp.Block, len(r.System))
			}
		case BreakMessage:
			if bp.Message < 0 || bp.Message >= len(r.Messages) {
				return fmt.Errorf("request: breakpoints[%d] targets message %d of %d", i, bp.Message, len(r.Messages))
			}
			if n := len(r.Messages[bp.Message].Content); bp.Block < 0 || bp.Block >= n {
				return fmt.Errorf("request: breakpoints[%d] targets block %d of message %d (%d blocks)", i, bp.Block, bp.Message, n)
			}
		default:
			return fmt.Errorf("request: breakpoints[%d] has unknown target %q (want tools, system or message)", i, bp.Target)
		}
		if bp.TTL != "" && bp.TTL != "5m" && bp.TTL != "1h" {
			return fmt.Errorf("request: breakpoints[%d] ttl %q: want \"\", \"5m\" or \"1h\"", i, bp.TTL)
		}
	}
	return nil
}

// BreakpointAt reports the breakpoint that closes the given message block, if
// any. Providers use it while encoding.
func (r *Request) BreakpointAt(target BreakpointTarget, msg, block int) (Breakpoint, bool) {
	for _, bp := range r.Breakpoints {
		if bp.Target != target {
			continue
		}
		switch target {
		case BreakTools:
			return bp, true
		case BreakSystem:
			if bp.Block == block {
				return bp, true
			}
		case BreakMessage:
			if bp.Message == msg && bp.Block == block {
				return bp, true
			}
		}
	}
	return Breakpoint{}, false
}

// validateKnobs checks the generation knobs every wire API constrains the
// same way: max_tokens and budget_tokens not negative, temperature and top_p
// finite, no empty stop sequence, and a tool choice whose mode
// is known, whose name is set exactly for mode tool and names a declared
// tool, and which does not demand a call (any, tool) without tools.
func (r *Request) validateKnobs() error {
	if r.MaxTokens < 0 {
		return fmt.Errorf("request: max_tokens %d is negative (0 = provider default)", r.MaxTokens)
	}
	if r.Reasoning.BudgetTokens < 0 {
		return fmt.Errorf("request: reasoning.budget_tokens %d is negative (0 = no budget)", r.Reasoning.BudgetTokens)
	}
	// Ranges differ per API and are the API's to check (its 400 names the
	// field); NaN and ±Inf cannot be encoded as JSON at all.
	if t := r.Temperature; t != nil && (math.IsNaN(*t) || math.IsInf(*t, 0)) {
		return fmt.Errorf("request: temperature %v is not a finite number", *t)
	}
	if p := r.TopP; p != nil && (math.IsNaN(*p) || math.IsInf(*p, 0)) {
		return fmt.Errorf("request: top_p %v is not a finite number", *p)
	}
	for i, s := range r.Stop {
		if s == "" {
			return fmt.Errorf("request: stop[%d] is empty", i)
		}
	}
	tc := r.ToolChoice
	switch tc.Mode {
	case "", ToolChoiceAuto, ToolChoiceNone:
	case ToolChoiceAny, ToolChoiceTool:
		if len(r.Tools) == 0 {
			return fmt.Errorf("request: tool_choice mode %q demands a tool call but the request has no tools", tc.Mode)
		}
	default:
		return fmt.Errorf("request: tool_choice mode %q: want auto, any, tool or none", tc.Mode)
	}
	if tc.Mode == ToolChoiceTool && tc.Name == "" {
		return fmt.Errorf("request: tool_choice mode tool needs a tool name")
	}
	if tc.Mode != ToolChoiceTool && tc.Name != "" {
		return fmt.Errorf("request: tool_choice name %q is only used with mode tool (mode is %q)", tc.Name, tc.Mode)
	}
	if tc.Name != "" && !slices.ContainsFunc(r.Tools, func(t ToolSpec) bool { return t.Name == tc.Name }) {
		return fmt.Errorf("request: tool_choice names tool %q, which is not in tools", tc.Name)
	}
	return nil
}
