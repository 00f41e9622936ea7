package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/strata-agent/strata/compact"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// turn runs one model call and the tool calls it asks for, in the order of
// docs/turn.md, "event order": before_turn → TurnStart → input MessageStart/End → MessageStart →
// MessageUpdate* → MessageEnd → tools → TurnEnd → after_turn.
func (a *Agent) turn(ctx context.Context, corr string, trig event.Trigger, input []llm.Message, res *Result) (*llm.Response, error) {
	id := a.nextTurn()
	info := TurnInfo{ID: id, Trigger: trig, CorrelationID: corr}
	if a.cfg.BeforeTurn != nil {
		if err := a.cfg.BeforeTurn(ctx, info); err != nil {
			err = fmt.Errorf("%w: %w", ErrAborted, err)
			a.stopped(corr, &id, err.Error(), err)
			return nil, err
		}
	}
	a.startTurn()
	res.Turns++
	rec := TurnRecord{TurnInfo: info, Input: input, StartedAt: time.Now()}
	start := event.Event{Kind: event.TurnStart, CorrelationID: corr, Turn: &id, Trigger: trig}
	if id.Index == 0 {
		start.PreviousLoopID = a.prev
	}
	a.emit(start)
	for i := range input {
		a.emit(event.Event{Kind: event.MessageStart, CorrelationID: corr, Turn: &id, Message: &llm.Message{Role: input[i].Role}})
		a.emit(event.Event{Kind: event.MessageEnd, CorrelationID: corr, Turn: &id, Message: &input[i]})
	}
	resp, settled, err := a.call(ctx, corr, &id)
	// The tl;dr requests compaction made for this turn count in its usage
	// (and so in the loop's, the result's and the stored turn's), whether
	// or not the model call then succeeded.
	tldr := a.tldr
	a.tldr = llm.Usage{}
	a.mu.Lock() // Usage may be read from another goroutine (a keep-alive ping's observer)
	a.usage = a.usage.Add(tldr)
	a.mu.Unlock()
	res.Usage = res.Usage.Add(tldr)
	if err != nil {
		var u *llm.Usage
		if tldr != (llm.Usage{}) {
			u = &tldr
		}
		a.emit(event.Event{Kind: event.TurnEnd, CorrelationID: corr, Turn: &id, Usage: u, Err: err})
		rec.Err, rec.Usage, rec.EndedAt = err, tldr, time.Now()
		a.afterTurn(ctx, rec)
		return nil, err
	}
	a.history = append(a.history, resp.Message)
	a.mu.Lock()
	a.usage = a.usage.Add(resp.Usage)
	a.mu.Unlock()
	res.Usage = res.Usage.Add(resp.Usage)
	used := resp.Usage.Add(tldr)
	if calls := resp.Message.ToolUses(); len(calls) > 0 {
		st := a.stages(corr, &id)
		st.enter(StageToolCall)
		rec.ToolResults = a.runTools(ctx, corr, id, calls, resp.StopReason, settled)
		st.leave(ctx.Err())
		a.appendUser(rec.ToolResults...)
	}
	a.emit(event.Event{Kind: event.TurnEnd, CorrelationID: corr, Turn: &id, Usage: &used, StopReason: resp.StopReason, ToolResults: rec.ToolResults})
	rec.Output, rec.Usage, rec.StopReason, rec.EndedAt = resp.Message, used, resp.StopReason, time.Now()
	a.afterTurn(ctx, rec)
	return resp, nil
}

// newLoop makes a new user prompt a loop of its own (docs/turn.md, rule 2:
// each agent_loop call of the Rust agent-loop library is a loop, its turns
// indexed from 0): its first turn gets a new loop id continuing the current
// loop (startTurn), unless the current loop has run no turn yet (a new
// agent, a new branch, a prompt that stopped before its first turn), which
// the prompt then uses. A prompt that stops before its first turn leaves
// the loop id as it was.
func (a *Agent) newLoop() { a.fresh = a.turns > 0 }

// nextTurn returns the id of the turn about to start: in a new loop when
// the prompt's first turn starts one (newLoop). startTurn makes it current.
func (a *Agent) nextTurn() event.TurnID {
	if !a.fresh {
		return event.TurnID{LoopID: a.loopID, Index: a.turns}
	}
	if a.next == "" {
		a.next = NewID()
	}
	return event.TurnID{LoopID: a.next, Index: 0}
}

// startTurn makes the turn nextTurn returned the current one, once
// before_turn let it start.
func (a *Agent) startTurn() {
	if a.fresh {
		a.prev, a.loopID, a.turns, a.fresh, a.next = a.loopID, a.next, 0, false, ""
	}
	a.turns++
}

