package agent

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// StepKind says what a Step asks the driver to do.
type StepKind string

// Step kinds.
const (
	// StepSend: send Step.Request to the provider, hand each stream delta
	// to Engine.Delta as it arrives (cancel the stream when Delta returns
	// an error) and the outcome to Engine.Responded.
	StepSend StepKind = "send"
	// StepApprove: ask for Step.Approval (Approver.Approve) and hand the
	// answer to Engine.Approved.
	StepApprove StepKind = "approve"
	// StepRunTool: run Step.Call (Engine.RunTool does it in-process) and
	// hand the outcome to Engine.ToolDone.
	StepRunTool StepKind = "run_tool"
	// StepDone: the prompt ended with Step.Result and Step.Err.
	StepDone StepKind = "done"
)

// Step is what the engine asks the driver to do next. Only the fields of
// its Kind are set.
type Step struct {
	Kind          StepKind
	CorrelationID string
	Turn          event.TurnID // the turn the step belongs to (not for StepDone)

	Request   *llm.Request      // StepSend
	Breakdown *prompt.Breakdown // StepSend: the layout's explanation of Request
	Approval  *ApprovalRequest  // StepApprove
	Call      *llm.Block        // StepRunTool: the tool_use block as it runs

	Result *Result // StepDone
	Err    error   // StepDone: as Prompt returns it
}

// ToolOutput is a tool call's outcome handed back with Engine.ToolDone.
type ToolOutput struct {
	// Result is the call's tool_result block (its ID the call's).
	Result llm.Block `json:"result"`
	// ChildLoopID is the loop a use_subagent call ran ("" = none).
	ChildLoopID string `json:"child_loop_id,omitempty"`
}

// Inbox is where the loop takes the messages that arrive while a prompt
// runs (docs/turn.md, rule 13): steering messages, added before the next
// model call, and follow-ups, added when the model would stop. The loop
// calls it only from its own steps; Queue is the in-memory one.
type Inbox interface {
	// Taking says whether steering offered now reaches the running prompt
	// (on while its loop runs, off once it ended).
	Taking(on bool)
	// TakeSteering removes and returns the queued steering messages.
	TakeSteering() []string
	// HasSteering reports whether steering is queued.
	HasSteering() bool
	// TakeFollowUp removes and returns the first queued follow-up.
	TakeFollowUp() (string, bool)
	// EndLoop ends the running loop's steering unless a message is queued
	// (then it reports false and the loop makes one more turn), atomically
	// with offers of steering.
	EndLoop() bool
}

// Engine is the loop as a step machine: given a State it says what to do
// next (a Step), and takes back what the driver did. It holds the
// configuration (hooks, layout, tools, event bus), never the conversation:
// an Engine built from the same Config can continue any State. It makes no
// network call, starts no goroutine or timer and reads no file itself; the
// callbacks of its Config (Gather, BeforeTurn, AfterTurn, hooks,
// compaction's summariser) run inside its steps, and whatever they do is
// theirs. An Engine and its State are used from one goroutine at a time.
type Engine struct {
	cfg   Config
	inbox Inbox
}

// NewEngine checks cfg (as New does) and returns its engine; inbox supplies
// steering and follow-ups (nil = none).
func NewEngine(cfg Config, inbox Inbox) (*Engine, error) {
	cfg, err := checkConfig(cfg)
	if err != nil {
		return nil, err
	}
	if inbox == nil {
		inbox = &Queue{}
	}
	return &Engine{cfg: cfg, inbox: inbox}, nil
}

// NewState returns the state of a conversation continuing loop loopID with
// the stored history; next is the index of the loop's next turn (0 for a new
// conversation or a loop that ran no turn). When saved (a checkpoint:
// Agent.Checkpoint) was taken of this history and carries the layout's
// state (prompt.Stateful, the same LayoutName), the layout and compaction
// state are loaded from it in one step; otherwise the layout is replayed
// over every request the history already sent, so its next request is
// byte-identical to the uninterrupted loop's. The tools a person allowed or
// rejected always (Always, Never) are taken from any saved checkpoint: they
// belong to the conversation, whatever its layout.
// It fails when loopID is empty or the layout cannot lay the history out.
func (e *Engine) NewState(loopID string, history []llm.Message, next int, saved *State) (*State, error) {
	if loopID == "" {
		return nil, errors.New("agent: loop id is empty")
	}
	s := &State{LoopID: loopID, ConversationID: e.cfg.ConversationID, History: append([]llm.Message(nil), history...), Turns: next}
	if s.ConversationID == "" {
		s.ConversationID = loopID
	}
	if saved != nil { // what a person allowed or rejected always belongs to the conversation, whatever the layout
		s.Always, s.Never = maps.Clone(saved.Always), maps.Clone(saved.Never)
	}
	if saved.fits(e.cfg.Layout.Name(), history) {
		s.Detached, s.Chunks, s.ChunkAt, s.TLDR = saved.Detached, saved.Chunks, saved.ChunkAt, saved.TLDR
		s.Layout, s.LayoutName = saved.Layout, saved.LayoutName
		if err := e.Load(s); err == nil {
			return s, nil
		}
		s.Detached, s.Chunks, s.ChunkAt, s.TLDR, s.Layout, s.LayoutName = 0, nil, nil, llm.Usage{}, nil, ""
	}
	if err := e.warm(s); err != nil {
		return nil, err
	}
	return s, nil
}

