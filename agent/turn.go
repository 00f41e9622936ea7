package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// turn runs one model call and the tool calls it asks for, in the order of
// docs/turn.md, "event order": before_turn → TurnStart → input MessageStart/End → MessageStart →
// MessageUpdate* → MessageEnd → tools → TurnEnd → after_turn.
func (a *Agent) turn(ctx context.Context, corr string, trig event.Trigger, input []llm.Message, res *Result) (*llm.Response, error) {
	id := event.TurnID{LoopID: a.loopID, Index: a.turns}
	info := TurnInfo{ID: id, Trigger: trig, CorrelationID: corr}
	if a.cfg.BeforeTurn != nil {
		if err := a.cfg.BeforeTurn(ctx, info); err != nil {
			err = fmt.Errorf("%w: %w", ErrAborted, err)
			a.emit(event.Event{Kind: event.AgentStopped, CorrelationID: corr, Turn: &id, Text: "[agent stopped: " + err.Error() + "]", Err: err})
			return nil, err
		}
	}
	a.turns++
	res.Turns++
	rec := TurnRecord{TurnInfo: info, Input: input, StartedAt: time.Now()}
	a.emit(event.Event{Kind: event.TurnStart, CorrelationID: corr, Turn: &id, Trigger: trig})
	for i := range input {
		a.emit(event.Event{Kind: event.MessageStart, CorrelationID: corr, Turn: &id, Message: &llm.Message{Role: input[i].Role}})
		a.emit(event.Event{Kind: event.MessageEnd, CorrelationID: corr, Turn: &id, Message: &input[i]})
	}
	resp, settled, err := a.call(ctx, corr, &id)
	if err != nil {
		a.emit(event.Event{Kind: event.TurnEnd, CorrelationID: corr, Turn: &id, Err: err})
		rec.Err, rec.EndedAt = err, time.Now()
		a.afterTurn(ctx, rec)
		return nil, err
	}
	a.history = append(a.history, resp.Message)
	a.usage = a.usage.Add(resp.Usage)
	res.Usage = res.Usage.Add(resp.Usage)
	if calls := resp.Message.ToolUses(); len(calls) > 0 {
		rec.ToolResults = a.runTools(ctx, corr, id, calls, resp.StopReason, settled)
		a.appendUser(rec.ToolResults...)
	}
	a.emit(event.Event{Kind: event.TurnEnd, CorrelationID: corr, Turn: &id, Usage: &resp.Usage, StopReason: resp.StopReason})
	rec.Output, rec.Usage, rec.StopReason, rec.EndedAt = resp.Message, resp.Usage, resp.StopReason, time.Now()
	a.afterTurn(ctx, rec)
	return resp, nil
}

// compact detaches every chunk Config.Compaction allows, oldest first, and
// emits a Compaction event for each (after the turn's input messages,
// before the model call: docs/turn.md, rule 16). A nil id (warming a
// restored layout) emits nothing.
func (a *Agent) compact(corr string, id *event.TurnID) {
	p := a.cfg.Compaction
	if p == nil {
		return
	}
	for {
		c, ok := p.Next(a.history[a.detached:], a.detached)
		if !ok {
			return
		}
		a.chunks = append(a.chunks, c)
		a.detached = c.Last + 1
		if id != nil {
			a.emit(event.Event{Kind: event.Compaction, CorrelationID: corr, Turn: id,
				Text: fmt.Sprintf("detached messages %d–%d (%d tokens) into conversation history chunk %d", c.First+1, c.Last+1, c.Tokens, len(a.chunks))})
		}
	}
}

// context returns this turn's prompt.Context: the template with the model,
// output cap, wire API, tools, the live history and the detached chunks as
// the summary.
func (a *Agent) context(now time.Time) prompt.Context {
	pc := a.cfg.Context
	pc.Model, pc.MaxTokens, pc.Tools, pc.History = a.cfg.Model, a.cfg.Params.MaxTokens, a.toolSpecs(), a.history[a.detached:]
	pc.API = a.cfg.Provider.API()
	if !now.IsZero() {
		pc.Now = now.UnixMilli()
	}
	if len(a.chunks) > 0 {
		parts := []string{}
		if pc.Summary != "" {
			parts = append(parts, pc.Summary)
		}
		for _, c := range a.chunks {
			parts = append(parts, c.Text)
		}
		pc.Summary = strings.Join(parts, "\n\n")
	}
	return pc
}

// warmLayout replays the layout over the requests a restored loop already
// sent (every history prefix ending in a user message that the model then
// answered), so a stateful layout's next request is byte-identical to the
// one the uninterrupted loop would send (a resumed session keeps its cached
// prefix). Compaction is replayed the same way. Nothing is emitted.
func (a *Agent) warmLayout() error {
	full := a.history
	defer func() { a.history = full }()
	for j := 0; j+1 < len(full); j++ {
		if full[j].Role != llm.RoleUser || full[j+1].Role != llm.RoleAssistant {
			continue
		}
		a.history = full[:j+1]
		a.compact("", nil)
		pc := a.context(time.Time{})
		if a.cfg.Gather != nil {
			_ = a.cfg.Gather(context.Background(), &pc) // as in call; nothing is emitted while warming
		}
		if _, _, err := a.cfg.Layout.Assemble(&pc); err != nil {
			return fmt.Errorf("agent: restore loop %s: layout %s cannot lay out the stored history up to message %d: %w",
				a.loopID, a.cfg.Layout.Name(), j, err)
		}
	}
	return nil
}

