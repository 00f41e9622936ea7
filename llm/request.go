package llm

import (
	"encoding/json"
	"fmt"
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
type ToolChoice struct {
	Mode ToolChoiceMode `json:"mode,omitempty"`
	Name string         `json:"name,omitempty"`
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
// nothing.
type Reasoning struct {
	// BudgetTokens enables Anthropic extended thinking with this budget
	// (tokens, ≥ 1024 per Anthropic docs). 0 = off.
	BudgetTokens int64 `json:"budget_tokens,omitempty"`
	// Effort is OpenAI's reasoning effort: "minimal", "low", "medium", "high".
	Effort string `json:"effort,omitempty"`
	// Summary is OpenAI Responses' reasoning summary mode ("auto", "concise",
	// "detailed").
	Summary string `json:"summary,omitempty"`
}

// Request is one model call in provider-neutral form. Providers map it to their
// SDK params; they never mutate it.
type Request struct {
	Model       string     `json:"model"`
	System      []Block    `json:"system,omitempty"` // text blocks only
	Messages    []Message  `json:"messages"`
	Tools       []ToolSpec `json:"tools,omitempty"`
	ToolChoice  ToolChoice `json:"tool_choice,omitzero"`
	MaxTokens   int64      `json:"max_tokens,omitempty"` // output cap in tokens; 0 = provider default
	Temperature *float64   `json:"temperature,omitempty"`
	TopP        *float64   `json:"top_p,omitempty"`
	Stop        []string   `json:"stop,omitempty"`
	Reasoning   Reasoning  `json:"reasoning,omitzero"`
	// Breakpoints are the cache breakpoints chosen by the layout, in prompt
	// order. See Breakpoint.
	Breakpoints []Breakpoint `json:"breakpoints,omitempty"`
	// PromptCacheKey is OpenAI's prompt_cache_key routing hint; ignored by
	// providers without one.
	PromptCacheKey string `json:"prompt_cache_key,omitempty"`
	// User is an end-user id for abuse monitoring (Anthropic metadata.user_id,
	// OpenAI user / safety_identifier).
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
// schemas, and breakpoints that point at existing blocks (at most
// MaxBreakpoints). Errors name the field and index.
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
