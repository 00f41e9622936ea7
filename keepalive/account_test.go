package keepalive

import (
	"testing"

	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/llm"
)

// A call's cache writes are priced at the TTL the provider reports for them
// (Anthropic's cache_creation split), else at the TTL its breakpoints ask
// for (Bedrock): all 5-minute, all 1-hour, or — with both in one request,
// where the usage does not say how the writes split — not at all, unless
// the split does not matter (no writes, or a model whose 1-hour writes cost
// what 5-minute ones do).
func TestOneHourWrites(t *testing.T) {
	sonnet, ok := cachesim.Lookup("claude-sonnet-4-5")
	if !ok {
		t.Fatal("no price for claude-sonnet-4-5")
	}
	flat := cachesim.Price{Input: 1, CacheWrite5m: 1.25, CacheWrite1h: 1.25}
	five, hour := llm.Breakpoint{Target: llm.BreakSystem}, llm.Breakpoint{Target: llm.BreakSystem, TTL: "1h"}
	for _, c := range []struct {
		name   string
		p      cachesim.Price
		bps    []llm.Breakpoint
		writes int64
		w1h    int64
		known  bool
	}{
		{"5-minute breakpoints", sonnet, []llm.Breakpoint{five, five}, 900, 0, true},
		{"1-hour breakpoints", sonnet, []llm.Breakpoint{hour, hour}, 900, 900, true},
		{"both TTLs", sonnet, []llm.Breakpoint{hour, five}, 900, 0, false},
		{"both TTLs, no write", sonnet, []llm.Breakpoint{hour, five}, 0, 0, true},
		{"both TTLs, one price", flat, []llm.Breakpoint{hour, five}, 900, 0, true},
	} {
		if w1h, known := oneHourWrites(c.p, c.bps, c.writes); w1h != c.w1h || known != c.known {
			t.Errorf("%s: %d 1-hour writes, known %v; want %d, %v", c.name, w1h, known, c.w1h, c.known)
		}
	}
	// Anthropic reports the split: a call of both TTLs is priced exactly.
	var a account
	both := &llm.Request{Breakpoints: []llm.Breakpoint{hour, five}}
	split := llm.Usage{Input: 10, CacheWrite: 900, CacheWrite1h: 40, Output: 5}
	a.call(llm.APIAnthropic, "claude-sonnet-4-5", both, split, false)
	if want := sonnet.Cost(cachesim.Result{Input: 10, CacheWrite: 900, CacheWrite5m: 860, CacheWrite1h: 40, Output: 5}); a.unpriced || a.costUSD != want {
		t.Fatalf("Anthropic call of both TTLs: cost %v, unpriced %v; want %v", a.costUSD, a.unpriced, want)
	}
	// Bedrock does not: one call of unknown split leaves the session unpriced.
	a = account{}
	u := llm.Usage{Input: 10, CacheWrite: 900, Output: 5}
	a.call(llm.APIBedrock, "claude-sonnet-4-5", &llm.Request{Breakpoints: []llm.Breakpoint{hour}}, u, false)
	if want := sonnet.Cost(cachesim.Result{Input: 10, CacheWrite: 900, CacheWrite1h: 900, Output: 5}); a.unpriced || a.costUSD != want {
		t.Fatalf("1-hour call: cost %v, unpriced %v; want %v", a.costUSD, a.unpriced, want)
	}
	a.call(llm.APIBedrock, "claude-sonnet-4-5", both, u, false)
	if !a.unpriced || a.context != 915 {
		t.Errorf("after a call of both TTLs: unpriced %v, context %d; want unpriced, context 915", a.unpriced, a.context)
	}
}
