package durable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/compact"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// The worker's Config callbacks that do I/O, carried into the session
// workflow as activities (docs/durable.md, "How the work is split"): each
// hook not at tool_call (those run in the tool-call activity), Gather, the
// before/after turn callbacks and compaction's tl;dr summariser. The
// workflow's engine calls a proxy of each inside its steps; the proxy
// blocks the prompt's coroutine on the activity, which is deterministic
// because the engine calls its callbacks in a deterministic order.

// Activity type names of the carried callbacks.
const (
	HookActivity      = "strata.Hook"
	GatherActivity    = "strata.Gather"
	TurnActivity      = "strata.Turn"
	SummarizeActivity = "strata.Summarize"
)

// CallbackTimeout bounds one attempt of a hook, Gather or turn-callback
// activity (a kiro shell hook's own timeout is 30 s by default);
// CallbackAttempts is how many attempts a lost one gets: they gather
// context and are run again on every request anyway.
const (
	CallbackTimeout  = 5 * time.Minute
	CallbackAttempts = 3
)

// HookBlueprint is one worker hook the workflow runs through HookActivity:
// its place in the worker's Config.Hooks (Index, checked by Name on the
// worker that runs it), stage, phase and kind. Stateful says the hook has
// an agent.HookState the workflow carries between calls; Events that the
// state is fed the loop's events (agent.EventState).
type HookBlueprint struct {
	Index    int            `json:"index"`
	Name     string         `json:"name"`
	Stage    agent.Stage    `json:"stage"`
	Phase    agent.Phase    `json:"phase"`
	Kind     agent.HookKind `json:"kind"`
	Stateful bool           `json:"stateful,omitempty"`
	Events   bool           `json:"events,omitempty"`
}

// HookInput is HookActivity's input: the payload as the engine built it
// (prompt.Context's Counter left out: it is a function), the hook's state
// as the workflow carries it and, for an agent.EventState, the events
// emitted since the hook's previous call (stream deltas left out).
type HookInput struct {
	Spec    Spec            `json:"spec"`
	Index   int             `json:"index"`
	Name    string          `json:"name"`
	Payload agent.Payload   `json:"payload"`
	State   json.RawMessage `json:"state,omitempty"`
	Events  []event.Event   `json:"events,omitempty"`
}

// HookOutput is HookActivity's result: the payload fields the hook
// changed ("Input", "Request", …, "Context.Files" for a field of the
// context) with their new JSON, its verdict, its error's text and its
// state after the call.
type HookOutput struct {
	Changed map[string]json.RawMessage `json:"changed,omitempty"`
	Deny    bool                       `json:"deny,omitempty"`
	Reason  string                     `json:"reason,omitempty"`
	Err     string                     `json:"err,omitempty"`
	State   json.RawMessage            `json:"state,omitempty"`
}

// GatherInput is GatherActivity's input: the turn's context (Counter left
// out).
type GatherInput struct {
	Spec    Spec           `json:"spec"`
	Context prompt.Context `json:"context"`
}

// GatherOutput is GatherActivity's result: the context fields Gather
// filled ("Context.FileTree", …) and its error's text.
type GatherOutput struct {
	Changed map[string]json.RawMessage `json:"changed,omitempty"`
	Err     string                     `json:"err,omitempty"`
}

// TurnInput is TurnActivity's input: Before for Config.BeforeTurn, else
// After for Config.AfterTurn.
type TurnInput struct {
	Spec   Spec            `json:"spec"`
	Before *agent.TurnInfo `json:"before,omitempty"`
	After  *TurnRecord     `json:"after,omitempty"`
}

// TurnOutput is TurnActivity's result: BeforeTurn's error's text ("" =
// the turn goes on).
type TurnOutput struct {
	Err string `json:"err,omitempty"`
}

// TurnRecord is agent.TurnRecord as JSON: Error is Err's text (Err
// itself is left nil).
type TurnRecord struct {
	agent.TurnRecord
	Error string `json:"error,omitempty"`
}

// SummarizeInput is SummarizeActivity's input: one message text of a
// chunk compaction detaches.
type SummarizeInput struct {
	Spec Spec   `json:"spec"`
	Text string `json:"text"`
}

