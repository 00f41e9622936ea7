package durable

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/pingtest"
	"github.com/strata-agent/strata/keepalive"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session"
)

var (
	kaPromptUsage = llm.Usage{Input: 40, CacheWrite: 2000, Output: 7}
	kaPingUsage   = llm.Usage{Input: 3, CacheRead: 2000, Output: 1}
)

// pingServer is pingModel on a loopback server, for the real SDK through
// BaseURL (so the workspace is not offline: its model is priced).
func pingServer(t *testing.T, replies ...[]llm.Block) (*model, string) {
	m := pingModel(t, replies...)
	srv, err := replay.NewResponder(m.respond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return m, srv.URL()
}

// pingModel is an Anthropic model whose pings get one token and whose
// other requests get replies in order (a text answer past their end);
// every body is kept.
func pingModel(t *testing.T, replies ...[]llm.Block) *model {
	var mu sync.Mutex
	calls := 0
	return &model{t: t, replies: func(_ int, body string) replay.Response {
		r := replay.Reply{Blocks: []llm.Block{llm.TextBlock("done")}, Usage: kaPromptUsage}
		if pingtest.IsPing(t, body) {
			r = replay.Reply{Blocks: []llm.Block{llm.TextBlock("O")}, Stop: llm.StopMaxTokens, Usage: kaPingUsage}
		} else {
			mu.Lock()
			if calls < len(replies) {
				r.Blocks = replies[calls]
			}
			calls++
			mu.Unlock()
		}
		resp, err := replay.Turn(llm.APIAnthropic, r)
		if err != nil {
			t.Errorf("author reply: %v", err)
		}
		return resp
	}}
}

// pingOptions are the workspace options of the keep-alive comparisons:
// claude-sonnet-4-5 (priced) on the Anthropic wire at url, the cachefit
// layout (it places breakpoints and counts on pings) and instructions
// long enough to be cached, with the keep-alive ask ka.
func pingOptions(dir, url string, store session.Store, ka keepalive.Options) strata.Options {
	return strata.Options{Dir: dir, ProviderName: "anthropic", BaseURL: url, APIKey: "test-key", Model: "claude-sonnet-4-5",
		NoProjectFiles: true, DisableRepoContext: true, DisableMCP: true, DisableAgentHooks: true, Mode: agent.ModeAll,
		Store: store, Layout: "cachefit", Instructions: strings.Repeat("Answer briefly and cite the file you read. ", 200),
		Now: func() time.Time { return testStart }, KeepAlive: ka}
}

// oneTimer is a keepalive.Clock whose one armed timer the test fires.
type oneTimer struct {
	mu  sync.Mutex
	now time.Time
	at  time.Time
	f   func()
}

func (c *oneTimer) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *oneTimer) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at, c.f = c.now.Add(d), f
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		armed := c.f != nil
		c.f = nil
		return armed
	}
}

// fire runs the armed timer at its time, failing the test when none is,
// and returns that time.
func (c *oneTimer) fire(t *testing.T) time.Time {
	t.Helper()
	c.mu.Lock()
	f, at := c.f, c.at
	c.f, c.now = nil, at
	c.mu.Unlock()
	if f == nil {
		t.Fatal("in process: no keep-alive timer armed")
	}
	f()
	return at
}

// after queues a step that runs f once d of workflow time has passed
// since the previous step completed.
func (h *harness) after(d time.Duration, f func()) {
	h.then(func() { h.env.RegisterDelayedCallback(func() { f(); h.next() }, d) })
}

// pingEvents returns the workflow's cache_keepalive events (the events
// query).
func (h *harness) pingEvents() []event.Event {
	h.t.Helper()
	evs, err := h.allEvents()
	if err != nil {
		h.t.Fatalf("events query: %v", err)
	}
	var out []event.Event
	for _, e := range evs {
		if e.Kind == event.CacheKeepAlive {
			out = append(out, e)
		}
	}
	return out
}

