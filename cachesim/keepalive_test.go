package cachesim

import (
	"math/rand"
	"testing"
	"time"
)

// The policy per provider: Anthropic and Bedrock ping 4m30s after the last
// request, at most 11 times (ski rental: (1.25 − 0.1) / 0.1); automatic
// caches never ping. Pings counts the pings of one idle gap.
func TestKeepAlivePolicy(t *testing.T) {
	a, _ := Lookup("claude-sonnet-4-5")
	if k := KeepAliveFor(a); k.Interval != 270*time.Second || k.MaxPings != 11 {
		t.Errorf("anthropic: %+v", k)
	}
	o, _ := Lookup("gpt-4.1")
	if k := KeepAliveFor(o); k != (KeepAlive{}) {
		t.Errorf("openai: %+v, want no pings", k)
	}
	k := KeepAliveFor(a)
	for _, c := range []struct {
		gap  time.Duration
		want int
	}{{time.Minute, 0}, {270 * time.Second, 0}, {271 * time.Second, 1}, {6 * time.Minute, 1}, {540 * time.Second, 1}, {10 * time.Minute, 2}, {5 * time.Hour, 11}} {
		if got := k.Pings(c.gap); got != c.want {
			t.Errorf("gap %s: %d pings, want %d", c.gap, got, c.want)
		}
	}
	if (KeepAlive{}).Pings(time.Hour) != 0 {
		t.Error("the zero policy pings")
	}
}

// KeepAliveForRequest bounds the pings by what the request would lose: all
// of a 5-minute prefix (11 pings), nothing once a 1-hour entry keeps all
// but a short tail, nothing without a breakpoint or under the minimum.
func TestKeepAliveForRequest(t *testing.T) {
	p, _ := Lookup("claude-sonnet-4-5")
	big := Block{Key: 1, Tokens: 20000}
	tail := Block{Key: 2, Tokens: 500}
	tests := []struct {
		name string
		r    Request
		want int
	}{
		{"5-minute prefix", Request{Blocks: []Block{big, marked(tail, TTL5m)}}, 11},
		{"1-hour entry before a short tail", Request{Blocks: []Block{marked(big, TTL1h), marked(tail, TTL5m)}}, 0},
		{"1-hour entry before a long tail", Request{Blocks: []Block{marked(tail, TTL1h), marked(big, TTL5m)}}, 11},
		{"no breakpoint", Request{Blocks: []Block{big, tail}}, 0},
		{"under the minimum", Request{Blocks: []Block{marked(Block{Key: 3, Tokens: 100}, TTL5m)}}, 0},
		{"uncached tail makes pings dearer", Request{Blocks: []Block{marked(big, TTL5m), {Key: 4, Tokens: 2000}}}, 5},
	}
	for _, tt := range tests {
		if got := KeepAliveForRequest(p, tt.r).MaxPings; got != tt.want {
			t.Errorf("%s: %d pings, want %d", tt.name, got, tt.want)
		}
	}
	o, _ := Lookup("gpt-4.1")
	if k := KeepAliveForRequest(o, tests[0].r); k != (KeepAlive{}) {
		t.Errorf("openai: %+v", k)
	}
}

// WithPings inserts copies of the request before a long gap, Interval
// apart, with a one-token answer, and none after the last request; in the
// simulator a ping turns the rewrite after a 6-minute pause into reads.
func TestWithPings(t *testing.T) {
	p, _ := Lookup("claude-sonnet-4-5")
	A := Block{Key: 1, Tokens: 10000}
	B := Block{Key: 2, Tokens: 300}
	s := []Request{
		{Blocks: []Block{marked(A, TTL5m)}, At: t0, Output: 40},
		{Blocks: []Block{A, marked(B, TTL5m)}, At: t0.Add(7 * time.Minute), Output: 40},
	}
	out, ping := WithPings(s, func(r Request) KeepAlive { return KeepAliveForRequest(p, r) })
	if len(out) != 3 || !ping[1] || ping[0] || ping[2] || !out[1].At.Equal(t0.Add(270*time.Second)) || out[1].Output != PingOutput {
		t.Fatalf("pinged session %+v %v", out, ping)
	}
	res := simulateAll(t, NewAnthropic(p.MinCacheableTokens), out)
	if res[1].CacheRead != 10000 || res[2].CacheRead != 10000 || res[2].CacheWrite != 300 {
		t.Errorf("ping reads and keeps A: %+v", res)
	}
	if got, _ := WithPings(s, nil); len(got) != 2 {
		t.Error("nil policy pinged")
	}
}

