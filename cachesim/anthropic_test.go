package cachesim

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/strata-agent/strata/llm"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// blocks returns n blocks of tok tokens each with keys base+1 … base+n.
func blocks(n int, tok int64, base Key) []Block {
	out := make([]Block, n)
	for i := range out {
		out[i] = Block{Key: base + Key(i+1), Tokens: tok}
	}
	return out
}

// withBP returns a copy of bs with breakpoints (5 m TTL) on the given 1-based
// block numbers.
func withBP(bs []Block, nums ...int) []Block {
	out := append([]Block(nil), bs...)
	for _, n := range nums {
		out[n-1].Breakpoint = true
		out[n-1].TTL = TTL5m
	}
	return out
}

func mustSim(t *testing.T, s Simulator, r Request) Result {
	t.Helper()
	res, err := s.Simulate(r)
	if err != nil {
		t.Fatalf("Simulate: %v", err)
	}
	if res.Input+res.CacheRead+res.CacheWrite != res.Prompt || res.Prompt != r.InputTokens() {
		t.Fatalf("partition broken: %+v (prompt %d)", res, r.InputTokens())
	}
	if res.CacheWrite != res.CacheWrite5m+res.CacheWrite1h {
		t.Fatalf("write split broken: %+v", res)
	}
	return res
}

func want(t *testing.T, name string, got Result, input, read, write int64) {
	t.Helper()
	if got.Input != input || got.CacheRead != read || got.CacheWrite != write {
		t.Errorf("%s: got input=%d read=%d write=%d, want %d/%d/%d", name, got.Input, got.CacheRead, got.CacheWrite, input, read, write)
	}
}

// TestAnthropicLookbackExample encodes the Anthropic docs' 20-block lookback
// example: 30 blocks with cache_control on block 30, then block 31 is sent.
func TestAnthropicLookbackExample(t *testing.T) {
	const tok = 1024 // every prefix meets the 1,024-token minimum
	base := blocks(31, tok, 0)
	first := func() *Anthropic {
		a := NewAnthropic(1024)
		res := mustSim(t, a, Request{Blocks: withBP(base[:30], 30), At: t0})
		want(t, "first request writes blocks 1-30", res, 0, 0, 30*tok)
		return a
	}
	at := t0.Add(time.Minute)

	// No change: hit at block 30, only block 31 processed.
	res := mustSim(t, first(), Request{Blocks: withBP(base, 30), At: at})
	want(t, "unchanged", res, tok, 30*tok, 0)

	// Block 25 modified: checks 30, 29, …, 25 (miss), 24 (hit).
	mod := append([]Block(nil), base...)
	mod[24].Key = 999
	res = mustSim(t, first(), Request{Blocks: withBP(mod, 30), At: at})
	want(t, "block 25 modified", res, tok, 24*tok, 6*tok)

	// Block 5 modified: 20 checks (30 … 11) find nothing → no hit at all.
	mod = append([]Block(nil), base...)
	mod[4].Key = 999
	res = mustSim(t, first(), Request{Blocks: withBP(mod, 30), At: at})
	want(t, "block 5 modified", res, tok, 0, 30*tok)

	// Block 5 modified but an explicit breakpoint on block 5: 5 (miss), 4 (hit).
	res = mustSim(t, first(), Request{Blocks: withBP(mod, 5, 30), At: at})
	want(t, "block 5 modified, breakpoint on 5", res, tok, 4*tok, 26*tok)
}

type lenCounter struct{}

func (lenCounter) Count(s string) int { return len(s) }
func (lenCounter) Name() string       { return "bytes" }

func pad(n int, c byte) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return string(b)
}

