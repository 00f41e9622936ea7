package strata_test

import (
	"github.com/strata-agent/strata/keepalive"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/pingtest"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// fakeClock is a keepalive.Clock that moves only when the test
// fires a timer: no test waits minutes, and none depends on timing.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at      time.Time
	f       func()
	stopped bool
	fired   bool
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		armed := !t.stopped && !t.fired
		t.stopped = true
		return armed
	}
}

// armed returns the timers neither stopped nor fired.
func (c *fakeClock) armed() []*fakeTimer {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*fakeTimer
	for _, t := range c.timers {
		if !t.stopped && !t.fired {
			out = append(out, t)
		}
	}
	return out
}

// scheduled returns how many timers were ever armed.
func (c *fakeClock) scheduled() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// fire moves the clock to the one armed timer's time and runs it on the
// calling goroutine (the ping is sent before fire returns). It fails the
// test unless exactly one timer is armed.
func (c *fakeClock) fire(t *testing.T) *fakeTimer {
	t.Helper()
	armed := c.armed()
	if len(armed) != 1 {
		t.Fatalf("%d keep-alive timers armed; want 1", len(armed))
	}
	tm := armed[0]
	c.mu.Lock()
	c.now, tm.fired = tm.at, true
	c.mu.Unlock()
	tm.f()
	return tm
}

// advance moves the clock by d (time spent in a request).
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

const testInterval = 4*time.Minute + 30*time.Second

var (
	promptUsage = llm.Usage{Input: 40, CacheWrite: 2000, Output: 7}
	pingUsage   = llm.Usage{Input: 3, CacheRead: 2000, Output: 1}
)

// isPing reports whether an Anthropic request body asks for one token.
var isPing = pingtest.IsPing

// keepAliveModel answers prompts with text and pings with one token; every
// body is kept.
func keepAliveModel(t *testing.T) *scriptedModel {
	return newScriptedModel(t, func(body string) replay.Reply {
		if isPing(t, body) {
			return replay.Reply{Blocks: []llm.Block{llm.TextBlock("O")}, Stop: llm.StopMaxTokens, Usage: pingUsage}
		}
		return replay.Reply{Blocks: []llm.Block{llm.TextBlock("done")}, Usage: promptUsage}
	})
}

// keepAliveOptions are the options of the tests' workspaces: the default
// agent without project files, and pings on clk (at most maxPings).
func keepAliveOptions(t *testing.T, clk *fakeClock, maxPings int) strata.Options {
	return strata.Options{Dir: t.TempDir(), NoProjectFiles: true, NoBuiltins: true, DisableRepoContext: true,
		Instructions: strings.Repeat("Answer briefly. ", 64),
		KeepAlive:    keepalive.Options{MaxPings: maxPings, Interval: testInterval, Clock: clk}}
}

