package durable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.temporal.io/sdk/temporal"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/compact"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/session"
)

// carryState is what the carried callbacks keep on a worker: one lock per
// stateful hook (a hook's state is loaded, used and saved with no other
// session's call in between: one worker serves many sessions from one
// opened workspace) and each opened workspace's hook states as it opened,
// the state a new session's hooks start from.
type carryState struct {
	mu      sync.Mutex
	locks   map[*agent.Hook]*sync.Mutex
	initial map[*opened]map[string]json.RawMessage
}

// forget drops what c keeps of o's hooks (o was closed).
func (c *carryState) forget(o *opened) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.initial, o)
	for i := range o.cfg.Hooks {
		delete(c.locks, &o.cfg.Hooks[i])
	}
}

// initialStates returns the states o's stateful hooks had when o opened,
// saving them on first use (before any hook of o ran: every run goes
// through Hook, which asks first).
func (a *Activities) initialStates(o *opened) (map[string]json.RawMessage, error) {
	c := &a.carry
	c.mu.Lock()
	defer c.mu.Unlock()
	if m, ok := c.initial[o]; ok {
		return m, nil
	}
	m := map[string]json.RawMessage{}
	for i, h := range o.cfg.Hooks {
		if h.State == nil || h.Stage == agent.StageToolCall {
			continue
		}
		b, err := h.State.SaveState()
		if err != nil {
			return nil, fmt.Errorf("durable: hook %s: save its state: %w", h.Name, err)
		}
		m[strconv.Itoa(i)] = b
	}
	if c.initial == nil {
		c.initial = map[*opened]map[string]json.RawMessage{}
	}
	c.initial[o] = m
	return m, nil
}

// hookLock returns the lock of the stateful hook h.
func (a *Activities) hookLock(h *agent.Hook) *sync.Mutex {
	c := &a.carry
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.locks == nil {
		c.locks = map[*agent.Hook]*sync.Mutex{}
	}
	l := c.locks[h]
	if l == nil {
		l = &sync.Mutex{}
		c.locks[h] = l
	}
	return l
}

// Hook runs the worker's hook in.Index (checked by name) on in.Payload:
// with a state, it is loaded first (the session's, or the hook's state
// when the workspace opened), fed in.Events, and returned after the call.
// The hook's own error and verdict are the result, not a failure of the
// activity.
func (a *Activities) Hook(ctx context.Context, in HookInput) (HookOutput, error) {
	o, release, err := a.workspace(ctx, in.Spec)
	if err != nil {
		return HookOutput{}, err
	}
	defer release()
	if in.Index < 0 || in.Index >= len(o.cfg.Hooks) || o.cfg.Hooks[in.Index].Name != in.Name {
		return HookOutput{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"durable: session %s: this worker's workspace %q has no hook %q at index %d: its workers open the workspace differently (agent file, options)",
			in.Spec.SessionID, in.Spec.Dir, in.Name, in.Index), "config", nil)
	}
	initial, err := a.initialStates(o)
	if err != nil {
		return HookOutput{}, temporal.NewNonRetryableApplicationError(err.Error(), "state", err)
	}
	h := &o.cfg.Hooks[in.Index]
	var out HookOutput
	if h.State != nil {
		l := a.hookLock(h)
		l.Lock()
		defer l.Unlock()
		st := in.State
		if st == nil {
			st = initial[strconv.Itoa(in.Index)]
		}
		if err := h.State.LoadState(st); err != nil {
			return HookOutput{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("durable: hook %s: %v", h.Name, err), "state", err)
		}
		if es, ok := h.State.(agent.EventState); ok {
			for _, e := range in.Events {
				es.Observe(e)
			}
		}
	}
	p := in.Payload
	before := payloadFields(&p)
	v, herr := h.Func(ctx, &p)
	out.Changed = changedFields(before, payloadFields(&p))
	out.Deny, out.Reason = v.Deny, v.Reason
	if h.State != nil {
		st, err := h.State.SaveState()
		if err != nil {
			return HookOutput{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("durable: hook %s: save its state: %v", h.Name, err), "state", err)
		}
		out.State = st
	}
	if herr != nil {
		out.Err = herr.Error()
	}
	return out, nil
}

