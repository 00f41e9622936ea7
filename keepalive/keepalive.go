// Package keepalive keeps a session's prompt cache warm while it idles and
// prices what its model calls cost. A Keeper wraps the provider of the
// session's own loop, so it sees every request: after each one it may re-send
// the last request with max_tokens 1 just before the provider's cache entry
// would expire (a keep-alive ping, docs/keepalive.md), and it accounts each
// call's usage at the model's price (cachesim.Lookup) for the session's
// usage report.
package keepalive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/session"
)

// Options configure a session's keep-alive pings (docs/keepalive.md):
// while the session idles — between prompts, or while a tool runs — the
// runtime re-sends the last request its loop sent, unchanged but for
// max_tokens 1, just before the provider's cache entry would expire, so the
// next request reads the cached prefix instead of writing it again. The
// answer is discarded; its usage is reported (an event.CacheKeepAlive
// event), counted in strata.Session.Usage and stored as the session's ping
// (session.Ping), never as a turn or in the conversation.
//
// Pings are billed requests, so a program asks for them: the zero value
// sends none. On (or any of MaxPings, Interval, Clock) asks for them, and
// they are then sent only for layouts that count on them
// (prompt.KeepsAliveOf: cachefit), as `strata bench cache` assumes: after
// each request r, the default policy derives from the provider's
// wire API, the model's price and r (cachesim.KeepAliveForRequest), and no
// pings for a provider serving strata.Options.Replay or Options.Respond (a ping
// would take a scripted answer). The strata CLI asks for them by default
// (--keepalive auto; docs/keepalive.md).
type Options struct {
	// On asks for pings with the default policy.
	On bool
	// Off sends no ping, whatever else is set.
	Off bool
	// MaxPings caps the pings of one idle stretch; 0 = the default
	// policy's (cachesim.KeepAliveForRequest: at most 11 on Anthropic and
	// Bedrock). With a priced model the default bound still applies.
	MaxPings int
	// Interval is how long after the start of the last request (or ping)
	// the next ping goes out; 0 = the default policy's (the cache lifetime
	// less 30 s: 4 min 30 s).
	Interval time.Duration
	// Clock schedules the pings (nil = the real clock); tests pass a fake
	// one so that no test waits minutes.
	Clock Clock
}

// Asked reports whether o asks for pings: On, MaxPings, Interval or Clock
// set, and not Off.
func (o Options) Asked() bool {
	return !o.Off && (o.On || o.MaxPings > 0 || o.Interval > 0 || o.Clock != nil)
}

// Clock is the time source of keep-alive pings, as the time
// package's Now and AfterFunc: AfterFunc calls f once, on a goroutine of its
// own, after d, unless stop is called first; stop reports whether it
// stopped the call.
type Clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// Stats is what a session's keep-alive pings did: the policy in
// force, the pings sent and their summed usage.
type Stats struct {
	Policy cachesim.KeepAlive
	Pings  int
	Usage  llm.Usage
}

// Default is the keep-alive policy for the idle stretch after req
// on a provider speaking api with model: cachesim.KeepAliveForRequest with
// the model's price (cachesim.Lookup) and req's blocks counted as `strata
// bench cache` counts them (token.Estimator), on the wire APIs with
// explicit cache breakpoints (Anthropic, Bedrock); none elsewhere (OpenAI
// and Gemini cache automatically: a ping is not worth its read), for a
// model without a price, or for a request the rule does not ping (no
// breakpoint, a prefix under the model's minimum, or one a 1-hour entry
// keeps). req nil gives the bound before any request
// (cachesim.KeepAliveFor).
func Default(api llm.API, model string, req *llm.Request) cachesim.KeepAlive {
	if !api.TakesBreakpoints() {
		return cachesim.KeepAlive{}
	}
	p, ok := cachesim.Lookup(model)
	if !ok {
		return cachesim.KeepAlive{}
	}
	return keepAliveFor(p, req)
}

