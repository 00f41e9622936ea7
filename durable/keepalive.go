package durable

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/keepalive"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/session"
)

// Keep-alive pings of a durable session (docs/durable.md, "Keep-alive
// pings"; docs/keepalive.md): the session workflow does what a
// keepalive.Keeper does in process — after each model call that may be
// pinged it arms a workflow timer for the policy's Interval after the
// call started, and when the timer fires with no model call in flight it
// runs PingActivity (the last request with max_tokens 1, through the
// worker's provider), emits the same event.CacheKeepAlive and records it.

// PingActivity is the keep-alive ping's activity type name.
const PingActivity = "strata.Ping"

// PingTimeout bounds a keep-alive ping (one attempt, never retried: a
// failed ping ends its idle stretch's pings, as in process).
const PingTimeout = time.Minute

// KeepAlive is the worker's keep-alive ask for a session
// (strata.Options.KeepAlive), resolved on the worker for what does not
// change between requests: the ask itself (Options.Off and a layout that
// does not count on pings already applied, so a Blueprint without one
// sends none), its MaxPings and Interval, and whether the provider serves
// scripted answers. After each model call the workflow resolves the
// stretch's policy from it with keepalive.Resolve, a pure function of the
// API, model and request.
type KeepAlive struct {
	// MaxPings caps the pings of one idle stretch (0 = the default
	// policy's); Interval times them (0 = the default policy's).
	MaxPings int           `json:"max_pings,omitempty"`
	Interval time.Duration `json:"interval,omitempty"`
	// Offline says the provider serves scripted answers: no pings unless
	// MaxPings and Interval are both set.
	Offline bool `json:"offline,omitempty"`
}

// keepAliveOf is the Blueprint's KeepAlive for the worker's ask o on a loop
// of cfg whose provider is offline or not: nil when no ping can ever be
// sent (not asked, Off, a layout that does not count on pings, an API
// without cache breakpoints).
func keepAliveOf(o keepalive.Options, offline bool, cfg agent.Config) *KeepAlive {
	if !o.Asked() || !prompt.KeepsAliveOf(cfg.Layout) || !cfg.Provider.API().TakesBreakpoints() {
		return nil
	}
	return &KeepAlive{MaxPings: o.MaxPings, Interval: o.Interval, Offline: offline}
}

// KeepAliveCarry is what a session's keep-alive carries over a
// continue-as-new, so that the idle stretch after the run's last prompt
// goes on in the next run: the ping to send, the stretch's policy, when
// the cache was last read and the pings already sent.
type KeepAliveCarry struct {
	Ping   *llm.Request       `json:"ping"`
	Policy cachesim.KeepAlive `json:"policy"`
	Touch  time.Time          `json:"touch"`
	Pings  int                `json:"pings,omitempty"`
}

// PingInput is the ping activity's input: the request to send, already
// with max_tokens 1 (keepalive.PingRequest).
type PingInput struct {
	Spec    Spec         `json:"spec"`
	Request *llm.Request `json:"request"`
}

// PingOutput is the ping activity's result: the ping's usage.
type PingOutput struct {
	Usage llm.Usage `json:"usage"`
}

// keeper is the session workflow's keep-alive state (workflow code:
// workflow time only). A nil keeper sends no pings.
type keeper struct {
	ask      KeepAlive
	api      llm.API
	model    string
	pol      cachesim.KeepAlive // the policy of the stretch after the last request
	ping     *llm.Request       // the ping of the last request that succeeded, when it may be pinged
	touch    time.Time          // start of the last request or ping that read the cache
	pings    int                // pings of the current idle stretch
	gen      int                // bumped by every model call: a timer armed before it does nothing
	inflight int                // model calls in flight
	pinging  bool               // a ping (and its record) in flight
	recErr   error              // a ping the store could not hold: the next prompt reports it
}

// newKeeper returns the keeper of a session whose blueprint is bp and whose
// previous run carried c (nil: none), or nil when bp asks for no pings.
func newKeeper(bp Blueprint, c *KeepAliveCarry) *keeper {
	if bp.KeepAlive == nil {
		return nil
	}
	k := &keeper{ask: *bp.KeepAlive, api: bp.API, model: bp.Model}
	if c != nil {
		k.ping, k.pol, k.touch, k.pings = c.Ping, c.Policy, c.Touch, c.Pings
	}
	return k
}

// sending notes a model call starting: a new idle stretch.
func (k *keeper) sending() {
	if k == nil {
		return
	}
	k.inflight++
	k.gen++
	k.pings = 0
}

// sent notes the end of the model call of req that started at start: a
// call that succeeded becomes the one pinged, under the policy for the
// stretch after it (keepalive.Resolve, as keepalive.Keeper does); a failed
// one may not have reached the cache, so the previous request and its
// time stay.
func (k *keeper) sent(req *llm.Request, start time.Time, ok bool) {
	if k == nil {
		return
	}
	k.inflight--
	if !ok {
		return
	}
	o := keepalive.Options{On: true, MaxPings: k.ask.MaxPings, Interval: k.ask.Interval}
	k.pol = keepalive.Resolve(o, true, k.ask.Offline, k.api, k.model, req)
	k.ping = nil
	if keepalive.Pingable(k.pol, req) {
		k.ping = keepalive.PingRequest(req)
	}
	if start.After(k.touch) {
		k.touch = start
	}
}