// Gather runs the worker's Config.Gather on in.Context and returns the
// fields it filled.
func (a *Activities) Gather(ctx context.Context, in GatherInput) (GatherOutput, error) {
	o, release, err := a.workspace(ctx, in.Spec)
	if err != nil {
		return GatherOutput{}, err
	}
	defer release()
	if o.cfg.Gather == nil {
		return GatherOutput{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"durable: session %s: this worker's workspace %q gathers no repository context", in.Spec.SessionID, in.Spec.Dir), "config", nil)
	}
	p := agent.Payload{Context: &in.Context}
	before := payloadFields(&p)
	gerr := o.cfg.Gather(ctx, p.Context)
	out := GatherOutput{Changed: changedFields(before, payloadFields(&p))}
	if gerr != nil {
		out.Err = gerr.Error()
	}
	return out, nil
}

// Turn runs the worker's Config.BeforeTurn (in.Before) or AfterTurn
// (in.After); BeforeTurn's error is the result's Err.
func (a *Activities) Turn(ctx context.Context, in TurnInput) (TurnOutput, error) {
	o, release, err := a.workspace(ctx, in.Spec)
	if err != nil {
		return TurnOutput{}, err
	}
	defer release()
	switch {
	case in.Before != nil && o.cfg.BeforeTurn != nil:
		if err := o.cfg.BeforeTurn(ctx, *in.Before); err != nil {
			return TurnOutput{Err: err.Error()}, nil
		}
	case in.After != nil && o.cfg.AfterTurn != nil:
		rec := in.After.TurnRecord
		if in.After.Error != "" {
			rec.Err = errors.New(in.After.Error)
		}
		o.cfg.AfterTurn(ctx, rec)
	}
	return TurnOutput{}, nil
}

// Summarize writes the tl;dr of in.Text with the worker's summariser
// (compact.ProviderSummarizer: the session's provider and model), and
// stores it with the session as an in-process session does
// (session.TLDRStore), so a resumed session finds it. A tl;dr the session
// already stored is returned without a request. Provider errors fail the
// activity, classified for retry as ModelCall's are; an empty answer is
// the result's Err (the text stays in full).
func (a *Activities) Summarize(ctx context.Context, in SummarizeInput) (SummarizeOutput, error) {
	o, release, err := a.workspace(ctx, in.Spec)
	if err != nil {
		return SummarizeOutput{}, err
	}
	defer release()
	if o.cfg.Compaction == nil || o.cfg.Compaction.Summarize == nil {
		return SummarizeOutput{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"durable: session %s: this worker's workspace %q writes no tl;drs (Options.CompactTLDR)", in.Spec.SessionID, in.Spec.Dir), "config", nil)
	}
	store, _ := o.ws.Store().(session.TLDRStore)
	key := session.TLDRKey(in.Text)
	if store != nil {
		stored, err := store.TLDRs(ctx, in.Spec.SessionID)
		if err != nil {
			return SummarizeOutput{}, fmt.Errorf("durable: session %s: read its stored tl;drs: %w", in.Spec.SessionID, err)
		}
		if t, ok := stored[key]; ok && t != "" {
			return SummarizeOutput{TLDR: t}, nil
		}
	}
	text, used, err := o.cfg.Compaction.Summarize(ctx, in.Text)
	if err != nil && !errors.Is(err, compact.ErrEmptyTLDR) {
		return SummarizeOutput{}, providerError(err)
	}
	out := SummarizeOutput{TLDR: text, Usage: used}
	if err != nil {
		out.Err = err.Error()
	}
	if store != nil {
		if serr := store.SaveTLDR(ctx, in.Spec.SessionID, key, text); serr != nil && a.opts.Options.Warn != nil {
			a.opts.Options.Warn(fmt.Sprintf("session %s: the tl;dr of a detached message could not be stored: %v", in.Spec.SessionID, serr))
		}
	}
	return out, nil
}

// deltaHooks are cfg's stream_response delta hooks, with their indices:
// they run on the worker as the stream arrives (runDeltaHooks), never as
// an activity per delta.
func deltaHooks(cfg agent.Config) (hooks []agent.Hook, index []int) {
	for i, h := range cfg.Hooks {
		if h.Stage == agent.StageStreamResponse && h.Phase == agent.PhaseDelta {
			hooks, index = append(hooks, h), append(index, i)
		}
	}
	return hooks, index
}