// TestAnthropicToolsSystemMessages places breakpoints on tools, system and
// the last message (Anthropic docs: prefix order tools → system → messages;
// changing tools or system invalidates everything after it).
func TestAnthropicToolsSystemMessages(t *testing.T) {
	schema := json.RawMessage(`{"type":"object"}`)
	req := &llm.Request{
		Model: "claude-sonnet-4-5",
		Tools: []llm.ToolSpec{
			{Name: "fs_read", Description: pad(1000, 'a'), InputSchema: schema},
			{Name: "grep", Description: pad(1000, 'b'), InputSchema: schema},
		},
		System:   []llm.Block{llm.TextBlock(pad(1500, 's'))},
		Messages: []llm.Message{llm.UserText(pad(1200, 'u'))},
		Breakpoints: []llm.Breakpoint{
			{Target: llm.BreakTools},
			{Target: llm.BreakSystem, Block: 0},
			{Target: llm.BreakMessage, Message: 0, Block: 0},
		},
	}
	r := FromRequest(req, lenCounter{}, t0, 10)
	if len(r.Blocks) != 4 {
		t.Fatalf("blocks = %d, want 4 (2 tools, 1 system, 1 message)", len(r.Blocks))
	}
	for i, wantBP := range []bool{false, true, true, true} {
		if r.Blocks[i].Breakpoint != wantBP {
			t.Errorf("block %d breakpoint = %v, want %v", i, r.Blocks[i].Breakpoint, wantBP)
		}
	}
	tools := r.Blocks[0].Tokens + r.Blocks[1].Tokens
	sys := r.Blocks[2].Tokens
	msg := r.Blocks[3].Tokens
	a := NewAnthropic(1024)
	res := mustSim(t, a, r)
	want(t, "cold", res, 0, 0, tools+sys+msg)
	if res.Output != 10 {
		t.Errorf("output = %d, want 10", res.Output)
	}

	// Next turn: assistant reply + new user message, breakpoint moves to the end.
	req2 := *req
	req2.Messages = append(append([]llm.Message(nil), req.Messages...), llm.AssistantText(pad(300, 'x')), llm.UserText(pad(200, 'y')))
	req2.Breakpoints = []llm.Breakpoint{{Target: llm.BreakTools}, {Target: llm.BreakSystem}, {Target: llm.BreakMessage, Message: 2, Block: 0}}
	res = mustSim(t, a, FromRequest(&req2, lenCounter{}, t0.Add(time.Minute), 0))
	want(t, "warm append", res, 0, tools+sys+msg, 500)

	// System changed: only the tools prefix still hits.
	req3 := req2
	req3.System = []llm.Block{llm.TextBlock(pad(1500, 'S'))}
	res = mustSim(t, a, FromRequest(&req3, lenCounter{}, t0.Add(2*time.Minute), 0))
	want(t, "system changed", res, 0, tools, sys+msg+500)

	// Tools changed: nothing hits.
	req4 := req2
	req4.Tools = append([]llm.ToolSpec{{Name: "new", InputSchema: schema}}, req.Tools...)
	r4 := FromRequest(&req4, lenCounter{}, t0.Add(3*time.Minute), 0)
	res = mustSim(t, a, r4)
	if res.CacheRead != 0 {
		t.Errorf("tools changed: read %d, want 0", res.CacheRead)
	}
}

// TestAnthropicMinimum: a prefix under the model's minimum is not cached
// (Anthropic docs: "shorter prompts cannot be cached, even if marked").
func TestAnthropicMinimum(t *testing.T) {
	haiku, ok := Lookup("claude-haiku-4-5")
	if !ok || haiku.MinCacheableTokens != 4096 {
		t.Fatalf("claude-haiku-4-5 minimum = %d, want 4096", haiku.MinCacheableTokens)
	}
	for _, tc := range []struct {
		name  string
		min   int64
		tok   int64
		write bool
	}{
		{"sonnet 1000 < 1024", 1024, 1000, false},
		{"sonnet 1024 = 1024", 1024, 1024, true},
		{"haiku 4.5 2048 < 4096", haiku.MinCacheableTokens, 2048, false},
		{"haiku 3.5 2048 = 2048", 2048, 2048, true},
	} {
		a := NewAnthropic(tc.min)
		bs := withBP(blocks(1, tc.tok, 0), 1)
		r1 := mustSim(t, a, Request{Blocks: bs, At: t0})
		r2 := mustSim(t, a, Request{Blocks: bs, At: t0.Add(time.Second)})
		if got := r1.CacheWrite > 0; got != tc.write {
			t.Errorf("%s: write = %d, want write=%v", tc.name, r1.CacheWrite, tc.write)
		}
		if got := r2.CacheRead > 0; got != tc.write {
			t.Errorf("%s: second read = %d, want hit=%v", tc.name, r2.CacheRead, tc.write)
		}
		if !tc.write && r1.Input != tc.tok {
			t.Errorf("%s: input = %d, want %d at base price", tc.name, r1.Input, tc.tok)
		}
	}
}

