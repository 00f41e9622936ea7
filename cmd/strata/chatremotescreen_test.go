package main

import (
	"io"
	"testing"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

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
