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

// A turn is one model call and the tool calls it asks for, in the order of
// docs/turn.md, "event order": before_turn → TurnStart → input
// MessageStart/End → MessageStart → MessageUpdate* → MessageEnd → tools →
// TurnEnd → after_turn. beginTurn runs it up to the request (StepSend),
// Delta and Responded take the answer, the tool phases (tools.go) run its
// calls and finishTurn ends it.

// beginTurn starts a turn: before_turn, TurnStart, the input messages'
// events, COMPOSE_REQUEST and SEND_REQUEST's pre hooks; it returns the
// StepSend of the composed request.
func (e *Engine) beginTurn(ctx context.Context, s *State) Step {
	r := s.Run
	id := e.nextTurn(s)
	corr := r.CorrelationID
	if e.cfg.BeforeTurn != nil {
		if err := e.cfg.BeforeTurn(ctx, TurnInfo{ID: id, Trigger: r.Trigger, CorrelationID: corr}); err != nil {
			err = fmt.Errorf("%w: %w", ErrAborted, err)
			e.stopped(corr, &id, err.Error(), err)
			return e.endSession(s, err)
		}
	}
	e.startTurn(s)
	r.Result.Turns++
	r.Turn, r.TurnInput, r.StartedAt = id, r.Input, e.cfg.Now()
	r.Request, r.Breakdown, r.Response, r.Started, r.HookErr, r.Cut = nil, nil, nil, false, nil, nil
	start := event.Event{Kind: event.TurnStart, CorrelationID: corr, Turn: &id, Trigger: r.Trigger}
	if id.Index == 0 {
		start.PreviousLoopID = s.PreviousLoopID
	}
	e.emit(start)
	for i := range r.Input {
		e.emit(event.Event{Kind: event.MessageStart, CorrelationID: corr, Turn: &id, Message: &llm.Message{Role: r.Input[i].Role}})
		e.emit(event.Event{Kind: event.MessageEnd, CorrelationID: corr, Turn: &id, Message: &r.Input[i]})
	}
	e.enter(s, StageComposeRequest, &id)
	req, bd, err := e.composeRequest(ctx, s)
	if err != nil {
		e.leave(s, err)
		return e.failTurn(ctx, s, err)
	}
	e.leave(s, nil)
	e.enter(s, StageSendRequest, &id)
	if err := e.runHooks(ctx, &Payload{Stage: StageSendRequest, Phase: PhasePre, CorrelationID: corr, Turn: &id, Request: req}); err != nil {
		e.leave(s, err)
		return e.failTurn(ctx, s, err)
	}
	e.emit(event.Event{Kind: event.ProviderRequest, CorrelationID: corr, Turn: &id, Provider: e.cfg.Provider.Name(), Model: req.Model, Breakdown: bd})
	r.Request, r.Breakdown, r.Phase = req, bd, phaseSend
	return e.Next(s)
}

// Delta takes one stream delta of the StepSend under way, as it arrives:
// the first ends SEND_REQUEST (its post hooks) and opens STREAM_RESPONSE
// (its pre hooks, MessageStart); each passes the stream_response delta
// hooks and is published as a MessageUpdate. A non-nil error means a delta
// guard cut the response off: the driver cancels the stream and calls
// Responded, which ends the turn with that error.
func (e *Engine) Delta(ctx context.Context, s *State, d llm.Delta) error {
	r := s.Run
	if r == nil || r.Phase != phaseSend {
		return fmt.Errorf("agent: Delta called with no request under way")
	}
	e.beginStream(ctx, s)
	if r.Cut != nil {
		return r.Cut.err()
	}
	p := &Payload{Stage: StageStreamResponse, Phase: PhaseDelta, CorrelationID: r.CorrelationID, Turn: ptr(r.Turn), Delta: &d}
	if err := e.runHooks(ctx, p); err != nil {
		r.Cut = stepErr(err)
		return err
	}
	if p.Delta != nil {
		e.emit(event.Event{Kind: event.MessageUpdate, CorrelationID: r.CorrelationID, Turn: ptr(r.Turn), Delta: p.Delta})
	}
	return nil
}

