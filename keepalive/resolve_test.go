package keepalive

import (
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/llm"
)

// Resolve, the policy a Keeper and a durable session's workflow share:
// nothing unless asked, for a layout that counts on pings and an API with
// breakpoints; the default bound (capped and retimed by the ask) for a
// priced model; exactly MaxPings and Interval when both are given to an
// offline or unpriced provider; never with Off.
func TestResolve(t *testing.T) {
	sonnet, ok := cachesim.Lookup("claude-sonnet-4-5")
	if !ok {
		t.Fatal("no price for claude-sonnet-4-5")
	}
	def := cachesim.KeepAliveFor(sonnet)
	explicit := Options{MaxPings: 3, Interval: time.Minute}
	for _, c := range []struct {
		name    string
		o       Options
		keeps   bool
		offline bool
		api     llm.API
		model   string
		want    cachesim.KeepAlive
	}{
		{"not asked", Options{}, true, false, llm.APIAnthropic, "claude-sonnet-4-5", cachesim.KeepAlive{}},
		{"on", Options{On: true}, true, false, llm.APIAnthropic, "claude-sonnet-4-5", def},
		{"a cap", Options{MaxPings: 2}, true, false, llm.APIAnthropic, "claude-sonnet-4-5", cachesim.KeepAlive{Interval: def.Interval, MaxPings: 2}},
		{"a cap above the bound", Options{MaxPings: 50}, true, false, llm.APIAnthropic, "claude-sonnet-4-5", def},
		{"a retiming", Options{Interval: time.Minute}, true, false, llm.APIAnthropic, "claude-sonnet-4-5", cachesim.KeepAlive{Interval: time.Minute, MaxPings: def.MaxPings}},
		{"off wins", Options{On: true, Off: true, MaxPings: 2}, true, false, llm.APIAnthropic, "claude-sonnet-4-5", cachesim.KeepAlive{}},
		{"a layout without pings", Options{On: true}, false, false, llm.APIAnthropic, "claude-sonnet-4-5", cachesim.KeepAlive{}},
		{"automatic caches", explicit, true, false, llm.APIOpenAIChat, "gpt-5", cachesim.KeepAlive{}},
		{"offline, on", Options{On: true}, true, true, llm.APIAnthropic, "claude-sonnet-4-5", cachesim.KeepAlive{}},
		{"offline, explicit", explicit, true, true, llm.APIAnthropic, "claude-sonnet-4-5", cachesim.KeepAlive{Interval: time.Minute, MaxPings: 3}},
		{"unpriced, on", Options{On: true}, true, false, llm.APIAnthropic, "no-such-model", cachesim.KeepAlive{}},
		{"unpriced, explicit", explicit, true, false, llm.APIBedrock, "no-such-model", cachesim.KeepAlive{Interval: time.Minute, MaxPings: 3}},
	} {
		if got := Resolve(c.o, c.keeps, c.offline, c.api, c.model, nil); got != c.want {
			t.Errorf("%s: Resolve = %+v; want %+v", c.name, got, c.want)
		}
		if asked := c.o.Asked(); asked != (!c.o.Off && c.o != Options{}) {
			t.Errorf("%s: Asked = %v", c.name, asked)
		}
	}
}

// A request is pinged only with breakpoints and without a thinking budget;
// its ping is a deep copy with max_tokens 1 that later changes to the
// request do not reach.
func TestPingRequest(t *testing.T) {
	pol := cachesim.KeepAlive{Interval: time.Minute, MaxPings: 1}
	req := &llm.Request{Model: "claude-sonnet-4-5", MaxTokens: 4096, System: []llm.Block{llm.TextBlock(strings.Repeat("stable ", 10))},
		Messages: []llm.Message{llm.UserText("a question")}, Breakpoints: []llm.Breakpoint{{Target: llm.BreakSystem}}}
	if !Pingable(pol, req) || Pingable(cachesim.KeepAlive{}, req) || Pingable(pol, nil) {
		t.Error("Pingable: want a request with breakpoints under a policy with pings, and nothing else")
	}
	thinking := *req
	thinking.Reasoning.BudgetTokens = 2048
	noBreak := *req
	noBreak.Breakpoints = nil
	if Pingable(pol, &thinking) || Pingable(pol, &noBreak) {
		t.Error("Pingable: a thinking budget or no breakpoint may not be pinged")
	}
	p := PingRequest(req)
	if p.MaxTokens != 1 || req.MaxTokens != 4096 {
		t.Fatalf("ping max_tokens %d, request %d; want 1 and unchanged", p.MaxTokens, req.MaxTokens)
	}
	req.Messages[0].Content[0].Text = "changed"
	req.Breakpoints[0].TTL = "1h"
	if p.Messages[0].Content[0].Text != "a question" || p.Breakpoints[0].TTL != "" {
		t.Error("the ping shares the request's messages or breakpoints")
	}
	if got := PingText(2, 11); got != "keep-alive ping 2 of 11" {
		t.Errorf("PingText = %q", got)
	}
}
