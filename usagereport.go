package strata

import (
	"github.com/strata-agent/strata/internal/providers"
	"github.com/strata-agent/strata/keepalive"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
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
	// is known. False means the cost is unknown, not
	// zero.
	Priced bool
}

// UsageReport returns the session's context size, its model's context
// window and its cumulative cost, as far as strata knows them
// (keepalive.Keeper.Cost: the calls the keeper saw, each priced at the
// model it went to, plus the rest of Session.Usage priced at the loop's
// model when the TTL of its cache writes does not matter).
func (s *Session) UsageReport() UsageReport {
	if s.keep == nil {
		return UsageReport{Window: providers.ContextWindow(s.ws.prov.Model)}
	}
	c := s.keep.Cost(s.Usage())
	return UsageReport{Context: c.Context, Window: providers.ContextWindow(c.Model), CostUSD: c.USD, Priced: c.Priced}
}

// KeepAlive returns what the session's keep-alive pings did so far: the
// policy for the current idle stretch (zero when the session does not
// ping), the pings sent and their summed usage (also counted in Usage). A
// resumed or branched session counts from the pings its store holds
// (session.SessionDetail.Pings), as its Usage counts from the stored turns.
func (s *Session) KeepAlive() keepalive.Stats { return s.keep.Stats() }

// keepAlive makes cfg's provider go through the session's keeper (created
// on first use). Call it after loopConfig, so the sub-agents and the
// compaction summarizer keep the bare provider.
func (s *Session) keepAlive(prov llm.Provider, model string, layout prompt.Layout) llm.Provider {
	if s.keep == nil {
		w := s.ws
		s.keep = keepalive.New(w.opts.KeepAlive, w.prov.ReplayURL() != "", s.bus, func() string { return s.id })
	}
	return s.keep.Wrap(prov, model, layout)
}