// keepAliveFor is Default once the API takes breakpoints and the
// model's price p is known.
func keepAliveFor(p cachesim.Price, req *llm.Request) cachesim.KeepAlive {
	if req == nil {
		return cachesim.KeepAliveFor(p)
	}
	return cachesim.KeepAliveForRequest(p, cachesim.FromRequest(req, nil, time.Time{}, 0))
}

// Keeper is a session's keep-alive pinger and cost account. It wraps the provider of the
// session's own loop (not sub-agents' or the compaction summarizer's, whose
// requests are other prefixes), remembers the last request sent and when,
// and pings from a timer.
type Keeper struct {
	opts    Options
	clock   Clock
	offline bool // the provider serves scripted answers (strata.Options.Replay / Respond)
	bus     *event.Bus
	session func() string   // the session's id, for the log
	ctx     context.Context // cancelled by close: ends an in-flight ping
	cancel  context.CancelFunc
	wg      sync.WaitGroup // the ping in flight, if any

	mu        sync.Mutex
	inner     llm.Provider
	model     string
	keeps     bool               // the layout asks for pings (prompt.KeepsAliveOf)
	policy    cachesim.KeepAlive // for the stretch after last
	last      *llm.Request       // a copy of the last request sent without error
	lastTouch time.Time          // start of the last request or ping that read the cache
	requests  int                // the loop's requests in flight
	pinging   bool
	gen       uint64 // bumped by every request: a timer armed before it does nothing
	pings     int    // pings of the current idle stretch
	stop      func() bool
	closed    bool
	total     int
	usage     llm.Usage
	acct      account // what the loop's requests and the pings cost (account.go)
}

// New returns the Keeper of one session: o is the program's ask (the zero
// Options send no ping), offline says the provider serves scripted answers
// (no pings unless MaxPings and Interval are both set), bus receives an
// event.CacheKeepAlive event per ping, and session names the session in
// the log. Close it when the session ends.
func New(o Options, offline bool, bus *event.Bus, session func() string) *Keeper {
	k := &Keeper{opts: o, clock: o.Clock, offline: offline, bus: bus, session: session}
	if k.clock == nil {
		k.clock = realClock{}
	}
	k.ctx, k.cancel = context.WithCancel(context.Background())
	return k
}

// Wrap makes p (speaking model, for a loop on layout) the provider pings
// go through and returns the provider the loop must use: p, seen by the
// Keeper. A new provider (an agent swap) forgets the last request: its
// prefix is the old agent's.
func (k *Keeper) Wrap(p llm.Provider, model string, layout prompt.Layout) llm.Provider {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.inner, k.model, k.last, k.pings = p, model, nil, 0
	k.keeps = prompt.KeepsAliveOf(layout)
	k.policy = k.resolve(p.API(), model, nil)
	k.disarm()
	return keptProvider{k}
}

// resolve is Resolve for the keeper's options, layout and provider.
func (k *Keeper) resolve(api llm.API, model string, req *llm.Request) cachesim.KeepAlive {
	return Resolve(k.opts, k.keeps, k.offline, api, model, req)
}

// Resolve is the keep-alive policy of o for the idle stretch after req
// (nil: before any request) on a provider speaking api with model, for a
// layout that counts on pings (keeps: prompt.KeepsAliveOf) and a provider
// that serves scripted answers or not (offline): the default (Default),
// capped by MaxPings and timed by Interval when they are set; offline or
// without a price, exactly MaxPings and Interval when both are set. The
// zero policy sends no ping: o does not ask (On, MaxPings, Interval or
// Clock), o.Off, a layout that does not count on pings, or an API without
// cache breakpoints (docs/keepalive.md, rules 1 and 4). It is a pure
// function of its arguments — no clock, no I/O — so a Temporal workflow
// may call it (package durable).
func Resolve(o Options, keeps, offline bool, api llm.API, model string, req *llm.Request) cachesim.KeepAlive {
	if !o.Asked() || !keeps || !api.TakesBreakpoints() {
		return cachesim.KeepAlive{}
	}
	p, priced := cachesim.Lookup(model)
	if offline || !priced {
		if o.MaxPings > 0 && o.Interval > 0 {
			return cachesim.KeepAlive{Interval: o.Interval, MaxPings: o.MaxPings}
		}
		return cachesim.KeepAlive{}
	}
	pol := keepAliveFor(p, req)
	if pol.MaxPings <= 0 {
		return cachesim.KeepAlive{}
	}
	if o.MaxPings > 0 {
		pol.MaxPings = min(pol.MaxPings, o.MaxPings)
	}
	if o.Interval > 0 {
		pol.Interval = o.Interval
	}
	return pol
}