// TestAnthropicTTL: 5 minutes refreshed by each read; 1 hour on request.
func TestAnthropicTTL(t *testing.T) {
	bs := withBP(blocks(2, 1024, 0), 2)
	a := NewAnthropic(1024)
	mustSim(t, a, Request{Blocks: bs, At: t0})
	at := t0.Add(4 * time.Minute)
	want(t, "4 min later", mustSim(t, a, Request{Blocks: bs, At: at}), 0, 2048, 0)
	at = at.Add(4*time.Minute + 59*time.Second) // 8m59s after the write, 4m59s after the read
	want(t, "refreshed by the read", mustSim(t, a, Request{Blocks: bs, At: at}), 0, 2048, 0)
	at = at.Add(5*time.Minute + time.Second)
	want(t, "expired", mustSim(t, a, Request{Blocks: bs, At: at}), 0, 0, 2048)
	if n := a.entries(at); n != 2 {
		t.Errorf("live entries = %d, want 2 (one per block boundary)", n)
	}

	long := append([]Block(nil), bs...)
	long[1].TTL = TTL1h
	a = NewAnthropic(1024)
	res := mustSim(t, a, Request{Blocks: long, At: t0})
	if res.CacheWrite1h != 2048 || res.CacheWrite5m != 0 {
		t.Errorf("1h write split: %+v", res)
	}
	want(t, "1h entry after 30 min", mustSim(t, a, Request{Blocks: long, At: t0.Add(30 * time.Minute)}), 0, 2048, 0)
	want(t, "1h entry after 1h31m", mustSim(t, a, Request{Blocks: long, At: t0.Add(91 * time.Minute)}), 0, 0, 2048)
}

// TestAnthropicMixedTTL encodes the docs' mixed-TTL billing: read A, 1 h
// write for B−A, 5 m write for C−B.
func TestAnthropicMixedTTL(t *testing.T) {
	bs := blocks(3, 2000, 0)
	a := NewAnthropic(1024)
	first := withBP(bs[:1], 1)
	first[0].TTL = TTL1h
	mustSim(t, a, Request{Blocks: first, At: t0}) // A cached
	r := append([]Block(nil), bs...)
	r[1].Breakpoint, r[1].TTL = true, TTL1h
	r[2].Breakpoint, r[2].TTL = true, TTL5m
	res := mustSim(t, a, Request{Blocks: r, At: t0.Add(time.Minute)})
	if res.CacheRead != 2000 || res.CacheWrite1h != 2000 || res.CacheWrite5m != 2000 || res.Input != 0 {
		t.Errorf("mixed TTL: %+v, want read 2000, 1h 2000, 5m 2000", res)
	}
	bad := append([]Block(nil), bs...)
	bad[0].Breakpoint, bad[0].TTL = true, TTL5m
	bad[1].Breakpoint, bad[1].TTL = true, TTL1h
	if _, err := a.Simulate(Request{Blocks: bad, At: t0}); !errors.Is(err, ErrTTLOrder) {
		t.Errorf("1h after 5m: err = %v, want ErrTTLOrder", err)
	}
}

