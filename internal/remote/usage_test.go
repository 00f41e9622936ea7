package remote

import (
	"testing"

	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// A remote session's usage counts the workers' keep-alive pings in the
// cost, as the in-process status does, and leaves the context at the last
// model call's; the model the events name wins over the seeded one.
func TestUsageCountsPings(t *testing.T) {
	call := llm.Usage{Input: 2040, Output: 7} // no cache write: the events do not say its TTL
	ping := llm.Usage{Input: 3, CacheRead: 2000, Output: 1}
	var s Usage
	s.Seed("anthropic", "claude-haiku-4-5")
	s.Observe(event.Event{Kind: event.ProviderRequest, Provider: "anthropic", Model: "claude-sonnet-4-5"})
	s.Observe(event.Event{Kind: event.ProviderResponse, Usage: &call})
	s.Observe(event.Event{Kind: event.CacheKeepAlive, Usage: &ping, Ping: 1})
	p, ok := cachesim.Lookup("claude-sonnet-4-5")
	if !ok {
		t.Fatal("no price for claude-sonnet-4-5")
	}
	u := call.Add(ping)
	want := p.Cost(cachesim.Result{Input: u.Input, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, CacheWrite5m: u.CacheWrite,
		Output: u.Output, Prompt: u.PromptTokens()})
	r := s.Report()
	if r.Model != "claude-sonnet-4-5" || !r.Priced || r.CostUSD != want {
		t.Errorf("model %q, cost %v (priced %v); want claude-sonnet-4-5 and %v, the call's and the ping's", r.Model, r.CostUSD, r.Priced, want)
	}
	if r.Context != call.PromptTokens()+call.Output || r.Window <= 0 {
		t.Errorf("context %d of %d; want the model call's %d (a ping adds nothing to the conversation) of a known window", r.Context, r.Window, call.PromptTokens()+call.Output)
	}
}

// A cache write whose TTL the events do not give is not priced on a model
// whose 1-hour writes cost more: no number rather than a wrong one.
func TestUsageUnpricedWritesOfUnknownTTL(t *testing.T) {
	var s Usage
	s.Observe(event.Event{Kind: event.ProviderRequest, Model: "claude-sonnet-4-5"})
	s.Observe(event.Event{Kind: event.ProviderResponse, Usage: &llm.Usage{Input: 10, CacheWrite: 3000, Output: 5}})
	if r := s.Report(); r.Priced {
		t.Errorf("priced %v at $%v; want unpriced", r.Priced, r.CostUSD)
	}
}