// compact detaches every chunk Config.Compaction allows, oldest first, and
// emits a Compaction event for each (after the turn's input messages,
// before the model call: docs/turn.md, rule 16), carrying the usage of the
// chunk's tl;dr requests, which the turn then counts. A nil id (warming a
// restored layout) emits nothing; tl;dr requests made while warming count
// in the next turn.
func (a *Agent) compact(ctx context.Context, corr string, id *event.TurnID) {
	p := a.cfg.Compaction
	if p == nil {
		return
	}
	for {
		c, ok, err := p.NextContext(ctx, a.history[a.detached:], a.detached)
		if !ok {
			return
		}
		if err != nil && id != nil {
			a.emit(event.Event{Kind: event.Progress, CorrelationID: corr, Turn: id,
				Text: fmt.Sprintf("conversation history chunk %d keeps a full message: %v", len(a.chunks)+1, err)})
		}
		a.tldr = a.tldr.Add(c.Usage)
		a.detach(corr, id, c, "")
	}
}

// detach moves chunk c out of the live history, dated now (Unix ms, for
// prompt.Detached.At; 0 while warming a restored layout, which has no
// clock), and emits its Compaction event (why is appended to the text); a
// nil id emits nothing.
func (a *Agent) detach(corr string, id *event.TurnID, c compact.Chunk, why string) {
	var at int64
	if id != nil {
		at = a.cfg.Now().UnixMilli()
	}
	a.chunkAt = append(a.chunkAt, at)
	a.chunks = append(a.chunks, c)
	a.detached = c.Last + 1
	if id != nil {
		var u *llm.Usage
		if c.Usage != (llm.Usage{}) {
			u = &c.Usage
		}
		a.emit(event.Event{Kind: event.Compaction, CorrelationID: corr, Turn: id, Usage: u,
			Text: fmt.Sprintf("detached messages %d–%d (%d tokens) into conversation history chunk %d%s", c.First+1, c.Last+1, c.Tokens, len(a.chunks), why)})
	}
}

