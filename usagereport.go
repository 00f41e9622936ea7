package strata

import (
	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/llm"
)

// UsageReport is what a session can say about its context and cost, for a
// client's usage display (ACP's usage_update: docs/kiro.md, "ACP updates"). A
// zero field is one strata does not know; it never fills in a guess.
type UsageReport struct {
	// Context is the tokens the conversation holds after the loop's last
	// model call: that call's prompt tokens (input, cache read and cache
	// write) plus its output; a resumed or branched session starts from
	// its last stored call. 0 before any model call. A keep-alive ping
	// does not change it: it re-sends the same request.
	Context int64
	// Window is the model's context window in tokens, as the loop's
	// agent.Config.ContextWindow; 0 = unknown.
	Window int64
	// CostUSD is the cumulative cost in USD of every token in
	// Session.Usage (turns, compaction's tl;dr requests and keep-alive
	// pings), priced from cachesim's table (cachesim.Lookup, Price.Cost).
	// Valid only when Priced.
	CostUSD float64
	// Priced reports whether strata could price every token of
	// Session.Usage: the model has a price, and every cache write's TTL
	// is known (see account.call). False means the cost is unknown, not
	// zero.
	Priced bool
}

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

// costResult is u as a cachesim result with w1h of its writes at the
// 1-hour TTL.
func costResult(u llm.Usage, w1h int64) cachesim.Result {
	return cachesim.Result{Input: u.Input, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite,
		CacheWrite5m: u.CacheWrite - w1h, CacheWrite1h: w1h, Output: u.Output, Prompt: u.PromptTokens()}
}

// UsageReport returns the session's context size, its model's context
// window and its cumulative cost, as far as strata knows them. The cost
// covers Session.Usage: the calls the keeper saw (the loop's requests and
// the pings, each priced at the model it went to) plus the rest —
// compaction's tl;dr requests and the stored usage a resumed session
// starts from — priced at the workspace's model, the one those calls use
// (a resumed session is assumed to have stored calls of the same model),
// when that rest holds no cache write of unknown TTL.
func (s *Session) UsageReport() UsageReport {
	if s.keep == nil {
		return UsageReport{Window: modelContextWindow(s.ws.prov.model)}
	}
	total := s.Usage()
	// The keeper's model is the loop's, set under its lock: an agent swap
	// may change the workspace's while a ping's update reads it.
	s.keep.mu.Lock()
	a, model := s.keep.acct, s.keep.model
	s.keep.mu.Unlock()
	r := UsageReport{Window: modelContextWindow(model), Context: a.context}
	if a.unpriced {
		return r
	}
	rest := llm.Usage{Input: total.Input - a.priced.Input, CacheRead: total.CacheRead - a.priced.CacheRead,
		CacheWrite: total.CacheWrite - a.priced.CacheWrite, Output: total.Output - a.priced.Output}
	if rest.Input < 0 || rest.CacheRead < 0 || rest.CacheWrite < 0 || rest.Output < 0 {
		return r // the counts moved between the two reads: no number rather than a wrong one
	}
	r.CostUSD = a.costUSD
	if rest != (llm.Usage{}) {
		// The rest's breakpoints are unknown: its writes are priced only
		// when their TTL does not matter.
		p, ok := cachesim.Lookup(model)
		if !ok || (rest.CacheWrite > 0 && p.CacheWrite1h != 0 && p.CacheWrite1h != p.CacheWrite5m) {
			return UsageReport{Context: r.Context, Window: r.Window}
		}
		r.CostUSD += p.Cost(costResult(rest, 0))
	}
	r.Priced = true
	return r
}
