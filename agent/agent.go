// Package agent runs the agent loop: for each user message it composes a
// request through a prompt.Layout, streams the model's answer from an
// llm.Provider, executes the tool calls it asks for through a tool.Registry,
// feeds the results back, and repeats until the model ends its turn or a limit
// is hit (seed 001 "Message Loop", seed 003 "Turn").
//
// Every step is reported on an event.Bus in the strict order of seed 003.
// Events are observations only: nothing an observer does changes the loop.
package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/tool"
)

// DefaultMaxTurns is the continuation limit when Config.MaxTurns is 0 (seed
// 001: settings.json.runtime.continuation.maxIterations defaults to 50).
const DefaultMaxTurns = 50

// ErrMaxTurns is returned (wrapped) when a user turn needs more model calls
// than Config.MaxTurns allows. Tool calls made before the limit have run.
var ErrMaxTurns = errors.New("agent: max turns reached")

// Config wires an Agent. Provider, Layout and Tools are required.
type Config struct {
	Provider llm.Provider
	Layout   prompt.Layout
	Tools    *tool.Registry
	// Env is the workspace the tools run in; nil means the tools get an Env
	// with an empty Workdir (and will refuse relative paths).
	Env       *tool.Env
	Model     string // model id sent to the provider
	MaxTokens int64  // output cap per model call, tokens; 0 = provider default
	// Context is the template of every turn's prompt.Context: system
	// instructions, summary, hook outputs, files, skills. The loop fills in
	// Model, MaxTokens, Tools and History each turn.
	Context prompt.Context
	// MaxTurns is the continuation limit: model calls per user message
	// (0 = DefaultMaxTurns).
	MaxTurns int
	// Bus receives the loop's events; nil means events are discarded.
	Bus *event.Bus
}

// Agent is one conversation (one loop) with a model. It is not safe for
// concurrent use: run one Prompt at a time.
type Agent struct {
	cfg     Config
	loopID  string
	history []llm.Message
	turns   int // turns started in this loop (next turn index)
	usage   llm.Usage
}

// New checks cfg and returns an agent with an empty history.
func New(cfg Config) (*Agent, error) {
	switch {
	case cfg.Provider == nil:
		return nil, errors.New("agent: Config.Provider is nil")
	case cfg.Layout == nil:
		return nil, errors.New("agent: Config.Layout is nil")
	case cfg.Tools == nil:
		return nil, errors.New("agent: Config.Tools is nil")
	case cfg.MaxTurns < 0:
		return nil, fmt.Errorf("agent: Config.MaxTurns is %d; want ≥ 0", cfg.MaxTurns)
	}
	if cfg.MaxTurns == 0 {
		cfg.MaxTurns = DefaultMaxTurns
	}
	if cfg.Env == nil {
		cfg.Env = &tool.Env{}
	}
	return &Agent{cfg: cfg, loopID: NewID()}, nil
}

// LoopID returns the id of the agent's loop.
func (a *Agent) LoopID() string { return a.loopID }

// History returns the conversation so far (shared; do not modify).
func (a *Agent) History() []llm.Message { return a.history }

// Usage returns the summed usage of every model call in the loop.
func (a *Agent) Usage() llm.Usage { return a.usage }

// Result is the outcome of one user turn.
type Result struct {
	Message    llm.Message    // the last assistant message
	StopReason llm.StopReason // its stop reason
	Usage      llm.Usage      // summed over the model calls of this user turn
	Turns      int            // model calls made
}

// Prompt runs one user turn: it appends text as a user message and loops
// (compose → send → stream → tools) until the model stops without asking for
// tools. It returns ErrMaxTurns (wrapped, after an AgentStopped event) when
// the continuation limit is reached, the provider's error when a model call
// fails (the failed call leaves no assistant message in the history), and
// ctx.Err() when cancelled.
func (a *Agent) Prompt(ctx context.Context, text string) (*Result, error) {
	if strings.TrimSpace(text) == "" {
		return nil, errors.New("agent: prompt is empty")
	}
	corr := NewID()
	a.emit(event.Event{Kind: event.SessionTurnStart, CorrelationID: corr, Text: text})
	res := &Result{}
	input := []llm.Message{a.appendUser(llm.TextBlock(text))}
	trigger := event.TriggerUser
	for {
		if res.Turns >= a.cfg.MaxTurns {
			msg := fmt.Sprintf("[agent stopped: max turns %d reached; tool calls made before the limit have completed]", a.cfg.MaxTurns)
			a.emit(event.Event{Kind: event.AgentStopped, CorrelationID: corr, Text: msg, Error: ErrMaxTurns.Error()})
			a.emit(event.Event{Kind: event.SessionTurnEnd, CorrelationID: corr, Usage: ptr(res.Usage), Error: ErrMaxTurns.Error()})
			return res, fmt.Errorf("%w (%d)", ErrMaxTurns, a.cfg.MaxTurns)
		}
		resp, err := a.turn(ctx, corr, trigger, input, res)
		if err != nil {
			a.emit(event.Event{Kind: event.SessionTurnEnd, CorrelationID: corr, Usage: ptr(res.Usage), Error: err.Error()})
			return res, err
		}
		input, trigger = nil, event.TriggerContinuation
		res.Message, res.StopReason = resp.Message, resp.StopReason
		if !a.continues(resp) {
			break
		}
	}
	a.emit(event.Event{Kind: event.SessionTurnEnd, CorrelationID: corr, Usage: ptr(res.Usage), StopReason: res.StopReason})
	return res, nil
}

// continues reports whether the loop makes another model call after resp:
// after tool results, and after an Anthropic pause_turn (the paused assistant
// message is sent back as is, per the Anthropic docs on server tools).
func (a *Agent) continues(resp *llm.Response) bool {
	if resp.StopReason == llm.StopPauseTurn {
		return true
	}
	return len(resp.Message.ToolUses()) > 0 && resp.StopReason != llm.StopMaxTokens
}