// Pingable reports whether req may be pinged under policy pol: a policy
// with pings, a request with cache breakpoints (a layout that places none
// has no entry to keep), and no thinking budget (Anthropic wants
// max_tokens above budget_tokens, and a ping without thinking would not
// read the messages' entries: docs/keepalive.md, rule 4). Pure, as
// Resolve.
func Pingable(pol cachesim.KeepAlive, req *llm.Request) bool {
	return req != nil && pol.Interval > 0 && pol.MaxPings > 0 &&
		len(req.Breakpoints) > 0 && req.Reasoning.BudgetTokens == 0
}

// PingRequest returns the keep-alive ping of req: a deep copy (later
// changes to the loop's history, blocks or knobs cannot change it) with
// MaxTokens 1 (docs/keepalive.md, rule 2).
func PingRequest(req *llm.Request) *llm.Request {
	c := cloneRequest(req)
	c.MaxTokens = 1
	return c
}

// PingText is the text of ping n of an idle stretch of at most maxPings
// (event.CacheKeepAlive's Text).
func PingText(n, maxPings int) string { return fmt.Sprintf("keep-alive ping %d of %d", n, maxPings) }

// keptProvider is the loop's view of the Keeper: the inner provider, with
// every request seen.
type keptProvider struct{ k *Keeper }

func (p keptProvider) Name() string { return p.k.provider().Name() }
func (p keptProvider) API() llm.API { return p.k.provider().API() }

func (p keptProvider) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	k := p.k
	k.mu.Lock()
	inner := k.inner
	k.requests++
	k.gen++
	k.pings = 0 // a request starts a new idle stretch
	k.disarm()
	start := k.clock.Now()
	k.mu.Unlock()
	resp, err := inner.Stream(ctx, req, onDelta)
	k.mu.Lock()
	k.requests--
	if err == nil {
		// A failed request may not have reached the cache: the previous
		// request and its time stay, so the next ping is not late.
		k.last = cloneRequest(req)
		k.policy = k.resolve(inner.API(), k.model, req)
		k.acct.call(inner.API(), k.model, req, resp.Usage, false)
		if start.After(k.lastTouch) {
			k.lastTouch = start
		}
	}
	k.arm()
	k.mu.Unlock()
	return resp, err
}

func (k *Keeper) provider() llm.Provider {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.inner
}

// pingable reports whether the last request may be pinged (Pingable).
// Called with mu held.
func (k *Keeper) pingable() bool { return Pingable(k.policy, k.last) }

// arm schedules the next ping, Interval after lastTouch, when the session
// is idle and the stretch has pings left. Called with mu held.
func (k *Keeper) arm() {
	k.disarm()
	if k.closed || k.requests > 0 || k.pinging || k.pings >= k.policy.MaxPings || !k.pingable() {
		return
	}
	d := max(k.lastTouch.Add(k.policy.Interval).Sub(k.clock.Now()), 0)
	gen := k.gen
	k.stop = k.clock.AfterFunc(d, func() { k.ping(gen) })
}

// disarm stops the pending timer, if any. Called with mu held.
func (k *Keeper) disarm() {
	if k.stop != nil {
		k.stop()
		k.stop = nil
	}
}