// fits reports whether saved, a checkpoint, can restore history under
// layout: it carries that layout's state and was taken of that history.
func (saved *State) fits(layout string, history []llm.Message) bool {
	if saved == nil || saved.LayoutName != layout {
		return false
	}
	d := saved.HistoryDigest
	if d == "" {
		d = historyDigest(saved.History)
	}
	return d == historyDigest(history)
}

// Load hands the layout the state s carries (State.Layout), so an Engine
// built anew continues a decoded State exactly: call it once before the
// first step on a State that did not come from this Engine. It does
// nothing for a stateless layout or a state without one, and fails when
// the state was written by another layout or cannot be decoded.
func (e *Engine) Load(s *State) error {
	st, ok := e.cfg.Layout.(prompt.Stateful)
	if !ok || s.Layout == nil {
		return nil
	}
	if s.LayoutName != e.cfg.Layout.Name() {
		return fmt.Errorf("agent: the state's layout state was written by layout %q, not %q", s.LayoutName, e.cfg.Layout.Name())
	}
	if err := st.SetState(s.Layout); err != nil {
		return fmt.Errorf("agent: layout %s: load state: %w", e.cfg.Layout.Name(), err)
	}
	return nil
}

// saveLayout records the layout's state in s after it assembled a request.
func (e *Engine) saveLayout(s *State) error {
	st, ok := e.cfg.Layout.(prompt.Stateful)
	if !ok {
		s.LayoutName = e.cfg.Layout.Name()
		return nil
	}
	b, err := st.State()
	if err != nil {
		return fmt.Errorf("agent: layout %s: save state: %w", e.cfg.Layout.Name(), err)
	}
	s.Layout, s.LayoutName = b, e.cfg.Layout.Name()
	return nil
}

// Start begins a prompt: text (through the receive_input hooks) and
// attachments become a user message, and the loop runs until the driver is
// needed. It returns a StepDone with an error when the prompt is empty or
// s already runs one.
func (e *Engine) Start(ctx context.Context, s *State, text string, attachments []llm.Block) Step {
	if strings.TrimSpace(text) == "" && len(attachments) == 0 {
		return Step{Kind: StepDone, Err: errors.New("agent: prompt is empty")}
	}
	if s.Run != nil && s.Run.Phase != phaseDone {
		return Step{Kind: StepDone, Err: ErrBusy}
	}
	s.Fresh = s.Turns > 0 // newLoop: docs/turn.md, rule 2
	e.inbox.Taking(true)
	r := &Run{CorrelationID: e.cfg.NewID()}
	s.Run = r
	input, err := e.receiveInput(ctx, s, text, attachments)
	if err != nil {
		return e.endSession(s, err)
	}
	r.Trigger = s.FirstTrigger
	if r.Trigger == "" {
		r.Trigger = event.TriggerUser
	}
	s.FirstTrigger = ""
	r.Input = input
	return e.top(ctx, s)
}

// Next returns the step s waits for: the same step the last call returned,
// for a driver continuing a State it stored. A state with no prompt in
// progress returns StepDone with a nil Result.
func (e *Engine) Next(s *State) Step {
	r := s.Run
	if r == nil {
		return Step{Kind: StepDone}
	}
	switch r.Phase {
	case phaseSend:
		return Step{Kind: StepSend, CorrelationID: r.CorrelationID, Turn: r.Turn, Request: r.Request, Breakdown: r.Breakdown}
	case phaseAuthorize:
		if r.Asking {
			return e.approvalStep(s)
		}
	case phaseExecute:
		return Step{Kind: StepRunTool, CorrelationID: r.CorrelationID, Turn: r.Turn, Call: &r.Calls[r.Next]}
	case phaseDone:
		return e.doneStep(s)
	}
	return Step{Kind: StepDone, Err: fmt.Errorf("agent: state in phase %q has no pending step", r.Phase)}
}

