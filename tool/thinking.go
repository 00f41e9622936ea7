package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/strata-agent/strata/llm"
)

//go:embed thinking.md
var thinkingDescription string

// Thinking is kiro's thinking tool (input schema specs/thinking.json,
// unchanged from kiro): the model writes a reasoning step as the "thought"
// input; nothing runs and nothing changes. The thought stays in the
// conversation as the tool_use's input; the result only acknowledges it.
// The zero value is ready to use; it is safe for concurrent use.
type Thinking struct{}

// Spec returns thinking's spec: kiro's input schema, thinking.md as
// description.
func (Thinking) Spec() llm.ToolSpec { return cachedSpec("thinking", thinkingDescription) }

// Run acknowledges the thought. An empty thought is an error asking for one.
func (Thinking) Run(_ context.Context, _ *Env, input json.RawMessage) (Result, error) {
	var in struct {
		Thought string `json:"thought"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return Result{}, fmt.Errorf("thinking: input: %w", err)
	}
	if strings.TrimSpace(in.Thought) == "" {
		return Result{}, fmt.Errorf("thinking: \"thought\" is empty: write the reasoning step to record")
	}
	return TextResult("Thought recorded; continue with the task."), nil
}