// TestAnthropicMaxBreakpoints: a fifth breakpoint is rejected and leaves the
// cache untouched (Anthropic docs: up to 4 cache breakpoints).
func TestAnthropicMaxBreakpoints(t *testing.T) {
	for _, s := range []*Anthropic{NewAnthropic(1024), NewBedrock(1024)} {
		bs := withBP(blocks(5, 1024, 0), 1, 2, 3, 4, 5)
		_, err := s.Simulate(Request{Blocks: bs, At: t0})
		if !errors.Is(err, ErrTooManyBreakpoints) {
			t.Fatalf("%s: err = %v, want ErrTooManyBreakpoints", s.Name(), err)
		}
		if n := s.entries(t0); n != 0 {
			t.Errorf("%s: rejected request cached %d entries", s.Name(), n)
		}
		res := mustSim(t, s, Request{Blocks: withBP(blocks(5, 1024, 0), 2, 3, 4, 5), At: t0})
		want(t, s.Name()+" four breakpoints", res, 0, 0, 5*1024)
	}
	if NewBedrock(1024).Name() != "bedrock" || NewAnthropic(1024).Name() != "anthropic" {
		t.Error("names")
	}
}

// TestAnthropicNoBreakpoint: without breakpoints nothing is cached.
func TestAnthropicNoBreakpoint(t *testing.T) {
	a := NewAnthropic(1024)
	bs := blocks(4, 1024, 0)
	mustSim(t, a, Request{Blocks: bs, At: t0})
	want(t, "no breakpoints", mustSim(t, a, Request{Blocks: bs, At: t0.Add(time.Second)}), 4096, 0, 0)
	// Bad input never panics.
	mustSim(t, a, Request{})
	mustSim(t, a, Request{Blocks: []Block{{Key: 1, Tokens: -5, Breakpoint: true}}})
}

func TestFromRequestEdgeCases(t *testing.T) {
	if r := FromRequest(nil, nil, t0, 3); len(r.Blocks) != 0 || r.Output != 3 {
		t.Errorf("nil request: %+v", r)
	}
	req := &llm.Request{
		Messages: []llm.Message{{Role: llm.RoleAssistant, Content: []llm.Block{
			llm.TextBlock("hi"),
			llm.ToolUseBlock("call_0", "execute_bash", json.RawMessage(`{"command":"ls"}`)),
		}}, {Role: llm.RoleUser, Content: []llm.Block{
			llm.ToolResultBlock("call_0", "a.go", false),
			{Type: llm.BlockImage, MediaType: "image/png", Data: []byte{1}},
		}}},
		Breakpoints: []llm.Breakpoint{
			{Target: llm.BreakMessage, Message: 1, Block: 1, TTL: "1h"},
			{Target: llm.BreakMessage, Message: 9, Block: 0}, // out of range: ignored
			{Target: llm.BreakTools},                         // no tools: ignored
		},
	}
	r := FromRequest(req, nil, t0, 0)
	if len(r.Blocks) != 4 || !r.Blocks[3].Breakpoint || r.Blocks[3].TTL != TTL1h || r.Blocks[3].Tokens != ImageTokens {
		t.Errorf("blocks: %+v", r.Blocks)
	}
	for i := 0; i < 3; i++ {
		if r.Blocks[i].Breakpoint {
			t.Errorf("block %d has a breakpoint", i)
		}
	}
	// Keys are position independent but depend on role and bytes.
	a := FromRequest(&llm.Request{Messages: []llm.Message{llm.UserText("x"), llm.UserText("y")}}, nil, t0, 0)
	b := FromRequest(&llm.Request{Messages: []llm.Message{llm.UserText("y"), llm.UserText("x"), llm.AssistantText("x")}}, nil, t0, 0)
	if a.Blocks[0].Key != b.Blocks[1].Key || a.Blocks[1].Key != b.Blocks[0].Key || b.Blocks[1].Key == b.Blocks[2].Key {
		t.Error("keys: want equal for same role+bytes at any position, different across roles")
	}
}

// entries returns the number of cached prefixes alive at t (tests).
func (a *Anthropic) entries(t time.Time) int {
	n := 0
	for h := range a.cache {
		if a.cache.alive(h, t) {
			n++
		}
	}
	return n
}