// A durable session whose worker asks for pings pings as an in-process
// session does: Interval (4 min 30 s for claude-sonnet-4-5) after the last
// request started, every body byte for byte what the in-process
// keepalive.Keeper sends for the same session; MaxPings bounds a stretch;
// a prompt before the timer fires cancels it and starts a new stretch; the
// pings' events are those the Keeper emits, in the events query and stored
// as the session's pings. The prompts follow each other within 5 minutes,
// so cachefit keeps 5-minute breakpoints (a longer pause may make it keep
// the prefix an hour instead, and not ping: docs/cachefit.md).
func TestKeepAlivePingsMatchInProcess(t *testing.T) {
	const maxPings = 2
	prompts := []string{"first question", "second question", "third question"}
	inProc, url := pingServer(t)
	clk := &oneTimer{now: testStart}
	_, s := openSession(t, pingOptions(t.TempDir(), url, session.NewMemory(), keepalive.Options{MaxPings: maxPings, Clock: clk}),
		strata.SessionOptions{})
	var want []event.Event
	s.Subscribe(func(e event.Event) {
		if e.Kind == event.CacheKeepAlive {
			want = append(want, e)
		}
	})
	prompt := func(text string) {
		if _, err := s.Prompt(t.Context(), text); err != nil {
			t.Fatal(err)
		}
	}
	prompt(prompts[0])
	if at := clk.fire(t); at != testStart.Add(4*time.Minute+30*time.Second) {
		t.Fatalf("in process: ping at %s; want 4m30s after the request", at)
	}
	prompt(prompts[1])
	prompt(prompts[2])
	clk.fire(t)
	clk.fire(t)
	inBodies := inProc.seen()
	if len(inBodies) != 6 || !pingtest.IsPing(t, inBodies[1]) || !strings.Contains(inBodies[0], `"cache_control"`) {
		t.Fatalf("in process: %d requests; want 3 prompts (with breakpoints) and 3 pings", len(inBodies))
	}

	dur, url2 := pingServer(t)
	store := session.NewMemory()
	h := newHarness(t, WorkerOptions{Options: pingOptions(t.TempDir(), url2, store, keepalive.Options{MaxPings: maxPings})})
	count := func(step string, n int) {
		t.Helper()
		if got := len(dur.seen()); got != n {
			t.Errorf("%s: the model saw %d requests; want %d", step, got, n)
		}
	}
	var got []event.Event
	h.prompt(prompts[0])
	h.after(4*time.Minute, func() { count("4 minutes after the first prompt", 1) })
	h.after(50*time.Second, func() { count("4 min 50 s after the first prompt", 2) })
	h.prompt(prompts[1])
	h.after(3*time.Minute, func() { count("3 minutes after the second prompt", 3) })
	h.prompt(prompts[2])
	h.after(17*time.Minute+10*time.Second, func() {
		count("17 minutes after the third prompt (MaxPings 2)", 6)
		got = h.pingEvents()
	})
	h.run(Spec{SessionID: "s1"})

	sameRequests(t, inBodies, dur.seen())
	if len(want) != 3 || len(got) != 3 {
		t.Fatalf("cache_keepalive events: %d in process, %d in the workflow; want 3", len(want), len(got))
	}
	ats := []time.Time{testStart.Add(4*time.Minute + 30*time.Second), testStart.Add(12*time.Minute + 20*time.Second), testStart.Add(16*time.Minute + 50*time.Second)}
	for i, e := range got {
		w := want[i]
		w.Seq, w.Time = e.Seq, e.Time
		if !sameJSON(t, e, w) {
			t.Errorf("ping event %d differs from the in-process Keeper's", i)
		}
		if !e.Time.Equal(ats[i]) {
			t.Errorf("ping %d dated %s; want %s (Interval after the last cache read)", i+1, e.Time, ats[i])
		}
	}
	if got[2].Text != "keep-alive ping 2 of 2" {
		t.Errorf("last ping's text %q", got[2].Text)
	}
	d, err := store.LoadSession(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	pt := d.PingTotals()
	if pt.Count != 3 || pt.Usage != kaPingUsage.WithTotal().Add(kaPingUsage.WithTotal()).Add(kaPingUsage.WithTotal()) {
		t.Errorf("stored pings: %+v; want 3 of %+v", pt, kaPingUsage.WithTotal())
	}
	if len(d.Turns) != 3 {
		t.Errorf("stored %d turns; want 3 (pings are no turns)", len(d.Turns))
	}
	// A retried record (its first attempt stored the pings) stores none twice.
	if err := h.acts.Record(t.Context(), RecordInput{Spec: Spec{SessionID: "s1"}, Events: got}); err != nil {
		t.Fatal(err)
	}
	if d, err = store.LoadSession(t.Context(), "s1"); err != nil || len(d.Pings) != 3 {
		t.Errorf("after recording the pings again the store holds %d (%v); want 3", len(d.Pings), err)
	}
}

// No pings unless the worker asks, as in process: the library's zero
// KeepAlive, Off, and a provider serving scripted answers (offline) with
// only On; offline with MaxPings and Interval both set pings.
func TestKeepAliveOffUnlessAsked(t *testing.T) {
	for _, tt := range []struct {
		name    string
		ka      keepalive.Options
		offline bool
		pings   int
	}{
		{"library default", keepalive.Options{}, false, 0},
		{"off", keepalive.Options{Off: true, MaxPings: 3}, false, 0},
		{"offline, on", keepalive.Options{On: true}, true, 0},
		{"offline, max pings only", keepalive.Options{MaxPings: 3}, true, 0},
		{"offline, max pings and interval", keepalive.Options{MaxPings: 1, Interval: time.Minute}, true, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, url := pingServer(t)
			o := pingOptions(t.TempDir(), url, session.NewMemory(), tt.ka)
			if tt.offline {
				o.BaseURL, o.APIKey, o.Respond = "", "", m.respond
			}
			h := newHarness(t, WorkerOptions{Options: o})
			h.prompt("first question")
			h.after(time.Hour, func() {
				if b := m.seen(); len(b) != 1+tt.pings {
					t.Errorf("an hour after the prompt the model saw %d requests; want the prompt's and %d ping(s)", len(b), tt.pings)
				}
			})
			h.run(Spec{SessionID: "s1"})
		})
	}
}

