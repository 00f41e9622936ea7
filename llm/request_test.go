package llm

import (
	"math"
	"strings"
	"testing"
)

func ptr(v float64) *float64 { return &v }

// Validate rejects knob values no wire API can take, naming the field, and
// accepts the zero knobs and well-formed settings.
func TestValidateKnobs(t *testing.T) {
	tools := []ToolSpec{{Name: "read"}, {Name: "search"}}
	for _, c := range []struct {
		name string
		req  Request
		want string // error substring; "" = valid
	}{
		{"zero knobs", Request{}, ""},
		{"every knob", Request{Tools: tools, ToolChoice: ToolChoice{Mode: ToolChoiceTool, Name: "search", DisableParallel: true},
			MaxTokens: 100, Temperature: ptr(0.5), TopP: ptr(0.9), Stop: []string{"END"}, Reasoning: Reasoning{BudgetTokens: 2048, Effort: "high", Summary: "auto"}}, ""},
		{"auto and none need no tools", Request{ToolChoice: ToolChoice{Mode: ToolChoiceNone, DisableParallel: true}}, ""},
		{"out-of-range temperature is the API's to reject", Request{Temperature: ptr(-1)}, ""},
		{"negative max_tokens", Request{MaxTokens: -1}, "max_tokens -1"},
		{"negative budget", Request{Reasoning: Reasoning{BudgetTokens: -5}}, "reasoning.budget_tokens -5"},
		{"NaN temperature", Request{Temperature: ptr(math.NaN())}, "temperature NaN"},
		{"infinite top_p", Request{TopP: ptr(math.Inf(1))}, "top_p +Inf"},
		{"empty stop sequence", Request{Stop: []string{"a", ""}}, "stop[1] is empty"},
		{"unknown mode", Request{Tools: tools, ToolChoice: ToolChoice{Mode: "sometimes"}}, `tool_choice mode "sometimes"`},
		{"any without tools", Request{ToolChoice: ToolChoice{Mode: ToolChoiceAny}}, "no tools"},
		{"tool without name", Request{Tools: tools, ToolChoice: ToolChoice{Mode: ToolChoiceTool}}, "needs a tool name"},
		{"name with another mode", Request{Tools: tools, ToolChoice: ToolChoice{Mode: ToolChoiceAuto, Name: "read"}}, `name "read" is only used with mode tool`},
		{"name of an undeclared tool", Request{Tools: tools, ToolChoice: ToolChoice{Mode: ToolChoiceTool, Name: "write"}}, `tool "write", which is not in tools`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.req
			r.Model = "m"
			r.Messages = []Message{UserText("hi")}
			err := r.Validate()
			switch {
			case c.want == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}