// ping sends one keep-alive ping for the idle stretch gen, unless a request
// started since the timer was armed (gen moved on), one is in flight, the
// stretch has used its pings or the session closed.
func (k *Keeper) ping(gen uint64) {
	k.mu.Lock()
	if k.closed || gen != k.gen || k.requests > 0 || k.pinging || k.pings >= k.policy.MaxPings || !k.pingable() {
		k.mu.Unlock()
		return
	}
	k.stop = nil
	k.pinging = true
	k.pings++
	n, maxPings := k.pings, k.policy.MaxPings
	req := PingRequest(k.last)
	inner, model := k.inner, k.model
	start := k.clock.Now()
	k.wg.Add(1)
	k.mu.Unlock()
	defer k.wg.Done()

	resp, err := inner.Stream(k.ctx, req, nil)

	k.mu.Lock()
	k.pinging = false
	if err != nil {
		if gen == k.gen {
			k.pings = k.policy.MaxPings // a failed ping ends the stretch's pings
		}
		closing := k.closed
		k.mu.Unlock()
		if !closing || !errors.Is(err, context.Canceled) {
			slog.Warn("keep-alive ping failed; no more pings until the next request (docs/keepalive.md)",
				"session", k.session(), "provider", inner.Name(), "model", model, "ping", n, "err", err)
		}
		return
	}
	k.total++
	k.usage = k.usage.Add(resp.Usage)
	k.acct.call(inner.API(), model, req, resp.Usage, true)
	if start.After(k.lastTouch) {
		k.lastTouch = start
	}
	k.arm()
	k.mu.Unlock()
	slog.Debug("keep-alive ping", "session", k.session(), "provider", inner.Name(), "model", model, "ping", n,
		"cache_read", resp.Usage.CacheRead, "cache_write", resp.Usage.CacheWrite, "input", resp.Usage.Input)
	u := resp.Usage
	// Dated by the keep-alive clock, when the ping went out: two pings are
	// never stored with the same time however fast they answer.
	k.bus.Emit(event.Event{Kind: event.CacheKeepAlive, Time: start, Usage: &u, Provider: inner.Name(), Model: model, Ping: n,
		Text: PingText(n, maxPings)})
}

// Close stops the timer, ends an in-flight ping and waits for it.
func (k *Keeper) Close() {
	if k == nil {
		return
	}
	k.mu.Lock()
	k.closed = true
	k.disarm()
	k.mu.Unlock()
	k.cancel()
	k.wg.Wait()
}

// Carry starts the counts from t, the pings a resumed session stored
// before (session.SessionDetail.PingTotals).
func (k *Keeper) Carry(t session.PingTotals) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.total, k.usage = t.Count, t.Usage
}

// CarryContext starts the account's context size (Cost.Context) at
// that of a restored session's last stored model call.
func (k *Keeper) CarryContext(n int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.acct.context = n
}

// Stats returns the policy, pings and usage so far.
func (k *Keeper) Stats() Stats {
	if k == nil {
		return Stats{}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return Stats{Policy: k.policy, Pings: k.total, Usage: k.usage}
}

// cloneRequest copies r deeply enough that later changes to the loop's
// history, blocks or knobs cannot change it.
func cloneRequest(r *llm.Request) *llm.Request {
	c := *r
	c.System = cloneBlocks(r.System)
	c.Messages = make([]llm.Message, len(r.Messages))
	for i, m := range r.Messages {
		m.Content = cloneBlocks(m.Content)
		c.Messages[i] = m
	}
	c.Tools = slices.Clone(r.Tools)
	for i, t := range c.Tools {
		c.Tools[i].InputSchema = bytes.Clone(t.InputSchema)
	}
	c.Stop = slices.Clone(r.Stop)
	c.Breakpoints = slices.Clone(r.Breakpoints)
	if r.Temperature != nil {
		t := *r.Temperature
		c.Temperature = &t
	}
	if r.TopP != nil {
		p := *r.TopP
		c.TopP = &p
	}
	return &c
}

func cloneBlocks(bs []llm.Block) []llm.Block {
	if bs == nil {
		return nil
	}
	out := make([]llm.Block, len(bs))
	for i, b := range bs {
		b.Data = bytes.Clone(b.Data)
		b.Input = bytes.Clone(b.Input)
		b.Content = cloneBlocks(b.Content)
		out[i] = b
	}
	return out
}