// turn runs one model call and the tool calls it asks for.
func (a *Agent) turn(ctx context.Context, corr string, trig event.Trigger, input []llm.Message, res *Result) (*llm.Response, error) {
	id := &event.TurnID{LoopID: a.loopID, Index: a.turns}
	a.turns++
	res.Turns++
	a.emit(event.Event{Kind: event.TurnStart, CorrelationID: corr, Turn: id, Trigger: trig})
	for i := range input {
		a.emit(event.Event{Kind: event.MessageStart, CorrelationID: corr, Turn: id, Message: &llm.Message{Role: input[i].Role}})
		a.emit(event.Event{Kind: event.MessageEnd, CorrelationID: corr, Turn: id, Message: &input[i]})
	}
	fail := func(err error) (*llm.Response, error) {
		a.emit(event.Event{Kind: event.TurnEnd, CorrelationID: corr, Turn: id, Error: err.Error()})
		return nil, err
	}
	pc := a.cfg.Context
	pc.Model, pc.MaxTokens, pc.Tools, pc.History = a.cfg.Model, a.cfg.MaxTokens, a.cfg.Tools.Specs(), a.history
	pc.Now = time.Now().UnixMilli()
	req, _, err := a.cfg.Layout.Assemble(&pc)
	if err != nil {
		return fail(fmt.Errorf("compose request (layout %s): %w", a.cfg.Layout.Name(), err))
	}
	a.emit(event.Event{Kind: event.ProviderRequest, CorrelationID: corr, Turn: id, Provider: a.cfg.Provider.Name(), Model: req.Model})
	started := false
	resp, err := a.cfg.Provider.Stream(ctx, req, func(d llm.Delta) {
		if !started {
			started = true
			a.emit(event.Event{Kind: event.MessageStart, CorrelationID: corr, Turn: id, Message: &llm.Message{Role: llm.RoleAssistant}})
		}
		a.emit(event.Event{Kind: event.MessageUpdate, CorrelationID: corr, Turn: id, Delta: &d})
	})
	if err != nil {
		a.emit(event.Event{Kind: event.ProviderError, CorrelationID: corr, Turn: id, Provider: a.cfg.Provider.Name(), Error: err.Error()})
		return fail(err)
	}
	if !started {
		a.emit(event.Event{Kind: event.MessageStart, CorrelationID: corr, Turn: id, Message: &llm.Message{Role: llm.RoleAssistant}})
	}
	a.history = append(a.history, resp.Message)
	a.usage = a.usage.Add(resp.Usage)
	res.Usage = res.Usage.Add(resp.Usage)
	a.emit(event.Event{Kind: event.MessageEnd, CorrelationID: corr, Turn: id, Message: &resp.Message, StopReason: resp.StopReason})
	a.emit(event.Event{Kind: event.ProviderResponse, CorrelationID: corr, Turn: id, Provider: a.cfg.Provider.Name(),
		Model: resp.Model, Usage: &resp.Usage, StopReason: resp.StopReason})

	if calls := resp.Message.ToolUses(); len(calls) > 0 {
		results := a.runTools(ctx, corr, id, calls, resp.StopReason)
		a.appendUser(results...)
	}
	a.emit(event.Event{Kind: event.TurnEnd, CorrelationID: corr, Turn: id, Usage: &resp.Usage, StopReason: resp.StopReason})
	return resp, nil
}

// runTools executes calls in order and returns one tool_result per call. When
// the response was cut at max_tokens or ctx is cancelled, calls not yet run get
// an is_error result saying why, so the history stays a valid conversation.
func (a *Agent) runTools(ctx context.Context, corr string, id *event.TurnID, calls []llm.Block, stop llm.StopReason) []llm.Block {
	out := make([]llm.Block, 0, len(calls))
	for i := range calls {
		call := calls[i]
		var result llm.Block
		switch {
		case stop == llm.StopMaxTokens:
			result = llm.ToolResultBlock(call.ID, "tool call not executed: the model's response was cut off at max_tokens", true)
		case ctx.Err() != nil:
			result = llm.ToolResultBlock(call.ID, "tool call not executed: cancelled", true)
		default:
			a.emit(event.Event{Kind: event.ToolExecutionStart, CorrelationID: corr, Turn: id, ToolCall: &call})
			env := *a.cfg.Env
			env.Progress = func(msg string) {
				a.emit(event.Event{Kind: event.ToolExecutionUpdate, CorrelationID: corr, Turn: id, ToolCall: &call, Text: msg})
			}
			result = a.cfg.Tools.Execute(ctx, &env, call)
			a.emit(event.Event{Kind: event.ToolExecutionEnd, CorrelationID: corr, Turn: id, ToolCall: &call, ToolResult: &result})
		}
		out = append(out, result)
	}
	return out
}

// appendUser adds blocks as a user message, merging them into the last
// message when that is already a user message (tool results followed by the
// next prompt), so roles keep alternating. It returns the resulting message.
func (a *Agent) appendUser(blocks ...llm.Block) llm.Message {
	if n := len(a.history); n > 0 && a.history[n-1].Role == llm.RoleUser {
		a.history[n-1].Content = append(a.history[n-1].Content, blocks...)
		return a.history[n-1]
	}
	a.history = append(a.history, llm.Message{Role: llm.RoleUser, Content: blocks})
	return a.history[len(a.history)-1]
}

func (a *Agent) emit(e event.Event) {
	if a.cfg.Bus != nil {
		a.cfg.Bus.Emit(e)
	}
}

func ptr[T any](v T) *T { return &v }

// NewID returns a random 16-hex-digit id for loops and correlation.
func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
