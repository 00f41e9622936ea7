package agent

import (
	"context"
	"encoding/json"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// Stage names one step of the loop (docs/loop.md, "stages"): every user turn
// goes RECEIVE_INPUT → COMPOSE_REQUEST → SEND_REQUEST → STREAM_RESPONSE →
// TOOL_CALL (once per tool call) → RENDER, and each stage has a pre and a post
// hook point.
type Stage string

// The loop's stages, in order.
const (
	StageReceiveInput   Stage = "receive_input"
	StageComposeRequest Stage = "compose_request"
	StageSendRequest    Stage = "send_request"
	StageStreamResponse Stage = "stream_response"
	StageToolCall       Stage = "tool_call"
	StageRender         Stage = "render"
)

// Phase is when a hook runs relative to its stage.
type Phase string

// Hook phases.
const (
	PhasePre  Phase = "pre"
	PhasePost Phase = "post"
	// PhaseDelta is the in-flight point of StageStreamResponse only: its
	// hooks run once per stream delta, as it arrives, before the delta is
	// published as a MessageUpdate event (the message-loop design's
	// STREAM_RESPONSE hooks "filter or rewrite tokens in flight"). A
	// transform may rewrite *Payload.Delta or filter the delta out by
	// setting Payload.Delta to nil (later hooks then do not see it); an
	// observer sees every delta; a guard's deny cuts the response off: the
	// stream is cancelled and the turn fails with ErrDenied. What a delta
	// hook changes is what observers and user interfaces are shown; the
	// assistant message kept in the history is the provider's, which
	// stream_response post transforms may rewrite. Delta hooks run on the
	// provider's streaming goroutine, one delta at a time.
	PhaseDelta Phase = "delta"
)

// HookKind says what a hook may do (docs/loop.md, "hooks"): a transform may change the
// payload, a guard may deny (with a reason), an observer only sees.
type HookKind string

// Hook kinds.
const (
	HookTransform HookKind = "transform"
	HookGuard     HookKind = "guard"
	HookObserver  HookKind = "observer"
)

// Payload is what a hook sees. Which fields are set depends on the stage:
//
//	receive_input    Input (pre: transforms may rewrite it)
//	compose_request  Context (pre), Request and Breakdown (post)
//	send_request     Request
//	stream_response  Delta (delta: each stream delta in flight), Response (post)
//	tool_call        ToolCall (pre), ToolCall + ToolResult (post)
//	render           Response (the final assistant message of the user turn)
//
// Only transform hooks may modify the pointed-to values; guards and
// observers must treat them as read-only.
type Payload struct {
	Stage         Stage
	Phase         Phase
	CorrelationID string        // ties every hook call and event of one user turn
	Turn          *event.TurnID // nil at receive_input
	Input         *string
	Context       *prompt.Context
	Request       *llm.Request
	Breakdown     *prompt.Breakdown // compose_request post: the layout's explanation of Request
	Response      *llm.Response
	ToolCall      *llm.Block
	ToolResult    *llm.Block
	Delta         *llm.Delta // stream_response delta: the delta in flight (nil = filtered out)
}

// Verdict is a guard's answer. Deny with a Reason stops the stage: a denied
// tool call returns a tool_result with the reason to the model; a denied
// input or request ends the user turn with an error naming the hook and the
// reason.
type Verdict struct {
	Deny   bool
	Reason string
}

// Hook is one registered hook. Hooks of a stage and phase run in the order
// they were registered. An error from Func is treated as a deny for guards
// and reported (as a warning event) for transforms and observers.
type Hook struct {
	Name  string // shown in events and denial reasons
	Stage Stage
	Phase Phase
	Kind  HookKind
	Func  func(ctx context.Context, p *Payload) (Verdict, error)
	// State, when set, is the memory Func keeps between its calls (a
	// loop's todo lists, the context files as last read, the panels' log).
	// A driver that runs the hook in another place for each call (a
	// durable session on Temporal, whose calls reach any worker: see
	// docs/durable.md, "stateful hooks") saves it after a call and loads
	// it before the next, so the hook answers as if every call ran in one
	// process. nil: the hook keeps no memory that changes its answers.
	State HookState
}

// HookState is a hook's memory between calls (Hook.State), as JSON. A
// driver that moves it calls LoadState, the hook's Func, then SaveState,
// with no other call of the same hook in between.
type HookState interface {
	// SaveState returns the memory as JSON.
	SaveState() (json.RawMessage, error)
	// LoadState replaces the memory with one SaveState returned; an error
	// names what could not be decoded and leaves the memory as it was.
	LoadState(json.RawMessage) error
}

// EventState is a HookState that is fed the loop's events, as a
// SubscribeSync observer of the loop's bus would be (the panels' log and
// console): a driver that moves the state feeds it, before a call, the
// events emitted since the hook's previous call (it may leave out the
// stream deltas, MessageUpdate, which no such state reads).
type EventState interface {
	HookState
	// Observe takes one event of the loop, in the order the bus emitted it.
	Observe(e event.Event)
}

// Mode is the security mode of the authority stack (docs/loop.md, rule 9): how a tool
// call that the agent's allowed tools permit is approved.
type Mode string

// Approval modes.
const (
	// ModeAsk asks the Approver for every call not pre-approved.
	ModeAsk Mode = "ask"
	// ModeAllowlist approves calls matching the agent's allowedTools and
	// toolsSettings and asks the Approver for the rest.
	ModeAllowlist Mode = "allowlist"
	// ModeAll approves every call the agent's tools permit.
	ModeAll Mode = "all"
)

// Decision is an Approver's answer for one tool call (ACP permission option
// kinds: allow_once, allow_always, reject_once, reject_always).
type Decision string

// Approval decisions.
const (
	AllowOnce    Decision = "allow_once"
	AllowAlways  Decision = "allow_always"
	RejectOnce   Decision = "reject_once"
	RejectAlways Decision = "reject_always"
)

// ApprovalRequest describes one tool call awaiting approval.
type ApprovalRequest struct {
	CorrelationID string
	Turn          event.TurnID
	Call          llm.Block // the tool_use block (ID, Name, Input)
	Index         int       // position among the parallel calls of the response
}

// Approver decides tool calls the authority stack cannot decide itself (mode
// ask, or allowlist misses). Calls of one response are asked in call order,
// one at a time. An error is treated as a rejection whose reason is the
// error's text.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (Decision, error)
}

// ApproverFunc adapts a function to the Approver interface.
type ApproverFunc func(ctx context.Context, req ApprovalRequest) (Decision, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req ApprovalRequest) (Decision, error) {
	return f(ctx, req)
}
