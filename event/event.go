// Package event defines the typed events the agent loop emits and a bus that
// fans them out to observers.
//
// Events are observations, never authority (docs/loop.md, "events", rule 11):
// nothing an observer does can change the loop. The order of one turn's events
// is strict (docs/turn.md, "event order"):
//
//	TurnStart → MessageStart/End for input messages → MessageStart →
//	MessageUpdate* → MessageEnd → (ToolExecutionStart → ToolExecutionUpdate* →
//	ToolExecutionEnd)* → TurnEnd
//
// Provider*, ToolInvocationProposed, ToolCallModeInvoked,
// ToolCallApproved/Denied, Compaction and Progress events interleave at the
// points where they happen, and so do the message loop's StagePreFired /
// StagePostFired around each stage body (docs/loop.md, rule 12);
// SessionTurnStart/End bracket one user turn. DesignName maps the kinds to
// the message-loop design's event names.
//
// Delivery: a Bus gives every Subscribe observer (and every Events
// iterator) its own bounded queue and a Policy for when it is full — Block
// (the default: Emit waits, nothing is lost, a stuck observer stalls the
// loop) or Drop (Emit goes on; the loss is counted and announced with a
// Dropped event). SubscribeSync observers run inline in Emit.
package event

import (
	"time"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// Kind names an event type. The JSON Lines output of `strata run --format
// json` carries it as "kind".
type Kind string

// Event kinds.
const (
	SessionTurnStart    Kind = "session_turn_start"    // a user turn begins (docs/loop.md, RECEIVE_INPUT)
	SessionTurnEnd      Kind = "session_turn_end"      // the user turn is over (docs/loop.md, RENDER); Err is why it failed, if it did
	TurnStart           Kind = "turn_start"            // one model call-and-response cycle begins (docs/turn.md)
	TurnEnd             Kind = "turn_end"              // the cycle is over, tools included; carries Usage (the model call's plus compaction's tl;dr requests'), or Err when the model call failed
	MessageStart        Kind = "message_start"         // an input or assistant message begins
	MessageUpdate       Kind = "message_update"        // a stream delta of the assistant message
	MessageEnd          Kind = "message_end"           // the message is complete; carries it
	ToolExecutionStart  Kind = "tool_execution_start"  // a tool call is about to run
	ToolExecutionUpdate Kind = "tool_execution_update" // partial output / progress of a running tool
	ToolExecutionEnd    Kind = "tool_execution_end"    // the tool call finished; carries the tool_result
	ToolCallApproved    Kind = "tool_call_approved"    // the authority stack allowed a call
	ToolCallDenied      Kind = "tool_call_denied"      // the authority stack refused a call; Text is the reason
	Compaction          Kind = "compaction"            // old messages were detached into a frozen history chunk (docs/turn.md, rule 16); Text says which
	ProviderRequest     Kind = "provider_request"      // a request was sent to the provider
	ProviderResponse    Kind = "provider_response"     // the provider's response completed
	ProviderError       Kind = "provider_error"        // the provider call failed; Err is the provider's error
	AgentStopped        Kind = "agent_stopped"         // the loop stopped on a limit; Text (and Message, role system) is "[Agent stopped: …]", Err is the sentinel (terminal)
	// StagePreFired: a stage of the message loop (Stage: receive_input,
	// compose_request, send_request, stream_response, tool_call, render)
	// is about to run its body, hooks included (docs/loop.md, rule 12).
	StagePreFired Kind = "stage_pre_fired"
	// StagePostFired: that stage's body completed; Outcome is ok, denied,
	// cancelled or failed.
	StagePostFired Kind = "stage_post_fired"
	// ToolInvocationProposed: the model asked for a tool call (ToolCall),
	// before the authority stack judges it; one per call, in call order.
	ToolInvocationProposed Kind = "tool_invocation_proposed"
	// ToolCallModeInvoked: the security-mode gate (step 2 of the authority
	// stack) was consulted for ToolCall; Text is "<mode>: <its answer>"
	// (approve, pre-approved, allowed always, ask the approver, no
	// approver). Emitted before the approver is asked, beside the
	// ToolCallApproved / ToolCallDenied decision that follows.
	ToolCallModeInvoked Kind = "tool_call_mode_invoked"
	// Render: the render payload — the prompt's final assistant message as
	// the render stage's transform hooks left it (e.g. with sensitive spans
	// masked) — handed to the user interfaces (docs/loop.md, RENDER).
	// Emitted between RENDER's stage events; the history keeps the model's
	// own message.
	Render   Kind = "render"
	Progress Kind = "progress" // a plain-text status line
	// CacheKeepAlive: the runtime re-sent the session's last request with a
	// one-token answer while the session idled, so its prompt cache entry
	// was read (and kept) instead of expiring (docs/keepalive.md). Usage is
	// the ping's, Ping its 1-based number in the idle stretch, Text says
	// "keep-alive ping N of MAX". It belongs to no turn (Turn is nil), and
	// the ping is never part of the conversation or the session store.
	CacheKeepAlive Kind = "cache_keepalive"
	// Dropped is made by the bus, never emitted: a Subscribe observer with
	// the Drop policy receives it before its next delivered event (or last,
	// at Close) when events did not fit its queue. DroppedCount is how many
	// were lost, Text names their Seq range; its own Seq is 0.
	Dropped Kind = "dropped"
)

// TurnID identifies one turn: the loop it belongs to and its zero-based index
// in that loop (docs/turn.md, "turn header", rule 1).
type TurnID struct {
	LoopID string `json:"loop_id"`
	Index  int    `json:"turn_index"`
}

// Trigger says what caused a turn (docs/turn.md, "turn header", rule 3).
type Trigger string

// Turn triggers.
const (
	TriggerUser         Trigger = "user"         // first turn after a user message
	TriggerSubAgent     Trigger = "sub_agent"    // first turn of a loop started by a parent agent
	TriggerContinuation Trigger = "continuation" // tool round-trip or steering message
	// TriggerFollowUp: the first turn after a queued follow-up message
	// (agent.Agent.FollowUp) was taken, the loop having otherwise ended. The
	// Rust agent-loop Turn counts this among its Continuation turns; strata
	// gives it its own trigger so a record says why the loop went on.
	TriggerFollowUp Trigger = "follow_up"
	TriggerBranch   Trigger = "branch" // first turn of a branched loop
)

// Event is one observation. Which fields are set depends on Kind; unset fields
// are omitted from JSON.
type Event struct {
	Kind          Kind      `json:"kind"`
	Seq           int64     `json:"seq"`            // 1-based order of emission on its bus
	Time          time.Time `json:"time"`           // wall clock at emission
	CorrelationID string    `json:"correlation_id"` // ties every event of one user turn together (docs/loop.md, rule 2)
	Turn          *TurnID   `json:"turn,omitempty"`
	Trigger       Trigger   `json:"trigger,omitempty"`

	Message    *llm.Message   `json:"message,omitempty"`     // MessageStart (role only) / MessageEnd; AgentStopped (role system)
	Delta      *llm.Delta     `json:"delta,omitempty"`       // MessageUpdate
	ToolCall   *llm.Block     `json:"tool_call,omitempty"`   // tool_use block: ToolExecution*, ToolCall*
	ToolResult *llm.Block     `json:"tool_result,omitempty"` // ToolExecutionEnd
	Usage      *llm.Usage     `json:"usage,omitempty"`       // TurnEnd, ProviderResponse (the model call alone), SessionTurnEnd (sum), Compaction (its tl;dr requests)
	StopReason llm.StopReason `json:"stop_reason,omitempty"` // ProviderResponse, TurnEnd
	Provider   string         `json:"provider,omitempty"`    // Provider*
	Model      string         `json:"model,omitempty"`       // Provider*
	// ResponseID is the provider's response id on ProviderResponse
	// (msg_…, chatcmpl-…, resp_…; "" when the API sends none).
	ResponseID string `json:"response_id,omitempty"`
	// Breakdown is, on ProviderRequest, the layout's explanation of the
	// request sent: its spans with token counts and, where the layout
	// tracks it, each span's cache hit and cost (prompt.SpanCache).
	Breakdown *prompt.Breakdown `json:"breakdown,omitempty"`
	Text      string            `json:"text,omitempty"` // Progress, ToolExecutionUpdate, ToolCallDenied, ToolCallModeInvoked, AgentStopped, Dropped
	// Err is why a ProviderError, AgentStopped, TurnEnd or SessionTurnEnd
	// failed, as the error value the loop returned, so in-process observers
	// can use errors.Is (agent.ErrMaxTurns, llm.ErrStreamTruncated, ...) and
	// errors.As (*llm.APIError). It is not marshalled; Error carries its text.
	Err error `json:"-"`
	// Error is Err's message (Bus.Emit sets it from Err), the form JSON
	// output and the session store carry. Events that never passed through
	// Emit (decoded JSON, hand-built test events) may have Error without Err.
	Error string `json:"error,omitempty"`
	// DroppedCount is, on a Dropped event, how many events this observer
	// lost (Drop policy).
	DroppedCount int64 `json:"dropped_count,omitempty"`
	// Ping is, on a CacheKeepAlive event, the ping's 1-based number in its
	// idle stretch.
	Ping int `json:"ping,omitempty"`
	// ChildLoopID is set on ToolExecutionEnd of a sub-agent tool call.
	ChildLoopID string `json:"child_loop_id,omitempty"`
	// PreviousLoopID is set on the TurnStart of a loop's first turn (index
	// 0) when the loop continues another of the same conversation: the loop
	// of the previous user prompt (docs/turn.md, rule 2: a loop per user
	// prompt). The session store chains the loops by it.
	PreviousLoopID string `json:"previous_loop_id,omitempty"`
	// Stage names the message-loop stage of StagePreFired / StagePostFired.
	Stage string `json:"stage,omitempty"`
	// Outcome is how a stage ended (StagePostFired: ok, denied, cancelled,
	// failed) or how a tool call ended (ToolExecutionEnd: see the
	// ToolOutcome constants).
	Outcome string `json:"outcome,omitempty"`
	// ToolResults are, on TurnEnd, the turn's tool_result blocks in call
	// order (empty when the model asked for no tool), as the Rust
	// agent-loop Turn's TurnEnd.tool_results.
	ToolResults []llm.Block `json:"tool_results,omitempty"`
}

// Outcomes of a tool call on its ToolExecutionEnd event (Event.Outcome).
const (
	ToolSucceeded = "succeeded" // the tool ran and its result is not an error
	ToolFailed    = "failed"    // the tool ran and returned an is_error result
	ToolCancelled = "cancelled" // the context was cancelled before or while it ran
	ToolDenied    = "denied"    // the authority stack refused it; it did not run
	ToolNotRun    = "not_run"   // not run for another reason (cut at max_tokens, a repeated id, interrupted by a crash)
)