// keepAliveEvents collects the session's cache_keepalive events.
func keepAliveEvents(s *strata.Session) func() []event.Event {
	var mu sync.Mutex
	var got []event.Event
	s.Subscribe(func(e event.Event) {
		if e.Kind == event.CacheKeepAlive {
			mu.Lock()
			got = append(got, e)
			mu.Unlock()
		}
	})
	return func() []event.Event {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

// withoutMaxTokens returns body's JSON object without max_tokens.
var withoutMaxTokens = pingtest.WithoutMaxTokens

// A ping is the last request the real Anthropic SDK sent, byte for byte in
// every field (system, tools, messages, cache_control breakpoints) but
// max_tokens 1; pings go Interval apart, stop after MaxPings, are reported
// as events, count in Usage and are no part of the conversation or the
// store; the next prompt starts a new idle stretch whose ping repeats the
// new request.
func TestKeepAlivePingRepeatsTheLastRequest(t *testing.T) {
	clk := newFakeClock()
	m := keepAliveModel(t)
	ws, s := openScripted(t, keepAliveOptions(t, clk, 2), m)
	events := keepAliveEvents(s)

	if _, err := s.Prompt(t.Context(), "first question"); err != nil {
		t.Fatal(err)
	}
	loops := []string{s.LoopID()}
	first := m.bodies()[0]
	if !strings.Contains(first, `"cache_control"`) {
		t.Fatalf("the layout placed no breakpoint, so nothing would be pinged; request: %s", first)
	}
	start := clk.Now()
	if tm := clk.fire(t); !tm.at.Equal(start.Add(testInterval)) {
		t.Errorf("first ping at %s; want Interval after the request's start, %s", tm.at, start.Add(testInterval))
	}
	bodies := m.bodies()
	if len(bodies) != 2 || !isPing(t, bodies[1]) {
		t.Fatalf("after the timer fired the server saw %d requests (want the prompt's and one ping)", len(bodies))
	}
	if want, got := withoutMaxTokens(t, first), withoutMaxTokens(t, bodies[1]); !reflect.DeepEqual(want, got) {
		t.Errorf("the ping differs from the last request beyond max_tokens:\nrequest %s\nping    %s", first, bodies[1])
	}
	if isPing(t, first) {
		t.Fatal("the prompt's own request asked for one token")
	}
	pingAt := clk.Now()
	if tm := clk.fire(t); !tm.at.Equal(pingAt.Add(testInterval)) {
		t.Errorf("second ping at %s; want Interval after the first, %s", tm.at, pingAt.Add(testInterval))
	}
	if n := len(m.bodies()); n != 3 {
		t.Fatalf("%d requests after two pings; want 3", n)
	}
	if armed := clk.armed(); len(armed) != 0 {
		t.Errorf("a third ping is armed; MaxPings is 2")
	}

	ev := events()
	if len(ev) != 2 {
		t.Fatalf("%d cache_keepalive events; want 2", len(ev))
	}
	for i, e := range ev {
		if e.Ping != i+1 || e.Usage == nil || *e.Usage != pingUsage.WithTotal() || e.Turn != nil || e.Provider != "anthropic" {
			t.Errorf("event %d: ping %d usage %+v turn %v provider %q; want ping %d, usage %+v, no turn, anthropic",
				i, e.Ping, e.Usage, e.Turn, e.Provider, i+1, pingUsage.WithTotal())
		}
	}
	ka := s.KeepAlive()
	if ka.Pings != 2 || ka.Usage != pingUsage.WithTotal().Add(pingUsage.WithTotal()) {
		t.Errorf("KeepAlive() = %+v; want 2 pings of %+v", ka, pingUsage)
	}
	if want := promptUsage.WithTotal().Add(ka.Usage); s.Usage() != want {
		t.Errorf("Usage() = %+v; want the prompt's and the pings' usage, %+v", s.Usage(), want)
	}
	if h := s.History(); len(h) != 2 {
		t.Errorf("history has %d messages; the pings must not add any", len(h))
	}

	// A prompt starts a new stretch; its ping repeats the new request.
	if _, err := s.Prompt(t.Context(), "second question"); err != nil {
		t.Fatal(err)
	}
	if l := s.LoopID(); l != loops[0] {
		loops = append(loops, l) // each prompt may be a loop of its own
	}
	clk.fire(t)
	bodies = m.bodies()
	if len(bodies) != 5 || !isPing(t, bodies[4]) {
		t.Fatalf("after the second prompt and a ping the server saw %d requests; want 5", len(bodies))
	}
	if want, got := withoutMaxTokens(t, bodies[3]), withoutMaxTokens(t, bodies[4]); !reflect.DeepEqual(want, got) {
		t.Errorf("the new stretch's ping is not the second prompt's request:\nrequest %s\nping    %s", bodies[3], bodies[4])
	}
	if !strings.Contains(bodies[4], "second question") {
		t.Error("the new stretch's ping does not carry the second prompt")
	}
	if ev := events(); len(ev) != 3 || ev[2].Ping != 1 {
		t.Errorf("the new stretch's ping is not numbered 1: %+v", ev)
	}

	hist, err := ws.Store().History(t.Context(), s.LoopID())
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 4 {
		t.Errorf("the store holds %d messages; want the two prompts and answers only", len(hist))
	}
	turns := 0
	for _, l := range loops {
		rec, err := ws.Store().ReadLoop(t.Context(), l)
		if err != nil {
			t.Fatal(err)
		}
		turns += len(rec.Turns)
	}
	if turns != 2 {
		t.Errorf("the store holds %d turns; the pings must not be turns", turns)
	}
}

// No ping goes out while a request is in flight, and a timer armed before
// a request started does nothing even if it fires, during or after that
// request (the race of a timer firing as a prompt starts); the next ping
// is armed once the request ends.
func TestKeepAliveNeverPingsDuringARequest(t *testing.T) {
	clk := newFakeClock()
	arrived, release := make(chan struct{}), make(chan struct{})
	m := newScriptedModel(t, func(body string) replay.Reply {
		if strings.Contains(body, "slow question") && !isPing(t, body) {
			close(arrived)
			<-release
		}
		return replay.Reply{Blocks: []llm.Block{llm.TextBlock("done")}, Usage: promptUsage}
	})
	_, s := openScripted(t, keepAliveOptions(t, clk, 3), m)
	if _, err := s.Prompt(t.Context(), "first question"); err != nil {
		t.Fatal(err)
	}
	stale := clk.armed()
	if len(stale) != 1 {
		t.Fatalf("%d timers armed after the prompt; want 1", len(stale))
	}
	done := make(chan error, 1)
	go func() { _, err := s.Prompt(t.Context(), "slow question"); done <- err }()
	<-arrived
	if len(clk.armed()) != 0 {
		t.Error("a ping is armed while a request is in flight")
	}
	stale[0].f() // the stale timer fires anyway
	if n := len(m.bodies()); n != 2 {
		t.Errorf("the server saw %d requests while the second was in flight; want 2 (no ping)", n)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	stale[0].f() // and again once the request is over: its stretch is gone
	if n := len(m.bodies()); n != 2 {
		t.Errorf("a timer armed before the second request pinged after it (%d requests; want 2)", n)
	}
	clk.fire(t)
	bodies := m.bodies()
	if len(bodies) != 3 || !isPing(t, bodies[2]) || !strings.Contains(bodies[2], "slow question") {
		t.Fatalf("after the second request the ping did not repeat it (%d requests)", len(bodies))
	}
}

// A failed ping is logged and ends the stretch's pings; the session goes
// on, and its next request starts a new stretch.
func TestKeepAliveFailedPingEndsTheStretch(t *testing.T) {
	clk := newFakeClock()
	m := keepAliveModel(t)
	fail := true
	var mu sync.Mutex
	respond := func(r replay.Request) replay.Response {
		mu.Lock()
		f := fail
		mu.Unlock()
		if f && isPing(t, string(r.Body)) {
			return replay.Response{Status: 400, Body: []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"scripted ping failure"}}`)}
		}
		return m.respond(r)
	}
	o := keepAliveOptions(t, clk, 5)
	o.ProviderName, o.Respond = "anthropic", respond
	ws, err := strata.Open(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	s, err := ws.NewSession(t.Context(), strata.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	events := keepAliveEvents(s)
	if _, err := s.Prompt(t.Context(), "first question"); err != nil {
		t.Fatal(err)
	}
	clk.fire(t)
	if armed := clk.armed(); len(armed) != 0 {
		t.Error("another ping is armed after a failed one")
	}
	if ka := s.KeepAlive(); ka.Pings != 0 || ka.Usage != (llm.Usage{}) || len(events()) != 0 {
		t.Errorf("a failed ping was counted: %+v, %d events", ka, len(events()))
	}
	mu.Lock()
	fail = false
	mu.Unlock()
	if _, err := s.Prompt(t.Context(), "second question"); err != nil {
		t.Fatalf("the session failed after a failed ping: %v", err)
	}
	clk.fire(t)
	if ka := s.KeepAlive(); ka.Pings != 1 {
		t.Errorf("the next stretch sent %d pings; want 1", ka.Pings)
	}
}

// Close stops the timer (a timer firing after it sends nothing), ends a
// ping in flight and returns only once the pinging goroutine has.
func TestKeepAliveCloseStopsPings(t *testing.T) {
	clk := newFakeClock()
	pinged := make(chan struct{})
	m := keepAliveModel(t)
	respond := func(r replay.Request) replay.Response {
		if isPing(t, string(r.Body)) {
			close(pinged)
			return replay.Response{StallHeaders: true} // answers only when the client goes away
		}
		return m.respond(r)
	}
	o := keepAliveOptions(t, clk, 3)
	o.ProviderName, o.Respond = "anthropic", respond
	ws, err := strata.Open(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()

	// A session closed while idle: its armed timer is stopped.
	s1, err := ws.NewSession(t.Context(), strata.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s1.Prompt(t.Context(), "first question"); err != nil {
		t.Fatal(err)
	}
	armed := clk.armed()
	if len(armed) != 1 {
		t.Fatalf("%d timers armed; want 1", len(armed))
	}
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	if len(clk.armed()) != 0 {
		t.Error("Close left a ping armed")
	}
	armed[0].f()
	if n := len(m.bodies()); n != 1 {
		t.Errorf("a timer firing after Close sent a request (%d requests)", n)
	}

	// A session closed while a ping waits for its answer.
	s2, err := ws.NewSession(t.Context(), strata.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Prompt(t.Context(), "first question"); err != nil {
		t.Fatal(err)
	}
	fired := make(chan struct{})
	go func() { clk.fire(t); close(fired) }()
	<-pinged
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	<-fired // the stalled ping ended: Close cancelled it (else this hangs)
	if ka := s2.KeepAlive(); ka.Pings != 0 {
		t.Errorf("the cancelled ping was counted: %+v", ka)
	}
}

// Providers with automatic caches (OpenAI, Gemini) are never pinged, not
// even with an explicit policy; neither is a request without breakpoints
// (the flat layout) or one with a thinking budget.
func TestKeepAliveOnlyPingsBreakpointRequests(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		api      llm.API
		layout   string
		params   llm.Params
	}{
		{"openai-chat", "openai-chat", llm.APIOpenAIChat, "", llm.Params{}},
		{"openai-responses", "openai-responses", llm.APIOpenAIResponses, "", llm.Params{}},
		{"gemini", "gemini", llm.APIGemini, "", llm.Params{}},
		{"flat layout", "anthropic", llm.APIAnthropic, "flat", llm.Params{}},
		{"thinking budget", "anthropic", llm.APIAnthropic, "", llm.Params{MaxTokens: 4096, Reasoning: llm.Reasoning{BudgetTokens: 2048}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			var mu sync.Mutex
			n := 0
			o := keepAliveOptions(t, clk, 3)
			o.ProviderName, o.Layout, o.Params = tt.provider, tt.layout, tt.params
			o.Respond = func(r replay.Request) replay.Response {
				mu.Lock()
				n++
				mu.Unlock()
				resp, err := replay.Turn(tt.api, replay.Reply{Blocks: []llm.Block{llm.TextBlock("done")}})
				if err != nil {
					t.Error(err)
				}
				return resp
			}
			ws, err := strata.Open(t.Context(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			s, err := ws.NewSession(t.Context(), strata.SessionOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Prompt(t.Context(), "a question"); err != nil {
				t.Fatal(err)
			}
			if c := clk.scheduled(); c != 0 {
				t.Errorf("%d keep-alive timers armed; want none", c)
			}
			if n != 1 {
				t.Errorf("the server saw %d requests; want 1", n)
			}
		})
	}
}

// The default policy is the bench's: cachesim.KeepAliveFor the model's
// price, lowered per request by cachesim.KeepAliveForRequest, on the
// breakpoint APIs only; a workspace serving Replay or Respond does not
// ping unless told to, Off turns pings off, and a layout that does not ask
// for pings (prompt.KeepsAliveOf) gets none.
func TestKeepAliveDefaultPolicy(t *testing.T) {
	sonnet, ok := cachesim.Lookup("claude-sonnet-4-5")
	if !ok {
		t.Fatal("no price for claude-sonnet-4-5")
	}
	want := cachesim.KeepAliveFor(sonnet)
	if want.Interval != testInterval || want.MaxPings != 11 {
		t.Fatalf("cachesim.KeepAliveFor(sonnet) = %+v; want 4m30s and 11 pings", want)
	}
	for _, tt := range []struct {
		api   llm.API
		model string
		want  cachesim.KeepAlive
	}{
		{llm.APIAnthropic, "claude-sonnet-4-5", want},
		{llm.APIBedrock, "us.anthropic.claude-sonnet-4-5-20250929-v1:0", want},
		{llm.APIOpenAIChat, "claude-sonnet-4-5", cachesim.KeepAlive{}}, // no breakpoints on the wire
		{llm.APIOpenAIChat, "gpt-5", cachesim.KeepAlive{}},
		{llm.APIGemini, "gemini-2.5-pro", cachesim.KeepAlive{}},
		{llm.APIAnthropic, "no-such-model", cachesim.KeepAlive{}},
	} {
		if got := keepalive.Default(tt.api, tt.model, nil); got != tt.want {
			t.Errorf("DefaultKeepAlive(%s, %s) = %+v; want %+v", tt.api, tt.model, got, tt.want)
		}
	}

	// After a request, the bench's per-request bound: a prompt cached at
	// 5 minutes gets the full bound, one a 1-hour entry keeps gets none.
	long := strings.Repeat("stable instructions ", 2000)
	req := &llm.Request{Model: "claude-sonnet-4-5", System: []llm.Block{llm.TextBlock(long)},
		Messages:    []llm.Message{llm.UserText("a question")},
		Breakpoints: []llm.Breakpoint{{Target: llm.BreakSystem}}}
	if got := keepalive.Default(llm.APIAnthropic, "claude-sonnet-4-5", req); got != want {
		t.Errorf("DefaultKeepAlive after a 5-minute prefix = %+v; want %+v", got, want)
	}
	req.Breakpoints[0].TTL = "1h"
	if got := keepalive.Default(llm.APIAnthropic, "claude-sonnet-4-5", req); got != (cachesim.KeepAlive{}) {
		t.Errorf("DefaultKeepAlive after a 1-hour prefix = %+v; want no pings", got)
	}
	req.Breakpoints = nil
	if got := keepalive.Default(llm.APIAnthropic, "claude-sonnet-4-5", req); got != (cachesim.KeepAlive{}) {
		t.Errorf("DefaultKeepAlive without breakpoints = %+v; want no pings", got)
	}

	for _, tt := range []struct {
		name string
		ka   keepalive.Options
		want cachesim.KeepAlive
	}{
		{"default with a scripted provider", keepalive.Options{}, cachesim.KeepAlive{}},
		{"max pings only: the default interval is unknown offline", keepalive.Options{MaxPings: 4}, cachesim.KeepAlive{}},
		{"explicit", keepalive.Options{MaxPings: 4, Interval: time.Minute}, cachesim.KeepAlive{MaxPings: 4, Interval: time.Minute}},
		{"a layout that does not ask for pings", keepalive.Options{MaxPings: 4, Interval: time.Minute}, cachesim.KeepAlive{}},
		{"off", keepalive.Options{Off: true, MaxPings: 4, Interval: time.Minute}, cachesim.KeepAlive{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := keepAliveModel(t)
			o := strata.Options{Dir: t.TempDir(), NoProjectFiles: true, Model: "claude-sonnet-4-5", KeepAlive: tt.ka}
			if strings.HasPrefix(tt.name, "a layout") {
				o.Layout = "kiro"
			}
			_, s := openScripted(t, o, m)
			if got := s.KeepAlive().Policy; got != tt.want {
				t.Errorf("policy %+v; want %+v", got, tt.want)
			}
		})
	}
}

// A ping racing a prompt that starts at the same moment is safe (go test
// -race): whatever the order, every request the server sees is either a
// prompt or a ping that repeats the first prompt's request.
func TestKeepAlivePingRacingAPrompt(t *testing.T) {
	clk := newFakeClock()
	m := keepAliveModel(t)
	_, s := openScripted(t, keepAliveOptions(t, clk, 3), m)
	if _, err := s.Prompt(t.Context(), "first question"); err != nil {
		t.Fatal(err)
	}
	armed := clk.armed()
	if len(armed) != 1 {
		t.Fatalf("%d timers armed; want 1", len(armed))
	}
	var wg sync.WaitGroup
	wg.Go(armed[0].f)
	wg.Go(func() {
		if _, err := s.Prompt(t.Context(), "second question"); err != nil {
			t.Error(err)
		}
	})
	wg.Wait()
	bodies := m.bodies()
	first := withoutMaxTokens(t, bodies[0])
	for i, b := range bodies[1:] {
		if isPing(t, b) && !maps.EqualFunc(first, withoutMaxTokens(t, b), func(a, b any) bool { return reflect.DeepEqual(a, b) }) {
			t.Errorf("request %d is a ping of something else than the first prompt's request: %s", i+1, b)
		}
	}
	if n := len(bodies); n < 2 || n > 3 {
		t.Errorf("%d requests; want the two prompts and at most one ping", n)
	}
	if h := s.History(); len(h) != 4 {
		t.Errorf("history has %d messages; want 4", len(h))
	}
}