// The oracle is a lower bound for strategies that ping too: random sessions
// (gaps from seconds to two hours) simulated with pings after every
// request (KeepAliveFor) or as KeepAliveForRequest bounds them, under
// Anthropic and Bedrock, never cost less than the oracle of the session
// without its pings (hand-made traces: a pause followed by reads).
func TestOracleBelowPingingStrategies(t *testing.T) {
	rng := rand.New(rand.NewSource(20261126))
	models := []string{"claude-sonnet-4-5", "claude-haiku-4-5", "claude-3-5-haiku"}
	iters := 400
	if testing.Short() {
		iters = 80
	}
	for it := 0; it < iters; it++ {
		var session []Request
		for _, r := range genSession(rng) {
			// The simulators reject a request for its breakpoints alone
			// (order, count), whatever the cache holds: keep the valid ones.
			if _, err := NewAnthropic(0).Simulate(r); err == nil {
				session = append(session, r)
			}
		}
		for _, m := range models {
			p, _ := Lookup(m)
			bound := p.Cost(Sum(Oracle(p, session)))
			for name, policy := range map[string]func(Request) KeepAlive{
				"always":      func(Request) KeepAlive { return KeepAliveFor(p) },
				"per request": func(r Request) KeepAlive { return KeepAliveForRequest(p, r) },
				"every minute": func(Request) KeepAlive {
					return KeepAlive{Interval: time.Minute, MaxPings: 200}
				},
			} {
				for _, sim := range []Simulator{NewAnthropic(p.MinCacheableTokens), NewBedrock(p.MinCacheableTokens)} {
					pinged, _ := WithPings(session, policy)
					if c := p.Cost(Sum(simulateAll(t, sim, pinged))); c < bound-1e-12 {
						t.Fatalf("iteration %d, %s/%s, pings %s: $%.9f below the oracle $%.9f", it, m, sim.Name(), name, c, bound)
					}
				}
			}
		}
	}
}

// A hand-made trace the oracle without pings fails: a 1-hour entry pinged
// once at 59 minutes is read 100 and 101 minutes after its write (2 + 0.1 +
// 0.1 + 0.1 = 2.3× its input price), where an oracle that lets no chain
// span more than an hour pays base, write, read (1 + 1.25 + 0.1 = 2.35×).
func TestOracleBelowHourlyPing(t *testing.T) {
	p, _ := Lookup("claude-sonnet-4-5")
	A := marked(Block{Key: 1, Tokens: 10000}, TTL1h)
	s := []Request{{Blocks: []Block{A}, At: t0}, {Blocks: []Block{A}, At: t0.Add(100 * time.Minute)}, {Blocks: []Block{A}, At: t0.Add(101 * time.Minute)}}
	pinged, ping := WithPings(s, func(Request) KeepAlive { return KeepAlive{Interval: 59 * time.Minute, MaxPings: 1} })
	if len(pinged) != 4 || !ping[1] {
		t.Fatalf("pings %v", ping)
	}
	if c, o := p.Cost(Sum(simulateAll(t, NewAnthropic(p.MinCacheableTokens), pinged))), p.Cost(Sum(Oracle(p, s))); c < o-1e-12 {
		t.Errorf("pinged session $%.6f below the oracle $%.6f", c, o)
	}
}

// simulateAll runs trace through sim, failing the test on a rejected
// request.
func simulateAll(t *testing.T, sim Simulator, trace []Request) []Result {
	t.Helper()
	out := make([]Result, 0, len(trace))
	for i, r := range trace {
		res, err := sim.Simulate(r)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		out = append(out, res)
	}
	return out
}