// runDeltaHooks runs the delta hooks on d, a delta of the request in, as
// the engine's runHooks does,
// in order: a transform may rewrite or filter the delta (nil: later hooks
// do not see it, and no delta is returned), a guard's deny returns the
// deltaDenied marker that makes the workflow's proxy of the guard cut the
// response off, and each failing transform or observer adds a
// deltaFailed marker to failed (sent before the delta).
func runDeltaHooks(ctx context.Context, hooks []agent.Hook, index []int, in ModelCallInput, d llm.Delta) (failed []llm.Delta, out, denied *llm.Delta) {
	turn := in.Turn
	p := &agent.Payload{Stage: agent.StageStreamResponse, Phase: agent.PhaseDelta, CorrelationID: in.CorrelationID, Turn: &turn, Delta: &d}
	for i, h := range hooks {
		if p.Delta == nil {
			return failed, nil, nil
		}
		v, err := h.Func(ctx, p)
		if h.Kind != agent.HookGuard {
			if err != nil {
				failed = append(failed, llm.Delta{Type: deltaFailed, ID: strconv.Itoa(index[i]), Name: h.Name, Text: err.Error()})
			}
			continue
		}
		if err != nil && v.Reason == "" {
			v = agent.Verdict{Deny: true, Reason: err.Error()}
		}
		if v.Deny || err != nil {
			return failed, nil, &llm.Delta{Type: deltaDenied, ID: strconv.Itoa(index[i]), Name: h.Name, Text: v.Reason}
		}
	}
	return failed, p.Delta, nil
}

// payloadFields returns the JSON of each field of p and of its Context
// ("Context.X"), the fields a hook or Gather may change: the worker
// returns the ones that differ after the call. Function and interface
// fields (prompt.Context.Counter) are left out.
func payloadFields(p *agent.Payload) map[string]string {
	m := map[string]string{}
	add := func(prefix string, v reflect.Value) {
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() || f.Type.Kind() == reflect.Func || f.Type.Kind() == reflect.Interface ||
				prefix == "" && (f.Name == "Context" || f.Name == "Stage" || f.Name == "Phase") {
				continue
			}
			b, err := json.Marshal(v.Field(i).Interface())
			if err != nil {
				b = []byte(fmt.Sprintf("unencodable %v", err))
			}
			m[prefix+f.Name] = string(b)
		}
	}
	add("", reflect.ValueOf(p).Elem())
	if p.Context != nil {
		add("Context.", reflect.ValueOf(p.Context).Elem())
	}
	return m
}

// changedFields returns the fields of after whose JSON differs from before.
func changedFields(before, after map[string]string) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	for k, v := range after {
		if before[k] != v {
			if out == nil {
				out = map[string]json.RawMessage{}
			}
			out[k] = json.RawMessage(v)
		}
	}
	return out
}

// applyChanged copies the changed fields into p, in name order: through
// a non-nil pointer field (the engine keeps the pointer: *p.Input is its
// prompt text, *p.Request its request), else by setting the field.
func applyChanged(p *agent.Payload, changed map[string]json.RawMessage) error {
	keys := make([]string, 0, len(changed))
	for k := range changed {
		keys = append(keys, k)
	}
	slices.Sort(keys) // workflow code: never iterate a map into a decision
	for _, k := range keys {
		raw := changed[k]
		var f reflect.Value
		if name, ok := strings.CutPrefix(k, "Context."); ok {
			if p.Context == nil {
				return fmt.Errorf("field %s changed but the payload has no context", k)
			}
			f = reflect.ValueOf(p.Context).Elem().FieldByName(name)
		} else {
			f = reflect.ValueOf(p).Elem().FieldByName(k)
		}
		if !f.IsValid() || !f.CanSet() {
			return fmt.Errorf("the worker changed an unknown payload field %q", k)
		}
		v := reflect.New(f.Type())
		if err := json.Unmarshal(raw, v.Interface()); err != nil {
			return fmt.Errorf("decode the changed field %s: %w", k, err)
		}
		if f.Kind() == reflect.Pointer && !f.IsNil() && !v.Elem().IsNil() {
			f.Elem().Set(v.Elem().Elem())
			continue
		}
		f.Set(v.Elem())
	}
	return nil
}
