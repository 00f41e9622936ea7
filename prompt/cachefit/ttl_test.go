package cachefit

import (
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// The gap model keeps plain 5-minute breakpoints until the session has
// idled past 5 minutes. It reads only the times it was given (never the
// future); requests without a time change nothing. Right after a pause,
// TTLPing keeps alive when the previous request did not (it was pinged, so
// only the new reply's first block is written for an hour), and not when it
// did (the pause lost the turn behind its 1-hour point: 740 tokens at the
// 1-hour rate outweigh one expected ping here); TTLRewrite, the rule before
// pings, never keeps alive right after a pause. A 20,000-token prompt, a
// 40-token first block, a 700-token turn.
func TestGapModelKeepsAliveAfterObservedPauses(t *testing.T) {
	min := int64(time.Minute / time.Millisecond)
	tests := []struct {
		name          string
		times         []int64 // Unix ms of each request
		ping, rewrite []bool
	}{
		{"no times", []int64{0, 0, 0}, []bool{false, false, false}, nil},
		{"steady 30 s gaps", []int64{1, 1 + min/2, 1 + min, 1 + 3*min/2}, []bool{false, false, false, false}, nil},
		{"exactly 5 minutes is no pause", []int64{1, 1 + 5*min, 1 + 10*min}, []bool{false, false, false}, nil},
		{"a 6-minute pause", []int64{1, 1 + min, 1 + 2*min, 1 + 8*min, 1 + 9*min, 1 + 10*min},
			[]bool{false, false, false, true, true, true}, []bool{false, false, false, false, true, true}},
		{"a second pause", []int64{1, 1 + 7*min, 1 + 8*min, 1 + 15*min, 1 + 16*min},
			[]bool{false, true, true, false, true}, []bool{false, false, true, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, rule := range []TTLRule{TTLPing, TTLRewrite} {
				want := tt.ping
				if rule == TTLRewrite && tt.rewrite != nil {
					want = tt.rewrite
				}
				g := gapModel{rule: rule}
				for i, at := range tt.times {
					if got := g.observe(at, sizes(20000, 40, 700)); got != want[i] {
						t.Errorf("%s: request %d: keep-alive %v, want %v", rule, i, got, want[i])
					}
				}
			}
		})
	}
}

// The pause rate is learnt per state (after a pause or not): a session that
// pauses every third call never pauses twice in a row, so after a few
// periods the request right after a pause stops paying the 1-hour rate for
// the turn the pause lost; one that often pauses twice in a row keeps
// paying it, since the next gap is likely a pause too (40,000-token prompt,
// 40-token first block, 700-token turns).
func TestGapModelLearnsPauseRhythm(t *testing.T) {
	min := int64(time.Minute / time.Millisecond)
	afterPause := func(pattern []bool) (last bool) { // pattern: gap i is a pause
		g := gapModel{rule: TTLPing, prior: 1}
		at := int64(1)
		g.observe(at, sizes(40000, 40, 700))
		for _, pause := range pattern {
			at += min
			if pause {
				at += 6 * min
			}
			kept := g.observe(at, sizes(40000, 40, 700))
			if pause {
				last = kept
			}
		}
		return last
	}
	var every3, twice []bool
	for i := 0; i < 30; i++ {
		every3 = append(every3, i%3 == 2)
		twice = append(twice, i%3 != 0)
	}
	if afterPause(every3) {
		t.Error("a pause every third call: the request after the tenth pause still keeps alive")
	}
	if !afterPause(twice) {
		t.Error("two pauses in every three gaps: the request after a pause should keep alive")
	}
}

// With pings (TTLPing), keep-alive is chosen from the request's tokens: it
// pays while one ping (0.1 × the prompt) costs more than rewriting the turn
// behind the 1-hour point (1.15 × the tail) plus the expected 1-hour
// premium on the first block; a long tail in a short prompt keeps pinging,
// which the rule before pings (TTLRewrite) did not. TTLNever only pings.
func TestGapModelWeighsPings(t *testing.T) {
	min := int64(time.Minute / time.Millisecond)
	times := []int64{1, 1 + min, 1 + 8*min, 1 + 9*min, 1 + 10*min} // one pause in four gaps
	cases := []struct {
		rule                TTLRule
		prompt, first, tail int
		want                bool // at the last request
	}{
		{TTLPing, 20000, 40, 700, true},    // λ(2000 − 805) = 299 > 30
		{TTLPing, 5000, 40, 700, false},    // 0.1·5000 < 1.15·700: pinging is cheaper
		{TTLPing, 20000, 3000, 700, false}, // λ·1195 = 299 < 0.75·3000
		{TTLRewrite, 5000, 40, 700, true},  // λ·n·1.15 = 1.44 > 0.75, whatever the tokens
		{TTLNever, 1_000_000, 1, 1, false},
	}
	for _, c := range cases {
		g := gapModel{rule: c.rule}
		var got bool
		for _, at := range times {
			got = g.observe(at, sizes(c.prompt, c.first, c.tail))
		}
		if got != c.want {
			t.Errorf("%s prompt %d first %d tail %d: keep-alive %v, want %v", c.rule, c.prompt, c.first, c.tail, got, c.want)
		}
	}
	if !New().KeepsAlive() {
		t.Error("cachefit must ask the runtime for keep-alive pings")
	}
}

// In keep-alive, the 1-hour breakpoints close the system prompt and the
// first block of each of the last two replies, and one 5-minute breakpoint
// closes the last user message: 1-hour ones first, as the API requires,
// and at most four.
func TestKeepAliveBreakpoints(t *testing.T) {
	l := New()
	min := int64(time.Minute / time.Millisecond)
	// A long first message: one ping would cost more than the 1-hour
	// premium (TTLPing keeps alive).
	h := []llm.Message{llm.UserText("fix the bug " + strings.Repeat("context ", 5000))}
	var req *llm.Request
	for i, at := range []int64{1, 1 + min, 1 + 8*min, 1 + 9*min} {
		if i > 0 {
			h = append(h, llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("thinking"), llm.TextBlock("more")}}, llm.UserText("go on"))
		}
		var err error
		if req, _, err = l.Assemble(&prompt.Context{System: "be brief", History: h, Now: at}); err != nil {
			t.Fatal(err)
		}
	}
	last := len(h) - 1
	want := []llm.Breakpoint{
		{Target: llm.BreakSystem, Block: 0, TTL: "1h"},
		{Target: llm.BreakMessage, Message: last - 3, Block: 0, TTL: "1h"},
		{Target: llm.BreakMessage, Message: last - 1, Block: 0, TTL: "1h"},
		{Target: llm.BreakMessage, Message: last, Block: 0},
	}
	if len(req.Breakpoints) != len(want) {
		t.Fatalf("breakpoints %+v; want %+v", req.Breakpoints, want)
	}
	for i := range want {
		if req.Breakpoints[i] != want[i] {
			t.Errorf("breakpoint %d: %+v, want %+v", i, req.Breakpoints[i], want[i])
		}
	}
}

// sizes is the token counts of one request, for gapModel.observe.
func sizes(prompt, first, tail int) func() requestSize {
	return func() requestSize { return requestSize{prompt: prompt, first: first, tail: tail, since: tail} }
}