func (a *Agent) afterTurn(ctx context.Context, rec TurnRecord) {
	if a.cfg.AfterTurn != nil {
		a.cfg.AfterTurn(ctx, rec)
	}
}

// call composes the request, sends it and streams the answer (stages
// COMPOSE_REQUEST, SEND_REQUEST, STREAM_RESPONSE). On success the assistant
// message has been announced with MessageStart … MessageEnd, with repeated
// tool_use ids made unique (dedupeToolUses; settled holds the results of
// the repeats, which must not run); on failure no assistant message exists.
func (a *Agent) call(ctx context.Context, corr string, id *event.TurnID) (resp *llm.Response, settled map[string]string, err error) {
	a.compact(corr, id)
	pc := a.context(a.cfg.Now())
	hook := func(st Stage, ph Phase, p Payload) error {
		p.Stage, p.Phase, p.CorrelationID, p.Turn = st, ph, corr, id
		return a.runHooks(ctx, &p)
	}
	if a.cfg.Gather != nil {
		if err := a.cfg.Gather(ctx, &pc); err != nil {
			a.emit(event.Event{Kind: event.Progress, CorrelationID: corr, Turn: id, Text: fmt.Sprintf("gathering the request context failed: %v", err)})
		}
	}
	if err := hook(StageComposeRequest, PhasePre, Payload{Context: &pc}); err != nil {
		return nil, nil, err
	}
	req, bd, err := a.cfg.Layout.Assemble(&pc)
	if err != nil {
		return nil, nil, fmt.Errorf("compose request (layout %s): %w", a.cfg.Layout.Name(), err)
	}
	a.cfg.Params.Apply(req)
	if err := hook(StageComposeRequest, PhasePost, Payload{Request: req, Breakdown: bd}); err != nil {
		return nil, nil, err
	}
	if err := hook(StageSendRequest, PhasePre, Payload{Request: req}); err != nil {
		return nil, nil, err
	}
	a.emit(event.Event{Kind: event.ProviderRequest, CorrelationID: corr, Turn: id, Provider: a.cfg.Provider.Name(), Model: req.Model})
	started := false
	var hookErr error
	begin := func() {
		if !started {
			started = true
			hookErr = hook(StageSendRequest, PhasePost, Payload{Request: req})
			if hookErr == nil {
				hookErr = hook(StageStreamResponse, PhasePre, Payload{Request: req})
			}
			a.emit(event.Event{Kind: event.MessageStart, CorrelationID: corr, Turn: id, Message: &llm.Message{Role: llm.RoleAssistant}})
		}
	}
	resp, err = a.cfg.Provider.Stream(ctx, req, func(d llm.Delta) {
		begin()
		a.emit(event.Event{Kind: event.MessageUpdate, CorrelationID: corr, Turn: id, Delta: &d})
	})
	if err != nil {
		a.emit(event.Event{Kind: event.ProviderError, CorrelationID: corr, Turn: id, Provider: a.cfg.Provider.Name(), Err: err})
		return nil, nil, err
	}
	begin()
	if hookErr == nil {
		hookErr = hook(StageStreamResponse, PhasePost, Payload{Request: req, Response: resp})
	}
	if hookErr != nil {
		return nil, nil, hookErr
	}
	settled = dedupeToolUses(&resp.Message) // after the transforms: the message as it is kept
	a.emit(event.Event{Kind: event.MessageEnd, CorrelationID: corr, Turn: id, Message: &resp.Message, StopReason: resp.StopReason})
	a.emit(event.Event{Kind: event.ProviderResponse, CorrelationID: corr, Turn: id, Provider: a.cfg.Provider.Name(),
		Model: resp.Model, Usage: &resp.Usage, StopReason: resp.StopReason})
	return resp, settled, nil
}

// toolSpecs are the registered tools the agent may use (authority step 1 also
// decides what the model is offered).
func (a *Agent) toolSpecs() []llm.ToolSpec {
	specs := a.cfg.Tools.Specs()
	if a.cfg.AllowedTool == nil {
		return specs
	}
	out := specs[:0:0]
	for _, s := range specs {
		if a.cfg.AllowedTool(s.Name) {
			out = append(out, s)
		}
	}
	return out
}

// runHooks runs the hooks registered for p's stage and phase, in order. A
// guard's deny (or error) stops at once and returns an error wrapping
// ErrDenied that names the hook and its reason; errors of transforms and
// observers are reported as Progress events and do not stop the loop.
func (a *Agent) runHooks(ctx context.Context, p *Payload) error {
	for _, h := range a.cfg.Hooks {
		if h.Stage != p.Stage || h.Phase != p.Phase {
			continue
		}
		v, err := h.Func(ctx, p)
		if h.Kind == HookGuard {
			if err != nil && v.Reason == "" {
				v = Verdict{Deny: true, Reason: err.Error()}
			}
			if v.Deny || err != nil {
				return fmt.Errorf("%w: %s (%s %s): %s", ErrDenied, h.Name, p.Stage, p.Phase, v.Reason)
			}
			continue
		}
		if err != nil {
			a.emit(event.Event{Kind: event.Progress, CorrelationID: p.CorrelationID, Turn: p.Turn,
				Text: fmt.Sprintf("hook %s (%s %s %s) failed: %v", h.Name, h.Kind, p.Stage, p.Phase, err)})
		}
	}
	return nil
}