// beginStream ends SEND_REQUEST and opens STREAM_RESPONSE, once per
// response (the first delta, or the end of a stream without one). A hook
// denial is kept in Run.HookErr and returned when the stream ends.
func (e *Engine) beginStream(ctx context.Context, s *State) {
	r := s.Run
	if r.Started {
		return
	}
	r.Started = true
	hook := func(stage Stage, ph Phase) error {
		return e.runHooks(ctx, &Payload{Stage: stage, Phase: ph, CorrelationID: r.CorrelationID, Turn: ptr(r.Turn), Request: r.Request})
	}
	err := hook(StageSendRequest, PhasePost)
	e.leave(s, err)
	if err == nil {
		e.enter(s, StageStreamResponse, &r.Turn)
		err = hook(StageStreamResponse, PhasePre)
	}
	r.HookErr = stepErr(err)
	e.emit(event.Event{Kind: event.MessageStart, CorrelationID: r.CorrelationID, Turn: ptr(r.Turn), Message: &llm.Message{Role: llm.RoleAssistant}})
}

// Responded takes the outcome of the StepSend under way: the provider's
// response, or the error the call failed with (the cut-off error Delta
// returned, when a delta guard cut it). On success the assistant message is
// announced (MessageEnd, ProviderResponse; repeated tool_use ids made
// unique: dedupeToolUses) and joins the history, and its tool calls are
// authorized; on failure the turn ends with the error and no assistant
// message exists.
func (e *Engine) Responded(ctx context.Context, s *State, resp *llm.Response, err error) Step {
	r := s.Run
	if r == nil || r.Phase != phaseSend {
		return Step{Kind: StepDone, Err: fmt.Errorf("agent: Responded called with no request under way")}
	}
	id := r.Turn
	switch {
	case r.Cut != nil:
		err = r.Cut.err()
	case err != nil:
		e.emit(event.Event{Kind: event.ProviderError, CorrelationID: r.CorrelationID, Turn: &id, Provider: e.cfg.Provider.Name(), Err: err})
	case resp == nil:
		err = fmt.Errorf("agent: provider %s returned no response and no error", e.cfg.Provider.Name())
	default:
		e.beginStream(ctx, s)
		err = r.HookErr.err()
		if err == nil {
			err = e.runHooks(ctx, &Payload{Stage: StageStreamResponse, Phase: PhasePost, CorrelationID: r.CorrelationID, Turn: &id, Request: r.Request, Response: resp})
		}
	}
	if err != nil {
		e.leave(s, err)
		return e.failTurn(ctx, s, err)
	}
	settled := dedupeToolUses(&resp.Message) // after the transforms: the message as it is kept
	canonicalInputs(&resp.Message)
	e.emit(event.Event{Kind: event.MessageEnd, CorrelationID: r.CorrelationID, Turn: &id, Message: &resp.Message, StopReason: resp.StopReason,
		Provider: e.cfg.Provider.Name(), Model: resp.Model, Usage: ptr(resp.Usage)}) // docs/turn.md: the output MessageEnd carries stop reason, model, provider, usage
	e.emit(event.Event{Kind: event.ProviderResponse, CorrelationID: r.CorrelationID, Turn: &id, Provider: e.cfg.Provider.Name(),
		Model: resp.Model, ResponseID: resp.ID, Usage: &resp.Usage, StopReason: resp.StopReason})
	e.leave(s, nil)
	tldr := e.takeTLDR(s)
	s.History = append(s.History, resp.Message)
	s.Usage = s.Usage.Add(resp.Usage)
	r.Result.Usage = r.Result.Usage.Add(resp.Usage)
	r.Response, r.Used, r.Request, r.Breakdown = resp, resp.Usage.Add(tldr), nil, nil
	if calls := resp.Message.ToolUses(); len(calls) > 0 {
		e.enter(s, StageToolCall, &id)
		return e.startTools(ctx, s, calls, resp.StopReason, settled)
	}
	return e.finishTurn(ctx, s)
}

