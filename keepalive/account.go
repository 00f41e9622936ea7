package keepalive

import (
	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/llm"
)

// account prices the calls of a session's own loop and its keep-alive
// pings as the keeper sees them (the request with its breakpoints, the
// model it went to, the usage it got), and remembers the last call's
// context size.
type account struct {
	priced   llm.Usage // usage of the calls priced so far
	costUSD  float64   // their cost
	unpriced bool      // a call could not be priced: no price, or writes of unknown TTL
	context  int64     // prompt + output tokens of the loop's last call
}

// call accounts one successful call of req to model over api with usage u;
// ping calls leave the context size alone (a ping re-sends the last
// request). Called with the keeper's mu held.
func (a *account) call(api llm.API, model string, req *llm.Request, u llm.Usage, ping bool) {
	if !ping {
		a.context = u.PromptTokens() + u.Output
	}
	p, ok := cachesim.Lookup(model)
	w1h, known := u.CacheWrite1h, true
	if !api.SplitsCacheWrites() {
		w1h, known = oneHourWrites(p, req.Breakpoints, u.CacheWrite)
	}
	if !ok || !known {
		a.unpriced = true
		return
	}
	a.priced = a.priced.Add(u)
	a.costUSD += p.Cost(costResult(u, w1h))
}

// oneHourWrites is how many of a call's cache writes (writes tokens) were
// written with the 1-hour TTL, for a provider that does not report the
// split (llm.API.SplitsCacheWrites; Bedrock), from its breakpoints: none
// when no breakpoint asks for 1 hour, all when every one does. With both
// TTLs in one request the split is unknown (known false) — unless it does
// not matter: no writes, or a model whose 1-hour writes cost what 5-minute
// ones do (or are not offered).
func oneHourWrites(p cachesim.Price, bps []llm.Breakpoint, writes int64) (w1h int64, known bool) {
	if writes == 0 || p.CacheWrite1h == 0 || p.CacheWrite1h == p.CacheWrite5m {
		return 0, true
	}
	hours := 0
	for _, b := range bps {
		if b.TTL == "1h" {
			hours++
		}
	}
	switch hours {
	case 0:
		return 0, true
	case len(bps):
		return writes, true
	}
	return 0, false
}

// PriceUnknownTTL prices u, usage whose cache writes' TTL is not known
// (the rest of a session's calls; a remote session's, read from its
// events), in USD at model's price in the cachesim table. ok is false —
// no number rather than a wrong one — when the table has no price for
// model, or u has cache writes and model's 1-hour writes cost more than
// its 5-minute ones.
func PriceUnknownTTL(model string, u llm.Usage) (usd float64, ok bool) {
	p, ok := cachesim.Lookup(model)
	if !ok || (u.CacheWrite > 0 && p.CacheWrite1h != 0 && p.CacheWrite1h != p.CacheWrite5m) {
		return 0, false
	}
	return p.Cost(costResult(u, 0)), true
}

// costResult is u as a cachesim result with w1h of its writes at the
// 1-hour TTL.
func costResult(u llm.Usage, w1h int64) cachesim.Result {
	return cachesim.Result{Input: u.Input, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite,
		CacheWrite5m: u.CacheWrite - w1h, CacheWrite1h: w1h, Output: u.Output, Prompt: u.PromptTokens()}
}

// Cost is what a session's model calls cost, as far as the Keeper can
// price them (Keeper.Cost).
type Cost struct {
	// Context is the tokens the conversation holds after the loop's last
	// model call: its prompt tokens plus its output (0 before any call; a
	// ping does not change it).
	Context int64
	// Model is the model of the loop's calls (the last Wrap's).
	Model string
	// USD is the cumulative cost in US dollars, valid only when Priced.
	USD float64
	// Priced reports whether every token could be priced: the model has a
	// price, and every cache write's TTL is known. False means unknown,
	// not zero.
	Priced bool
}

// Cost prices total, a session's usage (strata.Session.Usage): the calls
// the Keeper saw (the loop's requests and the pings, each priced at the
// model it went to) plus the rest — compaction's tl;dr requests and the
// stored usage a resumed session starts from — priced at the loop's model
// when that rest holds no cache write of unknown TTL. A nil Keeper knows
// nothing (the zero Cost).
func (k *Keeper) Cost(total llm.Usage) Cost {
	if k == nil {
		return Cost{}
	}
	// The model is the loop's, set under the lock: an agent swap may change
	// it while a ping's update reads it.
	k.mu.Lock()
	a, model := k.acct, k.model
	k.mu.Unlock()
	c := Cost{Context: a.context, Model: model}
	if a.unpriced {
		return c
	}
	rest := llm.Usage{Input: total.Input - a.priced.Input, CacheRead: total.CacheRead - a.priced.CacheRead,
		CacheWrite: total.CacheWrite - a.priced.CacheWrite, Output: total.Output - a.priced.Output}
	if rest.Input < 0 || rest.CacheRead < 0 || rest.CacheWrite < 0 || rest.Output < 0 {
		return c // the counts moved between the two reads: no number rather than a wrong one
	}
	usd := a.costUSD
	if rest != (llm.Usage{}) {
		// The rest's breakpoints are unknown.
		r, ok := PriceUnknownTTL(model, rest)
		if !ok {
			return c
		}
		usd += r
	}
	c.USD, c.Priced = usd, true
	return c
}
