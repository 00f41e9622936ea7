// Package token counts tokens: a fast estimator for live budgeting, and (for
// exact figures) BPE counts.
package token

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/strata-agent/strata/llm"
)

// Estimate returns a fast approximation of the token count of s: one token per
// 4 bytes of UTF-8 (rounded up), but never fewer tokens than a quarter of the
// rune count plus one per line. It is the rule of thumb OpenAI and Anthropic
// both publish ("about 4 characters per token" for English text); it is not a
// tokenizer and errs high on code and non-Latin text less than a plain
// character count would.
func Estimate(s string) int {
	if s == "" {
		return 0
	}
	n := (len(s) + 3) / 4
	if r := (utf8.RuneCountInString(s) + 3) / 4; r > n {
		n = r
	}
	return n
}

// EstimateBlocks returns the estimated tokens of content blocks: text,
// thinking, tool_use (name + JSON input), tool_result (nested content) and a
// flat 1,600 tokens per image (Anthropic docs: ~1,600 tokens for a
// 1092×1092 image).
func EstimateBlocks(blocks []llm.Block) int { return CountBlocks(Estimator{}, blocks) }

// CountBlocks counts the tokens of content blocks with c, by the rules of
// EstimateBlocks (images count a flat 1,600 tokens whatever c is).
func CountBlocks(c Counter, blocks []llm.Block) int {
	n := 0
	for _, b := range blocks {
		switch b.Type {
		case llm.BlockText, llm.BlockThinking:
			n += c.Count(b.Text)
		case llm.BlockToolUse:
			n += c.Count(b.Name) + c.Count(string(b.Input))
		case llm.BlockToolResult:
			n += CountBlocks(c, b.Content)
		case llm.BlockImage:
			n += 1600
		case llm.BlockRedactedThinking:
			n += c.Count(string(b.Data))
		}
	}
	return n
}

// EstimateTools returns the estimated tokens of tool specs (name, description
// and input schema as JSON).
func EstimateTools(tools []llm.ToolSpec) int { return CountTools(Estimator{}, tools) }

// CountTools counts the tokens of tool specs (name, description and input
// schema as JSON) with c.
func CountTools(c Counter, tools []llm.ToolSpec) int {
	n := 0
	for _, t := range tools {
		b, _ := json.Marshal(t)
		n += c.Count(string(b))
	}
	return n
}