// A continue-as-new right after a prompt carries the idle stretch: the
// next run pings the last request Interval after it started, and `end`
// stops the pings at once (the workflow does not wait for the next timer).
func TestKeepAliveStretchSurvivesContinueAsNew(t *testing.T) {
	m, url := pingServer(t)
	wo := WorkerOptions{Options: pingOptions(t.TempDir(), url, session.NewMemory(), keepalive.Options{On: true})}
	spec := Spec{SessionID: "s-can", PromptsPerRun: 1}
	h := newHarness(t, wo)
	h.prompt("first question")
	h.keep = true
	h.start(SessionInput{Spec: spec})
	next := h.continued() // a pending keep-alive timer must not hold it
	if k := next.KeepAlive; k == nil || k.Ping == nil || k.Ping.MaxTokens != 1 || !k.Touch.Equal(testStart) || k.Pings != 0 || k.Policy.MaxPings == 0 {
		t.Fatalf("continue-as-new carries keep-alive %+v; want the ping of the prompt's request, its start and policy", k)
	}
	if n := len(m.seen()); n != 1 {
		t.Fatalf("the first run sent %d requests; want the prompt's only", n)
	}

	h2 := newHarness(t, wo)
	h2.after(5*time.Minute, func() {
		b := m.seen()
		if len(b) != 2 || !pingtest.IsPing(t, b[1]) {
			t.Fatalf("5 minutes after the prompt, in the next run, the model saw %d requests; want the prompt's and its ping", len(b))
		}
		if !sameJSON(t, pingtest.WithoutMaxTokens(t, b[1]), pingtest.WithoutMaxTokens(t, b[0])) {
			t.Error("the next run's ping is not the prompt's request with max_tokens 1")
		}
	})
	h2.start(next)
	if !h2.env.IsWorkflowCompleted() || h2.env.GetWorkflowError() != nil {
		t.Fatalf("the second run did not end cleanly: %v", h2.env.GetWorkflowError())
	}
	if n := len(m.seen()); n != 2 {
		t.Errorf("after end the model saw %d requests; want 2 (end stops the pings)", n)
	}
}

