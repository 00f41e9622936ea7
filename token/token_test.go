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
	if ForModel("claude-sonnet-4-5") != Cl100k() || ForModel("gpt-5-mini") != O200k() {
		t.Error("ForModel picked the wrong encoding")
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