// takeTLDR counts the tl;dr requests compaction made for this turn in its
// usage (and so in the loop's, the result's and the stored turn's), whether
// or not the model call then succeeded, and returns them.
func (e *Engine) takeTLDR(s *State) llm.Usage {
	tldr := s.TLDR
	s.TLDR = llm.Usage{}
	s.Usage = s.Usage.Add(tldr)
	s.Run.Result.Usage = s.Run.Result.Usage.Add(tldr)
	return tldr
}

// failTurn ends a turn whose model call failed (or was never made): TurnEnd
// with the error, after_turn, then the end of the prompt.
func (e *Engine) failTurn(ctx context.Context, s *State, err error) Step {
	r := s.Run
	id := r.Turn
	tldr := e.takeTLDR(s)
	var u *llm.Usage
	if tldr != (llm.Usage{}) {
		u = &tldr
	}
	e.emit(event.Event{Kind: event.TurnEnd, CorrelationID: r.CorrelationID, Turn: &id, Usage: u, Err: err})
	e.afterTurn(ctx, TurnRecord{TurnInfo: TurnInfo{ID: id, Trigger: r.Trigger, CorrelationID: r.CorrelationID},
		Input: r.TurnInput, StartedAt: r.StartedAt, Err: err, Usage: tldr, EndedAt: e.cfg.Now()})
	return e.endSession(s, err)
}

// finishTurn ends a turn whose response arrived, once its tool calls (if
// any) are resolved: the results join the history, TurnEnd, after_turn,
// then the loop goes on or ends. A resumed crashed turn ends with its
// TurnEnd only and the loop continues.
func (e *Engine) finishTurn(ctx context.Context, s *State) Step {
	r := s.Run
	id := r.Turn
	if r.Calls != nil {
		e.leave(s, ctx.Err())
		appendUser(s, r.Results...)
	}
	ended := r.Calls != nil && r.Ended >= 0
	if ended {
		res := r.Results[r.Ended]
		r.Result.ToolResult, r.Result.EndedBy = &res, r.Calls[r.Ended].Name
	}
	if r.Resuming {
		// ToolResults: the results of the calls the crash left pending
		// (those stored before it are in the session store, not repeated).
		e.emit(event.Event{Kind: event.TurnEnd, CorrelationID: r.CorrelationID, Turn: &id, StopReason: llm.StopToolUse, ToolResults: r.Results})
		r.Resuming, r.Calls, r.Results = false, nil, nil
		r.Trigger = event.TriggerContinuation
		if ended {
			return e.endSession(s, e.render(ctx, s))
		}
		e.inbox.Taking(true)
		return e.top(ctx, s)
	}
	resp := r.Response
	e.emit(event.Event{Kind: event.TurnEnd, CorrelationID: r.CorrelationID, Turn: &id, Usage: ptr(r.Used), StopReason: resp.StopReason, ToolResults: r.Results})
	e.afterTurn(ctx, TurnRecord{TurnInfo: TurnInfo{ID: id, Trigger: r.Trigger, CorrelationID: r.CorrelationID},
		Input: r.TurnInput, Output: resp.Message, ToolResults: r.Results, Usage: r.Used, StopReason: resp.StopReason,
		StartedAt: r.StartedAt, EndedAt: e.cfg.Now()})
	r.Calls, r.Approved, r.Outcomes, r.Results, r.Settled = nil, nil, nil, nil, nil
	if ended { // a completion tool ran: the loop stops after this round (tool.Traits.EndsTurn)
		r.Result.Message, r.Result.StopReason = resp.Message, resp.StopReason
		e.inbox.EndLoop()
		return e.endSession(s, e.render(ctx, s))
	}
	return e.continueLoop(ctx, s)
}

func (e *Engine) afterTurn(ctx context.Context, rec TurnRecord) {
	if e.cfg.AfterTurn != nil {
		e.cfg.AfterTurn(ctx, rec)
	}
}

