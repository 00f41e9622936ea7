package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/strata-agent/strata/compact"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// State is everything the loop knows about one conversation, as plain data:
// it encodes to JSON and decodes again without loss, so a driver may store
// it between any two steps (a crash-safe checkpoint, a durable workflow's
// state) and continue from the decoded copy with an Engine built from the
// same Config (docs/architecture.md, "the step engine").
//
// The engine reads and writes it; a driver treats it as opaque, apart from
// reading History, Usage and LoopID.
type State struct {
	// LoopID is the current loop: the running or last prompt's, or before
	// the first prompt the id that prompt will use.
	LoopID string `json:"loop_id"`
	// PreviousLoopID is the loop LoopID continues ("" = none known).
	PreviousLoopID string `json:"previous_loop_id,omitempty"`
	// ConversationID stays the same across the loops of the conversation
	// (Config.ConversationID).
	ConversationID string `json:"conversation_id"`
	// History is the conversation: every message sent and received, the
	// detached ones included (Detached counts those).
	History []llm.Message `json:"history"`
	// Turns is the index of the current loop's next turn.
	Turns int `json:"turns"`
	// Fresh says the running prompt's first turn starts a new loop, whose
	// id is NextLoopID once picked.
	Fresh      bool   `json:"fresh,omitempty"`
	NextLoopID string `json:"next_loop_id,omitempty"`
	// Usage sums every model call of the conversation, in tokens.
	Usage llm.Usage `json:"usage"`
	// FirstTrigger is the trigger of the next prompt's first turn ("" =
	// user).
	FirstTrigger event.Trigger `json:"first_trigger,omitempty"`
	// Always and Never are the tools the person allowed or rejected for the
	// rest of the conversation (AllowAlways, RejectAlways), by name.
	Always map[string]bool `json:"allowed_always,omitempty"`
	Never  map[string]bool `json:"rejected_always,omitempty"`
	// Detached is how many leading History messages compaction moved into
	// Chunks; ChunkAt is when each chunk was detached (Unix ms; 0 = while
	// warming a restored layout).
	Detached int             `json:"detached,omitempty"`
	Chunks   []compact.Chunk `json:"chunks,omitempty"`
	ChunkAt  []int64         `json:"chunk_at,omitempty"`
	// TLDR is the usage of compaction's tl;dr requests not yet counted in
	// a turn.
	TLDR llm.Usage `json:"tldr_usage,omitzero"`
	// Layout is the layout's own state after the last request it
	// assembled, for layouts that keep one (prompt.Stateful); nil for
	// stateless layouts. LayoutName names the layout that assembled it.
	Layout     json.RawMessage `json:"layout,omitempty"`
	LayoutName string          `json:"layout_name,omitempty"`
	// Run is the prompt in progress (nil when none runs).
	Run *Run `json:"run,omitempty"`
	// HistoryDigest is set by Agent.Checkpoint, which leaves History out:
	// the hex SHA-256 of the history's JSON, so RestoreState uses the
	// checkpoint only with the history it was taken of.
	HistoryDigest string `json:"history_sha256,omitempty"`
}