// Pings go on while a prompt waits for a person (or a tool runs), as in
// process (docs/keepalive.md, rule 3): a tool call answered 10 minutes
// later gets two pings of the request that asked for it in between, and
// the prompt's turns are stored whole around them.
func TestKeepAlivePingsWhileAnApprovalWaits(t *testing.T) {
	m, url := pingServer(t, []llm.Block{use("toolu_k1", "execute_bash", `{"command":"echo approved","summary":"echo"}`)})
	store := session.NewMemory()
	o := pingOptions(t.TempDir(), url, store, keepalive.Options{MaxPings: 2})
	o.Mode = agent.ModeAsk
	h := newHarness(t, WorkerOptions{Options: o})
	h.prompt("Run it.")
	h.env.RegisterDelayedCallback(func() {
		if n := len(m.seen()); n != 3 {
			t.Errorf("10 minutes into the approval wait the model saw %d requests; want the prompt's and 2 pings", n)
		}
		h.env.UpdateWorkflow(ApproveUpdate, "approve", &testUpdate{t: t, want: true}, Approval{ID: "toolu_k1", Decision: agent.AllowOnce})
	}, 10*time.Minute)
	var pings []event.Event
	h.then(func() { pings = h.pingEvents(); h.next() })
	h.run(Spec{SessionID: "s-wait"})
	b := m.seen()
	if len(b) != 4 || !pingtest.IsPing(t, b[1]) || !pingtest.IsPing(t, b[2]) || pingtest.IsPing(t, b[3]) || !strings.Contains(b[3], "approved") {
		t.Fatalf("the model saw %d requests; want the prompt's, 2 pings, then the tool result's", len(b))
	}
	if !sameJSON(t, pingtest.WithoutMaxTokens(t, b[1]), pingtest.WithoutMaxTokens(t, b[0])) {
		t.Error("the ping is not the request that asked for the tool call")
	}
	if len(h.results) != 1 || h.results[0].Error != nil {
		t.Fatalf("prompt results %+v", h.results)
	}
	d, err := store.LoadSession(t.Context(), "s-wait")
	if err != nil {
		t.Fatal(err)
	}
	if len(pings) != 2 || len(d.Pings) != 2 || len(d.Turns) != 2 {
		t.Errorf("%d ping events, %d stored pings, %d stored turns; want 2, 2 and 2", len(pings), len(d.Pings), len(d.Turns))
	}
}

// noPingStore is a session store whose disk is full when a ping is
// stored.
type noPingStore struct{ session.Store }

func (noPingStore) AddPing(context.Context, string, session.Ping) error {
	return errors.New("disk full")
}

// A ping the worker's store cannot hold is no silent loss: the next
// prompt's result carries the error naming the session and the ping (the
// prompt still runs, as after a turn the store could not hold).
func TestKeepAlivePingNotStoredIsReported(t *testing.T) {
	m, url := pingServer(t)
	h := newHarness(t, WorkerOptions{Options: pingOptions(t.TempDir(), url, noPingStore{session.NewMemory()}, keepalive.Options{MaxPings: 1})})
	h.prompt("first question")
	h.after(30*time.Minute, func() {})
	h.prompt("second question")
	h.run(Spec{SessionID: "s-noping"})
	if n := len(m.seen()); n != 3 {
		t.Fatalf("the model saw %d requests; want 2 prompts and the ping between them", n)
	}
	if len(h.results) != 2 || h.results[0].Error != nil {
		t.Fatalf("prompt results %+v", h.results)
	}
	e := h.results[1].Error
	if e == nil || !strings.Contains(e.Text, "s-noping") || !strings.Contains(e.Text, "keep-alive ping 1") || !strings.Contains(e.Text, "disk full") {
		t.Errorf("the prompt after an unstored ping reports %v; want the session, the ping and the store's error", e)
	}
}