// nextTurn returns the id of the turn about to start: in a new loop when
// the prompt's first turn starts one (State.Fresh; docs/turn.md, rule 2:
// each agent_loop call of the Rust agent-loop library is a loop, its turns
// indexed from 0). startTurn makes it current once before_turn let it
// start; a prompt that stops before its first turn leaves the loop id as it
// was.
func (e *Engine) nextTurn(s *State) event.TurnID {
	if !s.Fresh {
		return event.TurnID{LoopID: s.LoopID, Index: s.Turns}
	}
	if s.NextLoopID == "" {
		s.NextLoopID = e.cfg.NewID()
	}
	return event.TurnID{LoopID: s.NextLoopID, Index: 0}
}

func (e *Engine) startTurn(s *State) {
	if s.Fresh {
		s.PreviousLoopID, s.LoopID, s.Turns, s.Fresh, s.NextLoopID = s.LoopID, s.NextLoopID, 0, false, ""
	}
	s.Turns++
}

// compact detaches every chunk Config.Compaction allows, oldest first, and
// emits a Compaction event for each (after the turn's input messages,
// before the model call: docs/turn.md, rule 16), carrying the usage of the
// chunk's tl;dr requests, which the turn then counts. A nil id (warming a
// restored layout) emits nothing; tl;dr requests made while warming count
// in the next turn.
func (e *Engine) compact(ctx context.Context, s *State, corr string, id *event.TurnID) {
	p := e.cfg.Compaction
	if p == nil {
		return
	}
	for {
		c, ok, err := p.NextContext(ctx, s.History[s.Detached:], s.Detached)
		if !ok {
			return
		}
		if err != nil && id != nil {
			e.emit(event.Event{Kind: event.Progress, CorrelationID: corr, Turn: id,
				Text: fmt.Sprintf("conversation history chunk %d keeps a full message: %v", len(s.Chunks)+1, err)})
		}
		s.TLDR = s.TLDR.Add(c.Usage)
		e.detach(s, corr, id, c, "")
	}
}

// detach moves chunk c out of the live history, dated now (Unix ms, for
// prompt.Detached.At; 0 while warming a restored layout, which has no
// clock), and emits its Compaction event (why is appended to the text); a
// nil id emits nothing.
func (e *Engine) detach(s *State, corr string, id *event.TurnID, c compact.Chunk, why string) {
	var at int64
	if id != nil {
		at = e.cfg.Now().UnixMilli()
	}
	s.ChunkAt = append(s.ChunkAt, at)
	s.Chunks = append(s.Chunks, c)
	s.Detached = c.Last + 1
	if id != nil {
		var u *llm.Usage
		if c.Usage != (llm.Usage{}) {
			u = &c.Usage
		}
		e.emit(event.Event{Kind: event.Compaction, CorrelationID: corr, Turn: id, Usage: u,
			Text: fmt.Sprintf("detached messages %d–%d (%d tokens) into conversation history chunk %d%s", c.First+1, c.Last+1, c.Tokens, len(s.Chunks), why)})
	}
}

// context returns this turn's prompt.Context: the template with the model,
// output cap, wire API, conversation id, tools, the live history, the usage
// so far and the detached chunks (as Detached and joined into the summary).
func (e *Engine) context(s *State, now time.Time) prompt.Context {
	pc := e.cfg.Context
	pc.Model, pc.MaxTokens, pc.Tools, pc.History = e.cfg.Model, e.cfg.Params.MaxTokens, e.toolSpecs(), s.History[s.Detached:]
	pc.API = e.cfg.Provider.API()
	pc.ConversationID = s.ConversationID
	if !now.IsZero() {
		pc.Now = now.UnixMilli()
	}
	pc.Usage = s.Usage
	if len(s.Chunks) > 0 {
		pc.Detached = make([]prompt.Detached, len(s.Chunks))
		for i, c := range s.Chunks {
			pc.Detached[i] = prompt.Detached{First: c.First, Last: c.Last, At: s.ChunkAt[i], Text: c.Text}
		}
		pc.Summary = prompt.JoinSummary(pc.Summary, pc.Detached)
	}
	return pc
}