// historyDigest returns the hex SHA-256 of h's JSON encoding.
func historyDigest(h []llm.Message) string {
	b, err := json.Marshal(h)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// phase is where a Run stands.
type phase string

const (
	phaseTop       phase = "top"       // the top of a loop iteration: steering, limits, then a turn
	phaseSend      phase = "send"      // a request is composed and awaits its response (StepSend)
	phaseAuthorize phase = "authorize" // the response's tool calls are being authorized (StepApprove)
	phaseExecute   phase = "execute"   // the approved calls run one at a time (StepRunTool)
	phaseDone      phase = "done"      // the prompt ended (StepDone)
)

// Run is one prompt in progress: the loop's local variables and the turn
// under way. Drivers do not read it; it is exported only so State encodes
// whole.
type Run struct {
	Phase         phase         `json:"phase"`
	CorrelationID string        `json:"correlation_id"`
	Trigger       event.Trigger `json:"trigger"`
	// Input are the user messages the next turn sends first (the prompt,
	// steering, a follow-up).
	Input []llm.Message `json:"input,omitempty"`
	// Round says the next model call answers tool results (a continuation
	// round, counted against Config.MaxTurns).
	Round  bool   `json:"round,omitempty"`
	Result Result `json:"result"`
	// Stage is the open stage (docs/loop.md, rule 12) and StageTurn the
	// turn its events carry (nil at receive_input and render).
	Stage     Stage         `json:"stage,omitempty"`
	StageTurn *event.TurnID `json:"stage_turn,omitempty"`
	// Resuming says the tool calls under way are a crashed turn's pending
	// calls (Resume): no TurnStart was emitted and no after_turn runs.
	Resuming bool `json:"resuming,omitempty"`

	// The turn under way.
	Turn      event.TurnID      `json:"turn"`
	TurnInput []llm.Message     `json:"turn_input,omitempty"`
	StartedAt time.Time         `json:"started_at"`
	Request   *llm.Request      `json:"request,omitempty"`
	Breakdown *prompt.Breakdown `json:"breakdown,omitempty"`
	// Started says the response's first delta arrived (SEND_REQUEST has
	// ended); HookErr is a send_request post or stream_response pre hook's
	// denial, returned once the stream ends; Cut says a delta guard cut
	// the response off.
	Started bool       `json:"started,omitempty"`
	HookErr *StepError `json:"hook_error,omitempty"`
	Cut     *StepError `json:"cut,omitempty"`
	// Response is the turn's answer once it arrived; Used its usage plus
	// the turn's tl;dr requests.
	Response *llm.Response `json:"response,omitempty"`
	Used     llm.Usage     `json:"used"`
	// The response's tool calls as they run (after tool_call pre
	// transforms), whether each is approved, the outcome of those that do
	// not run, every call's tool_result, the calls settled without running
	// (repeated ids, interrupted calls) and the call being authorized or
	// run (Next); Asking says it awaits an approval.
	Calls    []llm.Block       `json:"calls,omitempty"`
	Approved []bool            `json:"approved,omitempty"`
	Outcomes []string          `json:"outcomes,omitempty"`
	Results  []llm.Block       `json:"results,omitempty"`
	Settled  map[string]string `json:"settled,omitempty"`
	Next     int               `json:"next"`
	// Ended is the index among Calls of a call whose tool ends the turn
	// (tool.Traits.EndsTurn) and that succeeded; -1 = none.
	Ended  int  `json:"ended"`
	Asking bool `json:"asking,omitempty"`
	// Err is the error the prompt ended with (phaseDone).
	Err *StepError `json:"error,omitempty"`
}

// StepError is an error as the step state keeps it: its text, and which of
// the package's errors (ErrDenied, ErrMaxTurns, ErrTokenLimit, ErrAborted)
// or the context's it wraps, so errors.Is still answers after the state went
// through JSON. A live error kept while the state stays in memory is
// returned as it was (Unwrap).
type StepError struct {
	Text string `json:"text"`
	Kind string `json:"kind,omitempty"` // denied, max_turns, token_limit, aborted, canceled, deadline
	live error
}

var errKinds = []struct {
	kind string
	err  error
}{
	{"denied", ErrDenied}, {"max_turns", ErrMaxTurns}, {"token_limit", ErrTokenLimit},
	{"aborted", ErrAborted}, {"canceled", context.Canceled}, {"deadline", context.DeadlineExceeded},
}

// stepErr wraps err for the state (nil for nil).
func stepErr(err error) *StepError {
	if err == nil {
		return nil
	}
	if se, ok := err.(*StepError); ok {
		return se
	}
	e := &StepError{Text: err.Error(), live: err}
	for _, k := range errKinds {
		if errors.Is(err, k.err) {
			e.Kind = k.kind
			break
		}
	}
	return e
}

// Error returns the error's text.
func (e *StepError) Error() string { return e.Text }

// Unwrap returns the live error when the state never left memory, else the
// package or context error Kind names.
func (e *StepError) Unwrap() error {
	if e.live != nil {
		return e.live
	}
	for _, k := range errKinds {
		if k.kind == e.Kind {
			return k.err
		}
	}
	return nil
}

// err returns e as an error: the live error when there is one (so callers
// see exactly what the loop returned before the step engine), nil for nil.
func (e *StepError) err() error {
	switch {
	case e == nil:
		return nil
	case e.live != nil:
		return e.live
	}
	return e
}