// SummarizeOutput is SummarizeActivity's result: the tl;dr, the usage of
// its request and the error that left the text in full.
type SummarizeOutput struct {
	TLDR  string    `json:"tldr,omitempty"`
	Usage llm.Usage `json:"usage"`
	Err   string    `json:"err,omitempty"`
}

// deltaDenied is the type of the delta the model-call activity ends its
// deltas with when a stream_response delta guard on the worker cut the
// response off: Name is the guard's name, ID its index, Text its reason.
// The workflow's proxy of that guard denies it, so the engine cuts the
// turn off as in process.
const deltaDenied llm.DeltaType = "strata.delta_denied"

// deltaFailed is the type of a delta the model-call activity puts before a
// delta whose transform or observer hook failed on the worker: ID is the
// hook's index, Text its error. The workflow's proxy of that hook drops
// it and fails with the error, so the engine reports the failure as the
// same Progress event, at the same place, as in process.
const deltaFailed llm.DeltaType = "strata.delta_hook_failed"

// carried is what a driver's proxies share: the coroutine of the
// running prompt, whose context the activities block, and per stateful
// hook how many of the run's events its state has been fed.
type carried struct {
	ctx workflow.Context
	fed map[int]int
}

// carry replaces cfg's I/O callbacks, dropped from the Blueprint, with
// proxies that run the worker's own as activities. The proxies block
// r.carried.ctx, the running prompt's coroutine (promptWith sets it).
func (r *driver) carry(ctx workflow.Context, cfg *agent.Config) {
	if r.carried == nil {
		r.carried = &carried{ctx: ctx, fed: map[int]int{}}
	}
	bp := r.bp
	for _, hb := range bp.Hooks {
		if hb.Phase == agent.PhaseDelta { // the worker ran the delta hooks in the model call
			cfg.Hooks = append(cfg.Hooks, deltaMarker(hb))
			continue
		}
		cfg.Hooks = append(cfg.Hooks, r.hookProxy(hb))
	}
	if bp.Gather {
		cfg.Gather = r.gather
	}
	if bp.BeforeTurn {
		cfg.BeforeTurn = func(_ context.Context, info agent.TurnInfo) error {
			var out TurnOutput
			if err := r.callback(TurnActivity, TurnInput{Spec: r.in.Spec, Before: &info}, &out); err != nil {
				return err
			}
			if out.Err != "" {
				return errors.New(out.Err)
			}
			return nil
		}
	}
	if bp.AfterTurn {
		cfg.AfterTurn = func(_ context.Context, rec agent.TurnRecord) {
			tr := TurnRecord{TurnRecord: rec}
			if rec.Err != nil {
				tr.Error, tr.TurnRecord.Err = rec.Err.Error(), nil
			}
			_ = r.callback(TurnActivity, TurnInput{Spec: r.in.Spec, After: &tr}, nil) // as in process: after_turn returns nothing
		}
	}
	if bp.Summarize && cfg.Compaction != nil {
		p := *cfg.Compaction
		p.Summarize = r.summarize
		cfg.Compaction = &p
	}
}

// callback runs a carried callback's activity on the running prompt's
// coroutine, CallbackAttempts attempts of CallbackTimeout each.
func (r *driver) callback(name string, in, out any) error {
	ctx := r.carried.ctx
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: CallbackTimeout,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: CallbackAttempts}})
	if err := workflow.ExecuteActivity(actx, name, in).Get(ctx, out); err != nil {
		return activityCause(err)
	}
	return nil
}

// hookProxy is the workflow's stand-in for worker hook hb: it sends the
// payload (and the hook's carried state) to HookActivity and copies what
// the hook changed back into the engine's payload.
func (r *driver) hookProxy(hb HookBlueprint) agent.Hook {
	return agent.Hook{Name: hb.Name, Stage: hb.Stage, Phase: hb.Phase, Kind: hb.Kind,
		Func: func(_ context.Context, p *agent.Payload) (agent.Verdict, error) {
			in := HookInput{Spec: r.in.Spec, Index: hb.Index, Name: hb.Name, Payload: *p}
			if p.Context != nil {
				pc := *p.Context
				pc.Counter = nil // a function: the worker counts with its own
				in.Payload.Context = &pc
			}
			if hb.Stateful {
				in.State = r.bp.HookStates[strconv.Itoa(hb.Index)]
			}
			fed := len(r.events)
			if hb.Events {
				for _, e := range r.events[min(r.carried.fed[hb.Index], fed):] {
					if e.Kind != event.MessageUpdate {
						in.Events = append(in.Events, e)
					}
				}
			}
			var out HookOutput
			if err := r.callback(HookActivity, in, &out); err != nil {
				return agent.Verdict{}, err
			}
			if hb.Stateful && out.State != nil {
				if r.bp.HookStates == nil {
					r.bp.HookStates = map[string]json.RawMessage{}
				}
				r.bp.HookStates[strconv.Itoa(hb.Index)] = out.State
			}
			r.carried.fed[hb.Index] = fed
			if err := applyChanged(p, out.Changed); err != nil {
				return agent.Verdict{}, fmt.Errorf("durable: hook %s: %w", hb.Name, err)
			}
			v := agent.Verdict{Deny: out.Deny, Reason: out.Reason}
			if out.Err != "" {
				return v, errors.New(out.Err)
			}
			return v, nil
		}}
}