// context returns this turn's prompt.Context: the template with the model,
// output cap, wire API, conversation id (Config.ConversationID), tools, the live
// history, the usage so far and the detached chunks (as Detached and joined
// into the summary).
func (a *Agent) context(now time.Time) prompt.Context {
	pc := a.cfg.Context
	pc.Model, pc.MaxTokens, pc.Tools, pc.History = a.cfg.Model, a.cfg.Params.MaxTokens, a.toolSpecs(), a.history[a.detached:]
	pc.API = a.cfg.Provider.API()
	pc.ConversationID = a.cfg.ConversationID
	if !now.IsZero() {
		pc.Now = now.UnixMilli()
	}
	pc.Usage = a.usage
	if len(a.chunks) > 0 {
		pc.Detached = make([]prompt.Detached, len(a.chunks))
		for i, c := range a.chunks {
			pc.Detached[i] = prompt.Detached{First: c.First, Last: c.Last, At: a.chunkAt[i], Text: c.Text}
		}
		pc.Summary = prompt.JoinSummary(pc.Summary, pc.Detached)
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
		a.compact(context.Background(), "", nil)
		pc := a.context(time.Time{})
		if a.cfg.Gather != nil {
			_ = a.cfg.Gather(context.Background(), &pc) // as in call; nothing is emitted while warming
		}
		if _, _, err := a.assembleWithinWindow("", nil, &pc); err != nil {
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
// COMPOSE_REQUEST, SEND_REQUEST, STREAM_RESPONSE, each bracketed by its
// StagePreFired/StagePostFired events). On success the assistant message has
// been announced with MessageStart … MessageEnd, with repeated tool_use ids
// made unique (dedupeToolUses; settled holds the results of the repeats,
// which must not run); on failure no assistant message exists.
func (a *Agent) call(ctx context.Context, corr string, id *event.TurnID) (resp *llm.Response, settled map[string]string, err error) {
	st := a.stages(corr, id)
	defer func() { st.leave(err) }()
	st.enter(StageComposeRequest)
	req, bd, err := a.composeRequest(ctx, corr, id)
	if err != nil {
		return nil, nil, err
	}
	st.leave(nil)
	resp, err = a.sendAndStream(ctx, st, req, bd)
	if err != nil {
		return nil, nil, err
	}
	settled = dedupeToolUses(&resp.Message) // after the transforms: the message as it is kept
	a.emit(event.Event{Kind: event.MessageEnd, CorrelationID: corr, Turn: id, Message: &resp.Message, StopReason: resp.StopReason})
	a.emit(event.Event{Kind: event.ProviderResponse, CorrelationID: corr, Turn: id, Provider: a.cfg.Provider.Name(),
		Model: resp.Model, Usage: &resp.Usage, StopReason: resp.StopReason})
	return resp, settled, nil
}

// composeRequest is the body of COMPOSE_REQUEST: compaction (Config.Compaction,
// and when the request would not fit the model's context window), the
// layout's assembly between the stage's pre and post hooks, and the request
// knobs. It also returns the layout's Breakdown of the request.
func (a *Agent) composeRequest(ctx context.Context, corr string, id *event.TurnID) (*llm.Request, *prompt.Breakdown, error) {
	a.compact(ctx, corr, id)
	pc := a.context(a.cfg.Now())
	if a.cfg.Gather != nil {
		if err := a.cfg.Gather(ctx, &pc); err != nil {
			a.emit(event.Event{Kind: event.Progress, CorrelationID: corr, Turn: id, Text: fmt.Sprintf("gathering the request context failed: %v", err)})
		}
	}
	p := &Payload{Stage: StageComposeRequest, Phase: PhasePre, CorrelationID: corr, Turn: id, Context: &pc}
	if err := a.runHooks(ctx, p); err != nil {
		return nil, nil, err
	}
	req, bd, err := a.assembleWithinWindow(corr, id, &pc)
	if err != nil {
		return nil, nil, err
	}
	p = &Payload{Stage: StageComposeRequest, Phase: PhasePost, CorrelationID: corr, Turn: id, Request: req, Breakdown: bd}
	if err := a.runHooks(ctx, p); err != nil {
		return nil, nil, err
	}
	return req, bd, nil
}

// sendAndStream is the body of SEND_REQUEST and STREAM_RESPONSE: it hands req
// (whose layout Breakdown is bd, carried by the ProviderRequest event) to
// the provider and streams the answer, each delta through the
// stream_response delta hooks before it is published. SEND_REQUEST ends, and
// STREAM_RESPONSE starts, when the first delta arrives (or the stream ends
// without one); st is left in the stage that failed, if any.
func (a *Agent) sendAndStream(ctx context.Context, st *stageTracker, req *llm.Request, bd *prompt.Breakdown) (*llm.Response, error) {
	corr, id := st.corr, st.id
	hook := func(stage Stage, ph Phase, p Payload) error {
		p.Stage, p.Phase, p.CorrelationID, p.Turn = stage, ph, corr, id
		return a.runHooks(ctx, &p)
	}
	st.enter(StageSendRequest)
	if err := hook(StageSendRequest, PhasePre, Payload{Request: req}); err != nil {
		return nil, err
	}
	a.emit(event.Event{Kind: event.ProviderRequest, CorrelationID: corr, Turn: id, Provider: a.cfg.Provider.Name(), Model: req.Model, Breakdown: bd})
	started := false
	var hookErr error
	begin := func() {
		if !started {
			started = true
			hookErr = hook(StageSendRequest, PhasePost, Payload{Request: req})
			st.leave(hookErr)
			if hookErr == nil {
				st.enter(StageStreamResponse)
				hookErr = hook(StageStreamResponse, PhasePre, Payload{Request: req})
			}
			a.emit(event.Event{Kind: event.MessageStart, CorrelationID: corr, Turn: id, Message: &llm.Message{Role: llm.RoleAssistant}})
		}
	}
	streamCtx, cut := context.WithCancel(ctx)
	defer cut()
	var cutErr error // a stream_response delta guard's deny: the response is cut off
	resp, err := a.cfg.Provider.Stream(streamCtx, req, func(d llm.Delta) {
		begin()
		if cutErr != nil {
			return
		}
		p := &Payload{Stage: StageStreamResponse, Phase: PhaseDelta, CorrelationID: corr, Turn: id, Delta: &d}
		if err := a.runHooks(ctx, p); err != nil {
			cutErr = err
			cut()
			return
		}
		if p.Delta != nil {
			a.emit(event.Event{Kind: event.MessageUpdate, CorrelationID: corr, Turn: id, Delta: p.Delta})
		}
	})
	if cutErr != nil {
		return nil, cutErr
	}
	if err != nil {
		a.emit(event.Event{Kind: event.ProviderError, CorrelationID: corr, Turn: id, Provider: a.cfg.Provider.Name(), Err: err})
		return nil, err
	}
	begin()
	if hookErr == nil {
		hookErr = hook(StageStreamResponse, PhasePost, Payload{Request: req, Response: resp})
	}
	if hookErr != nil {
		return nil, hookErr
	}
	return resp, nil
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
		if p.Phase == PhaseDelta && p.Delta == nil {
			return nil // a transform filtered the delta out
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
