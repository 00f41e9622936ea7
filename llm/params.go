package llm

// Params are the request knobs a caller sets for every model call of a loop,
// independent of the layout: output cap, sampling, reasoning and tool choice.
// The zero value sets nothing, so each provider's defaults apply. Each
// provider maps the fields to its SDK's params (see the provider packages'
// params files for the exact wire fields and the rules they follow).
type Params struct {
	// MaxTokens caps the output of one model call, in tokens (0 = the
	// layout's / provider's default).
	MaxTokens int64 `json:"max_tokens,omitempty"`
	// Temperature and TopP are the sampling parameters (nil = not sent).
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	// Stop are stop sequences.
	Stop []string `json:"stop,omitempty"`
	// Reasoning turns on extended thinking (BudgetTokens) or sets the
	// reasoning effort (Effort), per provider.
	Reasoning Reasoning `json:"reasoning,omitzero"`
	// ToolChoice constrains tool calling (zero = auto, not sent).
	ToolChoice ToolChoice `json:"tool_choice,omitzero"`
}

// Apply sets the fields p sets on req and leaves the others as the layout
// built them.
func (p Params) Apply(req *Request) {
	if p.MaxTokens != 0 {
		req.MaxTokens = p.MaxTokens
	}
	if p.Temperature != nil {
		req.Temperature = p.Temperature
	}
	if p.TopP != nil {
		req.TopP = p.TopP
	}
	if len(p.Stop) > 0 {
		req.Stop = p.Stop
	}
	if p.Reasoning != (Reasoning{}) {
		req.Reasoning = p.Reasoning
	}
	if p.ToolChoice != (ToolChoice{}) {
		req.ToolChoice = p.ToolChoice
	}
}