// doneStep is the StepDone of a finished run.
func (e *Engine) doneStep(s *State) Step {
	res := s.Run.Result
	return Step{Kind: StepDone, CorrelationID: s.Run.CorrelationID, Result: &res, Err: s.Run.Err.err()}
}

// top is the top of a loop iteration: queued steering joins the input, the
// limits are checked, then a turn starts (docs/loop.md, "continuation
// limit": checked before before_turn and COMPOSE_REQUEST).
func (e *Engine) top(ctx context.Context, s *State) Step {
	r := s.Run
	r.Phase = phaseTop
	if steer := e.inbox.TakeSteering(); len(steer) > 0 {
		blocks := make([]llm.Block, len(steer))
		for i, t := range steer {
			blocks[i] = llm.TextBlock(t)
		}
		m := appendUser(s, blocks...)
		if n := len(r.Input); n > 0 && r.Input[n-1].Role == llm.RoleUser {
			r.Input[n-1] = m // the same, merged, message
		} else {
			r.Input = append(r.Input, m)
		}
	}
	if err := e.checkLimits(s); err != nil {
		return e.endSession(s, err)
	}
	if r.Round {
		r.Result.Rounds++
	}
	return e.beginTurn(ctx, s)
}

// afterTurn decides what follows a turn that ended without error: another
// turn (tool results, pause_turn, steering, a follow-up) or the end of the
// prompt (RENDER, SessionTurnEnd).
func (e *Engine) continueLoop(ctx context.Context, s *State) Step {
	r := s.Run
	resp := r.Response
	r.Input, r.Trigger = nil, event.TriggerContinuation
	r.Result.Message, r.Result.StopReason = resp.Message, resp.StopReason
	if r.Round = continues(resp); r.Round || e.inbox.HasSteering() {
		return e.top(ctx, s)
	}
	if text, ok := e.inbox.TakeFollowUp(); ok {
		r.Input, r.Trigger = []llm.Message{appendUser(s, llm.TextBlock(text))}, event.TriggerFollowUp
		return e.top(ctx, s)
	}
	if !e.inbox.EndLoop() { // a steering message arrived since HasSteering: one more turn takes it
		return e.top(ctx, s)
	}
	return e.endSession(s, e.render(ctx, s))
}

// checkLimits stops the loop explicitly when the continuation or token limit
// is reached (docs/loop.md, "continuation limit"; docs/turn.md, rule 15).
func (e *Engine) checkLimits(s *State) error {
	r := s.Run
	var msg string
	var err error
	switch {
	case r.Round && r.Result.Rounds >= e.cfg.MaxTurns:
		msg = fmt.Sprintf("max turns %d reached (the continuation limit, in rounds of tool results sent back to the model); "+
			"tool calls made before the limit may already have completed successfully; the last round's results were not sent to the model", e.cfg.MaxTurns)
		err = fmt.Errorf("%w (%d rounds)", ErrMaxTurns, e.cfg.MaxTurns)
	case e.cfg.MaxSessionTokens > 0 && s.Usage.Total >= e.cfg.MaxSessionTokens:
		msg = fmt.Sprintf("session token limit %d reached (%d tokens used)", e.cfg.MaxSessionTokens, s.Usage.Total)
		err = fmt.Errorf("%w (%d of %d tokens)", ErrTokenLimit, s.Usage.Total, e.cfg.MaxSessionTokens)
	default:
		return nil
	}
	e.stopped(r.CorrelationID, nil, msg, err)
	return err
}

// stopped emits the terminal AgentStopped event: Text is the system message
// "[Agent stopped: <why>]" of the Rust agent-loop Turn (docs/turn.md, rule
// 15), also carried as Message with role system (never added to the
// history: no provider accepts a system message mid-conversation).
func (e *Engine) stopped(corr string, id *event.TurnID, why string, err error) {
	text := "[Agent stopped: " + why + "]"
	e.emit(event.Event{Kind: event.AgentStopped, CorrelationID: corr, Turn: id, Text: text, Err: err,
		Message: &llm.Message{Role: llm.RoleSystem, Content: []llm.Block{llm.TextBlock(text)}}})
}