// deltaMarker is the workflow's stand-in for the stream_response delta
// hook hb, which ran on the worker inside the model call: it answers the
// marker deltas the model call left for hb (deltaDenied: a guard's deny,
// which cuts the response off; deltaFailed: a transform's or observer's
// error, the marker dropped) and passes every other delta as it is.
func deltaMarker(hb HookBlueprint) agent.Hook {
	return agent.Hook{Name: hb.Name, Stage: hb.Stage, Phase: hb.Phase, Kind: hb.Kind,
		Func: func(_ context.Context, p *agent.Payload) (agent.Verdict, error) {
			d := p.Delta
			if d == nil || d.ID != strconv.Itoa(hb.Index) {
				return agent.Verdict{}, nil
			}
			switch d.Type {
			case deltaDenied:
				return agent.Verdict{Deny: true, Reason: d.Text}, nil
			case deltaFailed:
				p.Delta = nil
				return agent.Verdict{}, errors.New(d.Text)
			}
			return agent.Verdict{}, nil
		}}
}

// gather is the workflow's Config.Gather: GatherActivity fills the
// context on a worker.
func (r *driver) gather(_ context.Context, c *prompt.Context) error {
	pc := *c
	pc.Counter = nil
	var out GatherOutput
	if err := r.callback(GatherActivity, GatherInput{Spec: r.in.Spec, Context: pc}, &out); err != nil {
		return err
	}
	if err := applyChanged(&agent.Payload{Context: c}, out.Changed); err != nil {
		return fmt.Errorf("durable: gather: %w", err)
	}
	if out.Err != "" {
		return errors.New(out.Err)
	}
	return nil
}

// summarize is the workflow's tl;dr summariser (compact.Summarizer):
// SummarizeActivity asks the worker's model, retried per provider error
// class as a model call is.
func (r *driver) summarize(_ context.Context, text string) (string, llm.Usage, error) {
	ctx := r.carried.ctx
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: ModelCallTimeout,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: MaxRetryDelay,
			MaximumAttempts: ModelCallAttempts}})
	var out SummarizeOutput
	if err := workflow.ExecuteActivity(actx, SummarizeActivity, SummarizeInput{Spec: r.in.Spec, Text: text}).Get(ctx, &out); err != nil {
		return "", llm.Usage{}, activityCause(err)
	}
	if out.Err != "" {
		return out.TLDR, out.Usage, errors.New(out.Err)
	}
	return out.TLDR, out.Usage, nil
}

// hookBlueprints lists cfg's hooks the workflow runs through proxies: all
// but tool_call's, which run in the tool-call activity.
func hookBlueprints(cfg agent.Config) []HookBlueprint {
	var out []HookBlueprint
	for i, h := range cfg.Hooks {
		if h.Stage == agent.StageToolCall {
			continue
		}
		_, events := h.State.(agent.EventState)
		out = append(out, HookBlueprint{Index: i, Name: h.Name, Stage: h.Stage, Phase: h.Phase, Kind: h.Kind,
			Stateful: h.State != nil, Events: events})
	}
	return out
}

// carriedCompaction says whether the workflow can run cfg's compaction:
// its thresholds travel in the Blueprint, the summariser is an activity;
// only a token counter of its own cannot be carried (a function, called
// for every message: an activity per count would be far too chatty).
func carriedCompaction(p *compact.Policy) bool { return p != nil && p.Counter == nil }
