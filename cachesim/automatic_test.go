package cachesim

import (
	"testing"
	"time"
)

// TestOpenAIThresholdAndIncrements encodes OpenAI's documented behaviour:
// caching starts at 1,024 tokens and hits grow in 128-token increments.
func TestOpenAIThresholdAndIncrements(t *testing.T) {
	p, ok := Lookup("gpt-4.1")
	if !ok {
		t.Fatal("gpt-4.1 not in the price table")
	}
	if p.MinCacheableTokens != 1024 || p.CacheGranularityTokens != 128 {
		t.Fatalf("gpt-4.1 cache rules: min %d gran %d", p.MinCacheableTokens, p.CacheGranularityTokens)
	}

	// 1,000-token prompt: never cached.
	s := NewOpenAI(p)
	short := blocks(1, 1000, 0)
	mustSim(t, s, Request{Blocks: short, At: t0})
	want(t, "1000 tokens", mustSim(t, s, Request{Blocks: short, At: t0.Add(time.Second)}), 1000, 0, 0)

	for _, tc := range []struct {
		prefix, tail, read int64
	}{
		{1024, 10, 1024},        // exactly the minimum
		{1500, 300, 1024 + 384}, // 1500 → 1024 + 3·128
		{1151, 5, 1024},         // 1151 → 1024 (127 short of the next step)
		{1152, 5, 1152},         // 1152 = 1024 + 128
		{100000, 1, 99968},      // 1024 + 773·128
	} {
		s := NewOpenAI(p)
		first := blocks(1, tc.prefix, 0)
		res := mustSim(t, s, Request{Blocks: first, At: t0})
		want(t, "cold", res, tc.prefix, 0, 0)
		next := append(append([]Block(nil), first...), Block{Key: 77, Tokens: tc.tail})
		res = mustSim(t, s, Request{Blocks: next, At: t0.Add(time.Minute)})
		want(t, "warm", res, tc.prefix+tc.tail-tc.read, tc.read, 0)
	}

	// A change in the first block: no hit. Idle past the TTL: no hit.
	s = NewOpenAI(p)
	bs := blocks(3, 1000, 0)
	mustSim(t, s, Request{Blocks: bs, At: t0})
	changed := append([]Block(nil), bs...)
	changed[0].Key = 999
	want(t, "first block changed", mustSim(t, s, Request{Blocks: changed, At: t0.Add(time.Second)}), 3000, 0, 0)
	want(t, "still cached", mustSim(t, s, Request{Blocks: bs, At: t0.Add(5 * time.Minute)}), 3000-2944, 2944, 0)
	want(t, "idle > TTL", mustSim(t, s, Request{Blocks: bs, At: t0.Add(10*time.Minute + time.Second)}), 3000, 0, 0)

	// Breakpoints are ignored by automatic caching; no write ever counts.
	s = NewOpenAI(p)
	mustSim(t, s, Request{Blocks: withBP(bs, 1), At: t0})
	res := mustSim(t, s, Request{Blocks: withBP(bs, 1), At: t0.Add(time.Second)})
	if res.CacheWrite != 0 || res.CacheRead != 2944 {
		t.Errorf("breakpoints on OpenAI: %+v", res)
	}
}

// TestGeminiImplicit: the Gemini simulator uses the table's minimum and
// granularity (2,048 for gemini-3-pro-preview, inferred from the recorded
// sessions) and never charges writes.
func TestGeminiImplicit(t *testing.T) {
	p, ok := Lookup("google/gemini-3-pro-preview")
	if !ok {
		t.Fatal("gemini-3-pro-preview not in the price table")
	}
	s := NewGemini(p)
	if s.Name() != "gemini" {
		t.Errorf("name %q", s.Name())
	}
	bs := []Block{{Key: 1, Tokens: 1500}, {Key: 2, Tokens: 3500}}
	want(t, "cold", mustSim(t, s, Request{Blocks: bs, At: t0}), 5000, 0, 0)
	more := append(append([]Block(nil), bs...), Block{Key: 3, Tokens: 700})
	want(t, "warm", mustSim(t, s, Request{Blocks: more, At: t0.Add(10 * time.Second)}), 5700-4096, 4096, 0)

	f, _ := Lookup("gemini-2.5-flash")
	fs := NewGemini(f)
	short := []Block{{Key: 1, Tokens: 1000}}
	mustSim(t, fs, Request{Blocks: short, At: t0})
	want(t, "flash under 1024", mustSim(t, fs, Request{Blocks: short, At: t0}), 1000, 0, 0)
}

func TestForPrice(t *testing.T) {
	for model, name := range map[string]string{
		"claude-sonnet-4-5": "anthropic",
		"gpt-5-mini":        "openai",
		"gemini-2.5-pro":    "gemini",
		"deepseek-chat":     "deepseek",
		"us.anthropic.claude-haiku-4-5-20251001-v1:0": "anthropic",
	} {
		p, ok := Lookup(model)
		if !ok {
			t.Errorf("%s: not found", model)
			continue
		}
		if got := ForPrice(p).Name(); got != name {
			t.Errorf("%s: simulator %q, want %q", model, got, name)
		}
	}
	p, _ := Lookup("claude-sonnet-4-5")
	p.Provider = "bedrock"
	if ForPrice(p).Name() != "bedrock" {
		t.Error("bedrock")
	}
}
