package cachefit

import (
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/token"
)

// gemini is the automatic cache of gemini-3-pro-preview in
// cachesim/prices.json: 2,048-token minimum and steps, reads at 0.1×.
var gemini = &prompt.AutoCache{Min: 2048, Step: 2048, ReadRatio: 0.1}

// tokensOf is what cachesim counts for req (the estimator), the reminder
// included.
func tokensOf(req *llm.Request) int64 {
	return cachesim.FromRequest(req, nil, time.Time{}, 0).InputTokens()
}

// Under an automatic cache with steps, a request just short of the next
// step is padded to exactly that boundary; the filler stays in place in the next
// request (which then starts with the whole previous prompt), and the
// simulator reads it all.
func TestAlignmentPadsToTheNextStep(t *testing.T) {
	l := New()
	sys := strings.Repeat("s", 4*3990) // 3,990 tokens (+1 for "go"): 1,943 past the first step, 105 short of the next
	c := &prompt.Context{System: sys, History: []llm.Message{llm.UserText("go")}, AutoCache: gemini}
	req, bd, err := l.Assemble(c)
	if err != nil {
		t.Fatal(err)
	}
	if got := tokensOf(req); got != 2048+2048 {
		t.Fatalf("padded prompt is %d tokens, want 4096 (the next step)", got)
	}
	pad := req.Messages[0].Content[len(req.Messages[0].Content)-1].Text
	if !strings.HasPrefix(pad, padHeader) {
		t.Fatalf("last block is not the filler: %.80q", pad)
	}
	found := false
	for _, s := range bd.Spans {
		found = found || s.Name == "cache step alignment"
	}
	if !found {
		t.Errorf("breakdown has no alignment span: %+v", bd.Spans)
	}
	sim := cachesim.NewAutomatic("gemini", gemini.Min, gemini.Step, 0)
	at := time.Unix(0, 0)
	if _, err := sim.Simulate(cachesim.FromRequest(req, nil, at, 0)); err != nil {
		t.Fatal(err)
	}
	c2 := &prompt.Context{System: sys, History: []llm.Message{llm.UserText("go"), llm.AssistantText("done"), llm.UserText("next")}, AutoCache: gemini}
	req2, _, err := l.Assemble(c2)
	if err != nil {
		t.Fatal(err)
	}
	if last := req2.Messages[0].Content[len(req2.Messages[0].Content)-1].Text; last != pad {
		t.Fatalf("the filler moved or changed in the next request")
	}
	res, _ := sim.Simulate(cachesim.FromRequest(req2, nil, at.Add(time.Second), 0))
	if res.CacheRead != 4096 {
		t.Errorf("next request reads %d tokens, want the whole padded prefix (4096)", res.CacheRead)
	}

	// Without AutoCache (Anthropic, or unknown) nothing is padded.
	plain, _, _ := New().Assemble(&prompt.Context{System: sys, History: []llm.Message{llm.UserText("go")}})
	if got := tokensOf(plain); got != 3991 {
		t.Errorf("unpadded prompt is %d tokens, want 3,991", got)
	}
}

// Padding only where the next read saves more than the filler costs:
// (1 − ρ)·r > p·(1 + ρ·(1 + H)), H ≥ padHorizon. Far from the next step,
// late in a long session, with OpenAI's 128-token steps over the minimum, or
// with a step of 1 token, nothing is placed; an exact filler
// under the counter is always found when p is reachable.
func TestAlignmentOnlyWhenItPays(t *testing.T) {
	req := func(tokens int) *llm.Request {
		return &llm.Request{Messages: []llm.Message{llm.UserText(strings.Repeat("x", 4*tokens))}}
	}
	cases := []struct {
		tokens, sent int
		ac           *prompt.AutoCache
		pad          bool
	}{
		{3990, 0, gemini, true},    // r 1,942, p 106: 1,747.8 > 106·(1 + 0.1·101) = 1,176.6
		{3900, 0, gemini, false},   // r 1,852, p 196: 1,666.8 < 2,175.6
		{2100, 0, gemini, false},   // r 52, p 1,996
		{3990, 200, gemini, false}, // H 200: 106·21.1 = 2,236.6 > 1,747.8
		{3900, 0, &prompt.AutoCache{Min: 1024, Step: 1}, false},
		{1000, 0, &prompt.AutoCache{Min: 1024, Step: 128, ReadRatio: 0.1}, true},  // under the minimum: 24 tokens reach it
		{1100, 0, &prompt.AutoCache{Min: 1024, Step: 128, ReadRatio: 0.1}, false}, // r 76, p 52: 68.4 < 577.2
		{3900, 0, nil, false},
	}
	for _, tc := range cases {
		pad := alignment(req(tc.tokens), tc.ac, tc.sent)
		if (pad != "") != tc.pad {
			t.Errorf("%d tokens, %d sent, %+v: padded %v, want %v", tc.tokens, tc.sent, tc.ac, pad != "", tc.pad)
		}
	}
	for _, p := range []int{17, 18, 100, 1999} {
		for _, c := range []token.Counter{token.Estimator{}, token.O200k()} {
			f := filler(c, p)
			if f != "" && c.Count(f) != p || f == "" && c == token.Counter(token.Estimator{}) {
				t.Errorf("%s: filler for %d tokens counts %d (%q…)", c.Name(), p, c.Count(f), f[:min(len(f), 20)])
			}
		}
	}
	if filler(token.Estimator{}, 3) != "" {
		t.Error("a filler shorter than its header")
	}
}
