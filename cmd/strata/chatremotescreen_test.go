package main

import (
	"io"
	"testing"

	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// A remote chat's status bar counts the workers' keep-alive pings in the
// cost, as the in-process bar does, and leaves the context at the last
// model call's.
func TestRemoteStatusCountsPings(t *testing.T) {
	call := llm.Usage{Input: 2040, Output: 7} // no cache write: the events do not say its TTL
	ping := llm.Usage{Input: 3, CacheRead: 2000, Output: 1}
	s := &remoteStatus{model: "claude-sonnet-4-5"}
	s.observe(event.Event{Kind: event.ProviderResponse, Usage: &call})
	s.observe(event.Event{Kind: event.CacheKeepAlive, Usage: &ping, Ping: 1})
	p, ok := cachesim.Lookup("claude-sonnet-4-5")
	if !ok {
		t.Fatal("no price for claude-sonnet-4-5")
	}
	u := call.Add(ping)
	want := p.Cost(cachesim.Result{Input: u.Input, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, CacheWrite5m: u.CacheWrite,
		Output: u.Output, Prompt: u.PromptTokens()})
	in := s.info()
	if !in.Priced || in.CostUSD != want {
		t.Errorf("cost %v (priced %v); want %v, the call's and the ping's", in.CostUSD, in.Priced, want)
	}
	if in.Context != call.PromptTokens()+call.Output {
		t.Errorf("context %d; want the model call's %d (a ping adds nothing to the conversation)", in.Context, call.PromptTokens()+call.Output)
	}
}

// A remote session sums the pings' usage from their events, for the plain
// chat's total (withKeepAlive in process).
func TestRemoteSessionSumsPings(t *testing.T) {
	ping := llm.Usage{Input: 3, CacheRead: 2000, Output: 1}
	rs := &remoteSession{out: newPrinter(io.Discard, "json")}
	rs.show(event.Event{Kind: event.CacheKeepAlive, Usage: &ping, Ping: 1})
	rs.show(event.Event{Kind: event.CacheKeepAlive, Usage: &ping, Ping: 2})
	if want := ping.Add(ping); rs.pings != want {
		t.Errorf("pings %+v; want %+v", rs.pings, want)
	}
}
