package main

import (
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/strata-agent/strata/llm"
)

// knobFlags are the request knobs shared by run, chat, acp, render and the
// sessions commands.
type knobFlags struct {
	temperature, topP, effort, toolChoice string
	thinkingBudget                        int64
}

func (k *knobFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&k.temperature, "temperature", "", "sampling temperature, e.g. 0.2 (default: the provider's)")
	fl.StringVar(&k.topP, "top-p", "", "nucleus sampling top_p, e.g. 0.9 (default: the provider's)")
	fl.Int64Var(&k.thinkingBudget, "thinking-budget", 0, "extended thinking budget in tokens (Anthropic, Bedrock Claude, Gemini; ≥ 1024 on Anthropic); 0 = off")
	fl.StringVar(&k.effort, "reasoning-effort", "", "reasoning effort for OpenAI reasoning models: minimal, low, medium or high")
	fl.StringVar(&k.toolChoice, "tool-choice", "", "tool choice: auto, any (must call a tool), none, or tool:NAME")
}

// params returns the llm.Params the flags describe (maxTokens is
// --max-tokens), or a usage error naming the flag.
func (k *knobFlags) params(maxTokens int64) (llm.Params, error) {
	p := llm.Params{MaxTokens: maxTokens, Reasoning: llm.Reasoning{BudgetTokens: k.thinkingBudget, Effort: k.effort}}
	if maxTokens < 0 {
		return p, usagef("--max-tokens %d: want ≥ 0", maxTokens)
	}
	if k.thinkingBudget < 0 {
		return p, usagef("--thinking-budget %d: want ≥ 0", k.thinkingBudget)
	}
	for _, f := range []struct {
		name, val string
		dst       **float64
		max       float64
	}{{"--temperature", k.temperature, &p.Temperature, 2}, {"--top-p", k.topP, &p.TopP, 1}} {
		if f.val == "" {
			continue
		}
		v, err := strconv.ParseFloat(f.val, 64)
		if err != nil || v < 0 || v > f.max {
			return p, usagef("%s %q: want a number from 0 to %g", f.name, f.val, f.max)
		}
		*f.dst = &v
	}
	switch k.effort {
	case "", "minimal", "low", "medium", "high":
	default:
		return p, usagef("--reasoning-effort %q (valid: minimal, low, medium, high)", k.effort)
	}
	switch tc := k.toolChoice; {
	case tc == "":
	case tc == "auto":
		p.ToolChoice.Mode = llm.ToolChoiceAuto
	case tc == "any" || tc == "required":
		p.ToolChoice.Mode = llm.ToolChoiceAny
	case tc == "none":
		p.ToolChoice.Mode = llm.ToolChoiceNone
	case strings.HasPrefix(tc, "tool:") && len(tc) > len("tool:"):
		p.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: strings.TrimPrefix(tc, "tool:")}
	default:
		return p, usagef("--tool-choice %q (valid: auto, any, none, tool:NAME)", tc)
	}
	return p, nil
}