// warm replays the layout over the requests a restored loop already sent
// (every history prefix ending in a user message that the model then
// answered), so a stateful layout's next request is byte-identical to the
// one the uninterrupted loop would send (a resumed session keeps its cached
// prefix). Compaction is replayed the same way. Nothing is emitted. It
// costs one assembly per stored request; NewState skips it when the stored
// state carries the layout's own (prompt.Stateful).
func (e *Engine) warm(s *State) error {
	full := s.History
	defer func() { s.History = full }()
	for j := 0; j+1 < len(full); j++ {
		if full[j].Role != llm.RoleUser || full[j+1].Role != llm.RoleAssistant {
			continue
		}
		s.History = full[:j+1]
		e.compact(context.Background(), s, "", nil)
		pc := e.context(s, time.Time{})
		if e.cfg.Gather != nil {
			_ = e.cfg.Gather(context.Background(), &pc) // as in composeRequest; nothing is emitted while warming
		}
		if _, _, err := e.assembleWithinWindow(context.Background(), s, "", nil, &pc); err != nil {
			return fmt.Errorf("agent: restore loop %s: layout %s cannot lay out the stored history up to message %d: %w",
				s.LoopID, e.cfg.Layout.Name(), j, err)
		}
	}
	return e.saveLayout(s)
}

// composeRequest is the body of COMPOSE_REQUEST: compaction (Config.Compaction,
// and when the request would not fit the model's context window), the
// layout's assembly between the stage's pre and post hooks, and the request
// knobs. It also returns the layout's Breakdown of the request.
func (e *Engine) composeRequest(ctx context.Context, s *State) (*llm.Request, *prompt.Breakdown, error) {
	r := s.Run
	corr, id := r.CorrelationID, ptr(r.Turn)
	e.compact(ctx, s, corr, id)
	pc := e.context(s, e.cfg.Now())
	if e.cfg.Gather != nil {
		if err := e.cfg.Gather(ctx, &pc); err != nil {
			e.emit(event.Event{Kind: event.Progress, CorrelationID: corr, Turn: id, Text: fmt.Sprintf("gathering the request context failed: %v", err)})
		}
	}
	p := &Payload{Stage: StageComposeRequest, Phase: PhasePre, CorrelationID: corr, Turn: id, Context: &pc}
	if err := e.runHooks(ctx, p); err != nil {
		return nil, nil, err
	}
	req, bd, err := e.assembleWithinWindow(ctx, s, corr, id, &pc)
	if err != nil {
		return nil, nil, err
	}
	if err := e.saveLayout(s); err != nil {
		return nil, nil, err
	}
	p = &Payload{Stage: StageComposeRequest, Phase: PhasePost, CorrelationID: corr, Turn: id, Request: req, Breakdown: bd}
	if err := e.runHooks(ctx, p); err != nil {
		return nil, nil, err
	}
	return req, bd, nil
}

// toolSpecs are the registered tools the agent may use (authority step 1 also
// decides what the model is offered).
func (e *Engine) toolSpecs() []llm.ToolSpec {
	specs := e.cfg.Tools.Specs()
	if e.cfg.AllowedTool == nil {
		return specs
	}
	out := specs[:0:0]
	for _, sp := range specs {
		if e.cfg.AllowedTool(sp.Name) {
			out = append(out, sp)
		}
	}
	return out
}

// runHooks runs the hooks registered for p's stage and phase, in order. A
// guard's deny (or error) stops at once and returns an error wrapping
// ErrDenied that names the hook and its reason; errors of transforms and
// observers are reported as Progress events and do not stop the loop.
func (e *Engine) runHooks(ctx context.Context, p *Payload) error {
	for _, h := range e.cfg.Hooks {
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
			e.emit(event.Event{Kind: event.Progress, CorrelationID: p.CorrelationID, Turn: p.Turn,
				Text: fmt.Sprintf("hook %s (%s %s %s) failed: %v", h.Name, h.Kind, p.Stage, p.Phase, err)})
		}
	}
	return nil
}
