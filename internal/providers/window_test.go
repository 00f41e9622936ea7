package providers

import "testing"

// The loop knows the window of every priced model (docs/loop.md,
// "compaction"), not only the kiro table's Claude models: the numbers are
// the providers' (OpenAI's model pages, Gemini's models page, DeepSeek's
// pricing page, Anthropic's models overview); a model of no table is 0.
func TestModelContextWindowOfEveryPricedModel(t *testing.T) {
	for id, want := range map[string]int64{
		"claude-sonnet-4.5":                           200_000,
		"claude-opus-4.6-1m":                          1_000_000,
		"eu.anthropic.claude-haiku-4-5-20251001-v1:0": 200_000,
		"claude-3-5-haiku-latest":                     200_000,
		"gpt-4.1":                                     1_047_576,
		"gpt-4o-mini":                                 128_000,
		"gpt-5-chat-latest":                           128_000,
		"o4-mini":                                     200_000,
		"gemini-2.5-flash":                            1_048_576,
		"deepseek-chat":                               128_000,
		"llama3.1:8b":                                 0,
	} {
		if got := ContextWindow(id); got != want {
			t.Errorf("ContextWindow(%q) = %d, want %d", id, got, want)
		}
	}
}