// endSession ends the prompt: SessionTurnEnd, and the StepDone carrying res
// and err.
func (e *Engine) endSession(s *State, err error) Step {
	r := s.Run
	e.inbox.Taking(false)
	e.emit(event.Event{Kind: event.SessionTurnEnd, CorrelationID: r.CorrelationID, Usage: ptr(r.Result.Usage), StopReason: r.Result.StopReason, Err: err})
	r.Phase, r.Err = phaseDone, stepErr(err)
	r.Request, r.Breakdown, r.Response, r.Input, r.TurnInput = nil, nil, nil, nil, nil
	r.Calls, r.Approved, r.Outcomes, r.Results, r.Settled = nil, nil, nil, nil, nil
	return e.doneStep(s)
}

// receiveInput is the body of RECEIVE_INPUT (between its StagePreFired and
// StagePostFired events): the receive_input hooks around appending the
// prompt and attachments as a user message, which it returns.
func (e *Engine) receiveInput(ctx context.Context, s *State, text string, attachments []llm.Block) (_ []llm.Message, err error) {
	corr := s.Run.CorrelationID
	id := e.nextTurn(s) // the turn the input starts
	e.enter(s, StageReceiveInput, &id)
	defer func() { e.leave(s, err) }()
	// The session turn starts inside RECEIVE_INPUT (docs/loop.md, rule 12:
	// the design makes SessionTurnStart one of its responsibilities).
	e.emit(event.Event{Kind: event.SessionTurnStart, CorrelationID: corr, Text: text})
	p := &Payload{Stage: StageReceiveInput, Phase: PhasePre, CorrelationID: corr, Turn: &id, Input: &text}
	if err := e.runHooks(ctx, p); err != nil {
		return nil, err
	}
	var blocks []llm.Block
	if strings.TrimSpace(text) != "" {
		blocks = append(blocks, llm.TextBlock(text))
	}
	input := []llm.Message{appendUser(s, append(blocks, attachments...)...)}
	p = &Payload{Stage: StageReceiveInput, Phase: PhasePost, CorrelationID: corr, Turn: &id, Input: &text}
	if err := e.runHooks(ctx, p); err != nil {
		return nil, err
	}
	return input, nil
}

// render is the body of RENDER (between its stage events, which carry the
// last turn's id): the render payload — the prompt's final assistant
// message — passes the render pre hooks (transforms may rewrite it, e.g.
// mask sensitive spans), is handed to the user interfaces as a Render
// event and becomes the Result's Message, then the post hooks (observers:
// a final audit) see it. The history keeps the model's own message.
func (e *Engine) render(ctx context.Context, s *State) (err error) {
	r := s.Run
	id := r.Turn
	e.enter(s, StageRender, &id)
	defer func() { e.leave(s, err) }()
	msg := r.Result.Message
	msg.Content = slices.Clone(msg.Content) // transforms must not reach the history's copy
	resp := &llm.Response{Message: msg, StopReason: r.Result.StopReason, Usage: r.Result.Usage}
	if err := e.runHooks(ctx, &Payload{Stage: StageRender, Phase: PhasePre, CorrelationID: r.CorrelationID, Turn: &id, Response: resp}); err != nil {
		return err
	}
	r.Result.Message = resp.Message
	e.emit(event.Event{Kind: event.Render, CorrelationID: r.CorrelationID, Turn: &id, Message: &resp.Message, StopReason: resp.StopReason, Usage: ptr(resp.Usage)})
	return e.runHooks(ctx, &Payload{Stage: StageRender, Phase: PhasePost, CorrelationID: r.CorrelationID, Turn: &id, Response: resp})
}

// continues reports whether the loop makes another model call after resp:
// after tool results, and after an Anthropic pause_turn (the paused assistant
// message is sent back as is, per the Anthropic docs on server tools).
func continues(resp *llm.Response) bool {
	if resp.StopReason == llm.StopPauseTurn {
		return true
	}
	return len(resp.Message.ToolUses()) > 0 && resp.StopReason != llm.StopMaxTokens
}

// appendUser adds blocks as a user message, merging them into the last
// message when that is already a user message (tool results followed by the
// next prompt), so roles keep alternating. It returns the resulting message.
func appendUser(s *State, blocks ...llm.Block) llm.Message {
	if n := len(s.History); n > 0 && s.History[n-1].Role == llm.RoleUser {
		s.History[n-1].Content = append(s.History[n-1].Content, blocks...)
		return s.History[n-1]
	}
	s.History = append(s.History, llm.Message{Role: llm.RoleUser, Content: blocks})
	return s.History[len(s.History)-1]
}

// emit publishes e on the bus, dated by Config.Now.
func (e *Engine) emit(ev event.Event) {
	if e.cfg.Bus != nil {
		if ev.Time.IsZero() {
			ev.Time = e.cfg.Now()
		}
		e.cfg.Bus.Emit(ev)
	}
}