// armable reports whether a ping may be armed: none in flight, no model
// call in flight, a request to ping and pings left in the stretch.
func (k *keeper) armable() bool {
	return !k.pinging && k.inflight == 0 && k.ping != nil && k.pings < k.pol.MaxPings
}

// carry is what the next run continues the stretch from (nil: nothing
// left to ping).
func (k *keeper) carry() *KeepAliveCarry {
	if k == nil || k.ping == nil || k.pings >= k.pol.MaxPings {
		return nil
	}
	return &KeepAliveCarry{Ping: k.ping, Policy: k.pol, Touch: k.touch, Pings: k.pings}
}

// keepAlive is the session's pinger, a coroutine of the workflow run: it
// waits until a ping may be armed, then for the policy's Interval after
// the last cache read (a workflow timer, cancelled when a model call
// starts or the session ends), then pings; it ends with the session.
func (r *sessionRun) keepAlive(ctx workflow.Context) {
	k := r.keep
	for {
		if err := workflow.Await(ctx, func() bool { return r.ended || k.armable() }); err != nil || r.ended {
			return
		}
		gen := k.gen
		if d := k.touch.Add(k.pol.Interval).Sub(workflow.Now(ctx)); d > 0 {
			moved, err := workflow.AwaitWithTimeout(ctx, d, func() bool { return r.ended || k.gen != gen || k.inflight > 0 })
			if err != nil {
				return
			}
			if moved {
				continue
			}
		}
		r.pingOnce(ctx)
	}
}

// pingOnce sends one ping of the stretch through the ping activity and
// emits and records its event.CacheKeepAlive, as keepalive.Keeper does; a
// failed ping ends the stretch's pings (docs/keepalive.md, rule 8).
func (r *sessionRun) pingOnce(ctx workflow.Context) {
	k := r.keep
	k.pinging = true
	defer func() { k.pinging = false }()
	gen := k.gen
	k.pings++
	n, maxPings := k.pings, k.pol.MaxPings
	start := workflow.Now(ctx)
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: PingTimeout,
		HeartbeatTimeout: min(r.heartbeat(), PingTimeout), RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
	var out PingOutput
	if err := workflow.ExecuteActivity(actx, PingActivity, PingInput{Spec: r.in.Spec, Request: k.ping}).Get(ctx, &out); err != nil {
		if gen == k.gen {
			k.pings = k.pol.MaxPings
		}
		workflow.GetLogger(ctx).Warn("keep-alive ping failed; no more pings until the next request (docs/keepalive.md)",
			"session", r.in.Spec.SessionID, "model", k.model, "ping", n, "err", activityCause(err))
		return
	}
	if start.After(k.touch) {
		k.touch = start
	}
	u := out.Usage
	// Dated when the ping went out, as in process: two pings are never
	// stored with the same time.
	e := event.Event{Kind: event.CacheKeepAlive, Time: start, Usage: &u, Provider: r.bp.Provider, Model: k.model, Ping: n,
		Text: keepalive.PingText(n, maxPings)}
	r.emit(ctx, e)
	if err := r.recordEvents(ctx, []event.Event{r.events[len(r.events)-1]}); err != nil && k.recErr == nil {
		k.recErr = fmt.Errorf("durable: session %s: keep-alive ping %d could not be stored on a worker: %w", r.in.Spec.SessionID, n, err)
	}
}

// takeRecErr returns, once, the error of a ping the store could not hold.
func (k *keeper) takeRecErr() error {
	if k == nil {
		return nil
	}
	err := k.recErr
	k.recErr = nil
	return err
}

// Ping sends a session's keep-alive ping through the worker's provider,
// its answer discarded (no delta callback, as keepalive.Keeper sends it),
// heartbeating while it waits, and returns its usage. A provider error
// fails the activity, never retried.
func (a *Activities) Ping(ctx context.Context, in PingInput) (PingOutput, error) {
	if in.Request == nil {
		return PingOutput{}, temporal.NewNonRetryableApplicationError("durable: keep-alive ping without a request", "input", nil)
	}
	o, release, err := a.workspace(ctx, in.Spec)
	if err != nil {
		return PingOutput{}, err
	}
	defer release()
	stop := heartbeat(ctx, func() any { return nil })
	defer stop()
	resp, err := o.cfg.Provider.Stream(ctx, in.Request, nil)
	if err != nil {
		return PingOutput{}, providerError(err)
	}
	return PingOutput{Usage: resp.Usage}, nil
}

// storedPing reports whether the store already holds session id's ping of
// event e (a retried record whose first attempt stored it): the same
// time, to the store's millisecond. A first attempt does not read the
// store.
func storedPing(ctx context.Context, store session.Store, id string, e event.Event) (bool, error) {
	if activity.IsActivity(ctx) && activity.GetInfo(ctx).Attempt <= 1 {
		return false, nil
	}
	d, err := store.LoadSession(ctx, id)
	if err != nil {
		return false, err
	}
	for _, p := range d.Pings {
		if diff := p.At.Sub(e.Time); diff > -time.Millisecond && diff < time.Millisecond {
			return true, nil
		}
	}
	return false, nil
}
