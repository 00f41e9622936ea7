package cachesim

import (
	"testing"
	"time"
)

// The three ways across a pause, each the cheapest in one hand-made session
// on Claude Sonnet 4.5 (base 1×, 5-minute write 1.25×, 1-hour write 2×,
// read 0.1×), for the content first sent just before a 10-minute pause:
//
//   - ping: the whole prompt (6,000 tokens) is new before the pause; a ping
//     reads it once (0.1×) where a 1-hour write costs 0.75× more;
//   - 1-hour write: 100 new tokens behind 20,000 old ones and read twice
//     after; 0.75× on 100 tokens beats a ping reading 20,100, and losing
//     the read costs 0.9× (sent uncached, then written again);
//   - lost read: the same 100 tokens read only once after the pause; sending
//     them uncached twice costs 0.65× more than write-then-read, less than
//     the 1-hour surcharge.
func TestPauseBoundChoices(t *testing.T) {
	p, _ := Lookup("claude-sonnet-4-5")
	sys := Block{Key: 1, Tokens: 20000}
	A, B, C := Block{Key: 2, Tokens: 100}, Block{Key: 3, Tokens: 10}, Block{Key: 4, Tokens: 10}
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }

	small := Block{Key: 5, Tokens: 5000}
	ping := Oracle(p, []Request{
		{Blocks: []Block{small, A}, At: at(0)},
		{Blocks: []Block{small, A, B}, At: at(10)},
	})
	if ping[0].CacheWrite5m != 5100 || ping[0].CacheRead != 5100 || ping[1].CacheRead != 5100 || ping[1].Input != 10 {
		t.Errorf("ping: %+v", ping)
	}

	long := Oracle(p, []Request{
		{Blocks: []Block{sys}, At: at(0)},
		{Blocks: []Block{sys, A}, At: at(1)},
		{Blocks: []Block{sys, A, B}, At: at(11)},
		{Blocks: []Block{sys, A, B, C}, At: at(12)},
	})
	if long[1].CacheWrite1h != 100 || long[1].CacheWrite5m != 0 || long[1].CacheRead != 20000 || long[2].CacheRead != 20100 {
		t.Errorf("1-hour write: %+v", long)
	}

	lost := Oracle(p, []Request{
		{Blocks: []Block{sys}, At: at(0)},
		{Blocks: []Block{sys, A}, At: at(1)},
		{Blocks: []Block{sys, A}, At: at(11)},
	})
	if lost[1].Input != 100 || lost[1].CacheWrite != 0 || lost[2].Input != 100 || lost[2].CacheRead != 20000 {
		t.Errorf("lost read: %+v", lost)
	}
}

// pacedConversation is an append-only conversation on Anthropic: 4,000
// tokens of tools and system, then per call a reply (a short text block and
// a tool_use) and a tool result, 30 seconds apart, with a 6-minute pause
// after every pauseEvery-th call. mark places the breakpoints of request i
// (blocks, the index of its first new block, whether a pause follows).
func pacedConversation(calls, pauseEvery int, mark func(bs []Block, firstNew int, pauseNext bool)) []Request {
	key := Key(100)
	next := func(tokens int64) Block { key++; return Block{Key: key, Tokens: tokens} }
	history := []Block{next(4000)}
	at := t0
	var out []Request
	for i := 0; i < calls; i++ {
		firstNew := len(history)
		if i > 0 {
			history = append(history, next(40+int64(i%7)*10), next(150+int64(i%5)*40), next(300+int64(i%11)*120))
		}
		bs := append([]Block(nil), history...)
		pauseNext := pauseEvery > 0 && (i+1)%pauseEvery == 0 && i+1 < calls
		mark(bs, firstNew, pauseNext)
		out = append(out, Request{Blocks: bs, At: at})
		at = at.Add(30 * time.Second)
		if pauseNext {
			at = at.Add(6 * time.Minute)
		}
	}
	return out
}

// The pause bound stays below every way a layout can cross the pauses, and
// one of them — a layout that knows where the pauses fall — comes within
// 0.5 % of it, so the bound is close to what a layout can reach:
//
//   - pings: a 5-minute breakpoint at the end, Anthropic's keep-alive;
//   - all 1 hour: a 1-hour breakpoint at the end of every request;
//   - foresight: before a pause a 1-hour breakpoint at the end, elsewhere a
//     5-minute one;
//   - foresight, short: before a pause, a 1-hour breakpoint on the first new
//     block (the reply's short text) and the rest of the request uncached;
//     elsewhere a 5-minute breakpoint at the end;
//   - cachefit-like: 1-hour on the first new block of every request, 5
//     minutes at the end.
func TestPauseBoundReachable(t *testing.T) {
	p, _ := Lookup("claude-sonnet-4-5")
	type strategy struct {
		name  string
		mark  func(bs []Block, firstNew int, pauseNext bool)
		pings bool
	}
	end5m := func(bs []Block, _ int, _ bool) { bs[len(bs)-1] = marked(bs[len(bs)-1], TTL5m) }
	strategies := []strategy{
		{"pings", end5m, true},
		{"all 1 hour", func(bs []Block, _ int, _ bool) { bs[len(bs)-1] = marked(bs[len(bs)-1], TTL1h) }, false},
		{"foresight", func(bs []Block, firstNew int, pauseNext bool) {
			if !pauseNext {
				end5m(bs, firstNew, pauseNext)
				return
			}
			bs[len(bs)-1] = marked(bs[len(bs)-1], TTL1h)
		}, false},
		{"foresight, short", func(bs []Block, firstNew int, pauseNext bool) {
			if !pauseNext || firstNew == 0 {
				end5m(bs, firstNew, pauseNext)
				return
			}
			bs[firstNew-1] = marked(bs[firstNew-1], TTL1h) // read point
			bs[firstNew] = marked(bs[firstNew], TTL1h)
		}, false},
		{"cachefit-like", func(bs []Block, firstNew int, _ bool) {
			if firstNew > 0 && firstNew < len(bs)-1 {
				bs[firstNew-1] = marked(bs[firstNew-1], TTL1h)
				bs[firstNew] = marked(bs[firstNew], TTL1h)
			}
			bs[len(bs)-1] = marked(bs[len(bs)-1], TTL5m)
		}, false},
	}
	for _, every := range []int{3, 5, 10} {
		base := pacedConversation(60, every, func([]Block, int, bool) {})
		bound := p.Cost(Sum(Oracle(p, base)))
		best := -1.0
		for _, s := range strategies {
			session := pacedConversation(60, every, s.mark)
			if s.pings {
				session, _ = WithPings(session, func(r Request) KeepAlive { return KeepAliveForRequest(p, r) })
			}
			c := p.Cost(Sum(simulateAll(t, NewAnthropic(p.MinCacheableTokens), session)))
			t.Logf("pause every %d: %-13s %.4f× the oracle", every, s.name, c/bound)
			if c < bound*(1-1e-12) {
				t.Errorf("pause every %d: %s $%.6f below the oracle $%.6f", every, s.name, c, bound)
			}
			if best < 0 || c < best {
				best = c
			}
		}
		if best > bound*1.005 {
			t.Errorf("pause every %d: the cheapest layout is %.4f× the oracle; the bound should be within 0.5 %% of a reachable layout", every, best/bound)
		}
	}
}
