package token

import "testing"

// Known counts from OpenAI's tiktoken for these encodings.
func TestBPECounts(t *testing.T) {
	for _, tc := range []struct {
		c    Counter
		s    string
		want int
	}{
		{O200k(), "hello world", 2},
		{Cl100k(), "hello world", 2},
		{Cl100k(), "tiktoken is great!", 6},
		{O200k(), "", 0},
	} {
		if got := tc.c.Count(tc.s); got != tc.want {
			t.Errorf("%s: Count(%q) = %d, want %d", tc.c.Name(), tc.s, got, tc.want)
		}
	}
}

// ForModel gives OpenAI models the exact o200k_base count, Claude models the
// cl100k_base approximation, and every other model an o200k_base count named
// as an estimate.
func TestForModelNamesExactOrEstimate(t *testing.T) {
	for _, tc := range []struct {
		model, name string
	}{
		{"gpt-5-mini", "o200k_base (exact BPE)"},
		{"gpt-4o-2024-08-06", "o200k_base (exact BPE)"},
		{"openai/gpt-4.1", "o200k_base (exact BPE)"},
		{"o3-mini", "o200k_base (exact BPE)"},
		{"o4-mini", "o200k_base (exact BPE)"},
		{"claude-sonnet-4-5", Cl100k().Name()},
		{"us.anthropic.claude-sonnet-4-5-20250929-v1:0", Cl100k().Name()},
		{"gemini-2.5-flash", "o200k_base (estimate: not this model's own tokenizer)"},
		{"deepseek-chat", "o200k_base (estimate: not this model's own tokenizer)"},
		{"amazon.nova-pro-v1:0", "o200k_base (estimate: not this model's own tokenizer)"},
		{"grok-4", "o200k_base (estimate: not this model's own tokenizer)"},
		{"o1nothing", "o200k_base (estimate: not this model's own tokenizer)"},
	} {
		c := ForModel(tc.model)
		if c.Name() != tc.name {
			t.Errorf("ForModel(%q).Name() = %q, want %q", tc.model, c.Name(), tc.name)
		}
		if got, want := c.Count("tiktoken is great!"), O200k().Count("tiktoken is great!"); tc.name != Cl100k().Name() && got != want {
			t.Errorf("ForModel(%q) counts %d, o200k_base %d", tc.model, got, want)
		}
	}
}

func TestEstimate(t *testing.T) {
	if Estimate("") != 0 || Estimate("abcd") != 1 || Estimate("abcde") != 2 {
		t.Error("Estimate does not round 4 bytes/token up")
	}
	if Estimate("日本語日本語日本語") < 3 {
		t.Error("multi-byte text under-estimated")
	}
}
