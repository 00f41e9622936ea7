// Package agent runs the agent loop: for each user message it composes a
// request through a prompt.Layout, streams the model's answer from an
// llm.Provider, executes the tool calls it asks for through a tool.Registry,
// feeds the results back, and repeats until the model ends its turn or a limit
// is hit (docs/loop.md, docs/turn.md).
//
// Each user turn passes the stages RECEIVE_INPUT → COMPOSE_REQUEST →
// SEND_REQUEST → STREAM_RESPONSE → TOOL_CALL → RENDER, each with pre and post
// hooks (transform, guard, observer; see Hook). Every tool call goes through
// the authority stack: the agent's allowed tools, the approval Mode (with an
// Approver for ask), guard hooks (any deny wins), then execution.
//
// Every step is reported on an event.Bus in the strict order of docs/turn.md.
// Events are observations only: nothing an observer does changes the loop.
//
// # Tool calls: one result per tool_use id
//
// A response's tool calls are authorized in call order, then run one at a
// time in call order; each gets exactly one tool_result. When a response
// repeats a tool_use id, the first call with the id runs and every later
// one gets a unique id ("<id>_dup2", …) in the kept assistant message and an
// is_error tool_result saying it was not run, so the next request is valid
// on every provider (Anthropic and OpenAI both require unique ids, each
// answered once).
//
// # Delivery guarantee
//
// While the process lives, every tool call runs at most once: nothing
// retries a tool (a provider's retried request happens before any call
// runs), and a cancelled call is not run again. After a crash (kill -9,
// power loss) a session recorded step by step (session.Recorder) resumes
// with Resume, which never runs again a call whose result was stored, and
// by tool kind:
//
//   - side-effecting tools (execute_bash, fs_write, todo_list, MCP tools,
//     use_subagent, any tool ResumeOptions.ReadOnly does not name): at most
//     once. The call that may have been running at the crash is reported to
//     the model as interrupted (an is_error tool_result: it may have partly
//     run, its output is lost) and not run again; the side-effecting calls
//     after it in the same response, which never started, are not run
//     either. The process group of an interrupted execute_bash call is
//     killed when strata dies (package tool), so it does not run on
//     unobserved either.
//   - read-only tools (ResumeOptions.ReadOnly; the runtime names fs_read,
//     grep and glob): at least once — an interrupted one is simply run again.
//   - with ResumeOptions.RerunInterrupted (strata sessions resume
//     --rerun-interrupted): every pending call runs again, at least once.
package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-agent/strata/compact"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/token"
	"github.com/strata-agent/strata/tool"
)

// DefaultMaxTurns is the continuation limit when Config.MaxTurns is 0: 50
// continuation rounds per user turn (docs/loop.md, "continuation limit": the
// message-loop design's settings.json.runtime.continuation.maxIterations
// defaults to 50).
const DefaultMaxTurns = 50

// Errors returned (wrapped) by Prompt and Resume.
var (
	// ErrMaxTurns: a user turn needed more continuation rounds (tool results
	// sent back to the model) than Config.MaxTurns allows. Tool calls made
	// before the limit have run; their results were not sent to the model.
	ErrMaxTurns = errors.New("agent: max turns reached")
	// ErrTokenLimit: the loop's total tokens reached Config.MaxSessionTokens.
	ErrTokenLimit = errors.New("agent: session token limit reached")
	// ErrAborted: Config.BeforeTurn returned an error and the turn did not run.
	ErrAborted = errors.New("agent: turn aborted by before_turn")
	// ErrDenied: a guard hook denied the input or the request.
	ErrDenied = errors.New("agent: denied by a guard hook")
	// ErrBusy: Prompt, PromptWith or Resume was called while another of
	// them was running on the same Agent. It is returned at once, unwrapped,
	// before any event or history change; wait for the running call to
	// return, or add to it with Steer or FollowUp.
	ErrBusy = errors.New("agent: a prompt is already running on this agent")
)

// Config wires an Agent. Provider, Layout and Tools are required.
type Config struct {
	Provider llm.Provider
	Layout   prompt.Layout
	Tools    *tool.Registry
	// Env is the workspace the tools run in; nil means an Env with an empty
	// Workdir (the process's working directory).
	Env   *tool.Env
	Model string // model id sent to the provider
	// Params are the request knobs set on every request after the layout
	// assembled it (output cap, temperature, reasoning, tool choice);
	// Params.MaxTokens also reaches the layout as Context.MaxTokens.
	Params llm.Params
	// Context is the template of every turn's prompt.Context: system
	// instructions, summary, hook outputs, files, skills. The loop fills in
	// Model, MaxTokens, Tools, History, API (from Provider.API),
	// ConversationID (see ConversationID) and Now each turn.
	Context prompt.Context
	// ConversationID identifies the conversation for prompt.Context
	// ConversationID (which some layouts send as OpenAI's
	// prompt_cache_key): it stays the same across the loops of the
	// conversation's prompts. "" = the id of the agent's first loop (New)
	// or of the loop it restores (Restore); a restored session sets it to
	// its first loop's (session.LoopRecord.ConversationID) so its requests
	// keep the key the uninterrupted run sent.
	ConversationID string
	// Gather, when set, fills the parts of a turn's context that change
	// outside the conversation (the runtime's repository file tree, symbol
	// map and reminder). It is called on every request's context before
	// the compose_request pre hooks, and on each past request a restored
	// loop replays into its layout (with the workspace as it is now), so a
	// resumed loop's layout state matches the uninterrupted one's when the
	// files did not change. An error is reported as a Progress event and
	// the request goes on with what was filled.
	Gather func(ctx context.Context, c *prompt.Context) error
	// Now is the loop's clock (nil = time.Now): Context.Now, event times,
	// turn records' StartedAt/EndedAt and compaction dates. A fixed clock
	// makes requests and events reproducible (`strata render --now`).
	Now func() time.Time
	// NewID returns the ids the loop makes: correlation ids and new loop
	// ids (nil = NewID, 16 random hex digits). With a fixed sequence two
	// runs of the same session produce the same bytes.
	NewID func() string
	// MaxTurns is the continuation limit: continuation rounds per user
	// message (0 = DefaultMaxTurns). A round is TOOL_CALL → COMPOSE_REQUEST,
	// the model call that answers a response's tool results (all the calls
	// of one response are one round, as the message-loop design counts);
	// an Anthropic pause_turn continuation counts as a round too; the first
	// model call of a user turn and calls made only for steering or
	// follow-up messages are not rounds. MaxTurns N allows N+1 model
	// calls answering tools: with 1, one tool round-trip.
	MaxTurns int
	// MaxSessionTokens caps the conversation's total tokens (llm.Usage.Total summed
	// over every model call); 0 = no cap. It is checked before each turn.
	MaxSessionTokens int64
	// MaxCallsPerResponse and MaxSubAgentsPerResponse cap the tool calls,
	// and the use_subagent calls among them, of one model response that
	// run, counted in call order (0 = no cap): a call over a cap that the
	// agent's tools, Denied and Authority let through gets an is_error
	// tool_result naming the limit, and nobody is asked about it
	// (docs/security.md, "Limits you can set"). The engine decides it from
	// the response alone, so a driver running the calls on many machines
	// (package durable) caps them exactly.
	MaxCallsPerResponse, MaxSubAgentsPerResponse int
	// Bus receives the loop's events; nil means events are discarded.
	Bus *event.Bus

	// Hooks run at the stages' pre and post points, in registration order.
	Hooks []Hook
	// AllowedTool is step 1 of the authority stack: the agent's tools (kiro
	// `tools`). nil allows every registered tool.
	AllowedTool func(name string) bool
	// Denied, when non-nil, refuses a call the agent's tools allow before
	// any mode or approver sees it, in every mode (kiro's deniedCommands,
	// deniedPaths, denyByDefault: "deny without asking"): a non-empty
	// reason denies, and the model reads it in the tool_result.
	Denied func(call llm.Block) (reason string)
	// Authority, when set, is a driving state machine's decision for a
	// call the agent's tools permit (docs/workflows.md, "authority"): it
	// replaces the mode gate, which then never sees the call. It returns
	// who approved the call, or the reason it is denied; the guard hooks
	// still judge an approved call.
	Authority func(call llm.Block) (by, reason string)
	// Mode is step 2: how allowed calls are approved ("" = ModeAll).
	Mode Mode
	// PreApproved says whether a call is approved without asking in
	// ModeAllowlist (kiro `allowedTools` and `toolsSettings`). nil approves
	// nothing.
	PreApproved func(call llm.Block) bool
	// PersonOnly, when set, reports a call that only a person's approval of
	// that very call allows (a path outside the workspace, strata's own
	// configuration: docs/security.md, "Who may approve what"): an "allow
	// always" answer given for its tool never covers it, and answering it
	// with AllowAlways allows only this call. nil = no such calls.
	PersonOnly func(call llm.Block) bool
	// Approver answers for calls ModeAsk and ModeAllowlist cannot decide;
	// nil rejects them with a reason saying no approver is configured. The
	// Engine asks (StepApprove) only when it is set; a driver that answers
	// approvals itself (a durable workflow waiting for a signal) sets one
	// all the same and answers the step its own way.
	Approver Approver
	// BeforeTurn runs before every turn, after the limits are checked; an
	// error aborts the turn (ErrAborted). AfterTurn runs after every turn
	// with its record.
	BeforeTurn func(ctx context.Context, info TurnInfo) error
	AfterTurn  func(ctx context.Context, rec TurnRecord)
	// Compaction, when set, detaches old messages into frozen conversation
	// history chunks (package compact, docs/panels.md rule 3) before a request is
	// composed; the chunks reach the layout as the context's Detached and
	// in its Summary, after any summary of the template. nil keeps every
	// message live.
	Compaction *compact.Policy
	// ContextWindow is the model's context window in tokens (0 = unknown).
	// When a composed request (estimated with Counter, output cap included)
	// would exceed it, COMPOSE_REQUEST detaches the oldest prompts into
	// frozen chunks until it fits, whether or not Compaction is set (the
	// message-loop design; docs/loop.md, rule 3).
	ContextWindow int
	// Counter counts tokens for the context-window check (nil = the fast
	// estimator, about 4 bytes per token).
	Counter token.Counter
}

// TurnInfo describes a turn about to start (docs/turn.md, before_turn).
type TurnInfo struct {
	ID            event.TurnID
	Trigger       event.Trigger
	CorrelationID string
}

// TurnRecord is one finished turn (docs/turn.md): its input messages, the
// assistant message, the tool results, usage in tokens and wall-clock times.
type TurnRecord struct {
	TurnInfo
	Input       []llm.Message
	Output      llm.Message
	ToolResults []llm.Block
	Usage       llm.Usage
	StopReason  llm.StopReason
	StartedAt   time.Time
	EndedAt     time.Time
	Err         error // non-nil when the turn failed
}

// Agent is one conversation with a model: a loop per user prompt
// (docs/turn.md, rule 2), each with its own loop id and turns indexed from
// 0, sharing one history. It is the in-process driver of the step Engine:
// it sends requests to the Config's provider, asks its Approver and runs
// tools in this process, one step after another. It runs one Prompt,
// PromptWith or Resume at a time: a call made while another runs returns
// ErrBusy. Steer, SteerRunning and FollowUp may be called from any goroutine
// at any time.
// The other methods (History, SetMode, SetFirstTrigger, ...) must not be
// called while a prompt runs; Usage may.
type Agent struct {
	busy  atomic.Bool // a Prompt, PromptWith or Resume is running
	eng   *Engine
	st    *State
	queue Queue

	mu    sync.Mutex
	usage llm.Usage // State.Usage as of the last step, for Usage from other goroutines
}

// New checks cfg and returns an agent with an empty history and a new loop
// id, which its first prompt uses.
func New(cfg Config) (*Agent, error) {
	if cfg.NewID == nil {
		cfg.NewID = NewID
	}
	return Restore(cfg, cfg.NewID(), nil, 0)
}

// Restore returns an agent continuing loop loopID (a resumed session) with
// the conversation's stored history; next is the index of the loop's next
// turn. Resume finishes that loop; the next prompt starts a new loop
// continuing it (event.Event.PreviousLoopID), unless next is 0 — a loop
// that has run no turn yet, such as a new branch, takes the next prompt
// itself. It fails like New.
func Restore(cfg Config, loopID string, history []llm.Message, next int) (*Agent, error) {
	return RestoreState(cfg, loopID, history, next, nil)
}

// RestoreState is Restore with the loop state stored at the end of the
// loop's last turn (State with its History and Run left out, see
// Agent.Checkpoint): when it carries the layout's own state the layout is
// not replayed over the history, so restoring costs O(n) in the history's
// length instead of one assembly per stored request. A nil or unusable
// saved state (another layout, another history length) falls back to the
// replay.
func RestoreState(cfg Config, loopID string, history []llm.Message, next int, saved *State) (*Agent, error) {
	a := &Agent{}
	if cfg.ConversationID == "" {
		cfg.ConversationID = loopID
	}
	eng, err := NewEngine(cfg, &a.queue)
	if err != nil {
		return nil, err
	}
	st, err := eng.NewState(loopID, history, next, saved)
	if err != nil {
		return nil, err
	}
	a.eng, a.st = eng, st
	return a, nil
}

// checkConfig validates cfg and fills its defaults.
func checkConfig(cfg Config) (Config, error) {
	switch {
	case cfg.Provider == nil:
		return cfg, errors.New("agent: Config.Provider is nil")
	case cfg.Layout == nil:
		return cfg, errors.New("agent: Config.Layout is nil")
	case cfg.Tools == nil:
		return cfg, errors.New("agent: Config.Tools is nil")
	case cfg.MaxTurns < 0:
		return cfg, fmt.Errorf("agent: Config.MaxTurns is %d; want ≥ 0", cfg.MaxTurns)
	case cfg.ContextWindow < 0:
		return cfg, fmt.Errorf("agent: Config.ContextWindow is %d tokens; want ≥ 0 (0 = unknown)", cfg.ContextWindow)
	case cfg.MaxSessionTokens < 0:
		return cfg, fmt.Errorf("agent: Config.MaxSessionTokens is %d; want ≥ 0", cfg.MaxSessionTokens)
	}
	switch cfg.Mode {
	case "":
		cfg.Mode = ModeAll
	case ModeAll, ModeAsk, ModeAllowlist:
	default:
		return cfg, fmt.Errorf("agent: Config.Mode %q; want ask, allowlist or all", cfg.Mode)
	}
	for i, h := range cfg.Hooks {
		if h.Func == nil || h.Stage == "" || (h.Phase != PhasePre && h.Phase != PhasePost && h.Phase != PhaseDelta) {
			return cfg, fmt.Errorf("agent: Config.Hooks[%d] (%q): needs Func, Stage and Phase pre, post or delta", i, h.Name)
		}
		if h.Phase == PhaseDelta && h.Stage != StageStreamResponse {
			return cfg, fmt.Errorf("agent: Config.Hooks[%d] (%q): phase delta exists only at stage %s, not %s", i, h.Name, StageStreamResponse, h.Stage)
		}
	}
	if cfg.MaxTurns == 0 {
		cfg.MaxTurns = DefaultMaxTurns
	}
	if cfg.Env == nil {
		cfg.Env = &tool.Env{}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		cfg.NewID = NewID
	}
	return cfg, nil
}

// LoopID returns the id of the agent's current loop: the running prompt's,
// else the last prompt's, else (before the first prompt) the id the first
// prompt will use.
func (a *Agent) LoopID() string { return a.st.LoopID }

// ConversationID returns the conversation's id (Config.ConversationID),
// the same for every loop of the agent.
func (a *Agent) ConversationID() string { return a.st.ConversationID }

// History returns the conversation so far (shared; do not modify).
func (a *Agent) History() []llm.Message { return a.st.History }

// Checkpoint returns a copy of the agent's loop state without its history
// and without a prompt in progress: what RestoreState takes to restore the
// loop in O(n). Call it between prompts (after_turn of a loop's last turn,
// or after Prompt returned).
func (a *Agent) Checkpoint() State {
	c := *a.st
	c.HistoryDigest = historyDigest(c.History)
	c.History, c.Run = nil, nil
	c.Layout = append([]byte(nil), c.Layout...)
	return c
}

// Usage returns the summed usage of every model call of the conversation
// (all its loops). It is safe to call while a prompt runs, from any
// goroutine.
func (a *Agent) Usage() llm.Usage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.usage
}

// RestoreUsage sets the usage of the model calls a restored loop made
// before it was restored (the sum of its stored turns' usage), so Usage,
// the session token limit and the layouts' statistics (prompt.Context.Usage)
// continue from it. Call it after Restore, before the first prompt.
func (a *Agent) RestoreUsage(u llm.Usage) {
	a.st.Usage = u
	a.syncUsage()
}

func (a *Agent) syncUsage() {
	a.mu.Lock()
	a.usage = a.st.Usage
	a.mu.Unlock()
}

// SetFirstTrigger sets the trigger of the next user turn's first model call:
// event.TriggerSubAgent for a child loop, event.TriggerBranch for a branched
// loop. It applies once; later turns are TriggerUser again.
func (a *Agent) SetFirstTrigger(t event.Trigger) { a.st.FirstTrigger = t }

// Result is the outcome of one user turn.
type Result struct {
	Message    llm.Message    `json:"message"`     // the last assistant message
	StopReason llm.StopReason `json:"stop_reason"` // its stop reason
	Usage      llm.Usage      `json:"usage"`       // summed over the model calls of this user turn, compaction's tl;dr requests included
	Turns      int            `json:"turns"`       // model calls made
	Rounds     int            `json:"rounds"`      // continuation rounds made (see Config.MaxTurns)
	// ToolResult is the result of the call that ended the loop when a tool
	// whose tool.Traits.EndsTurn is set ran successfully (a completion
	// tool), and EndedBy that tool's name; nil and "" otherwise.
	ToolResult *llm.Block `json:"tool_result,omitempty"`
	EndedBy    string     `json:"ended_by,omitempty"`
}

// Prompt runs one user turn: it passes text through the receive_input hooks,
// appends it as a user message and loops (compose → send → stream → tools)
// until the model stops without asking for tools and no follow-up is queued.
// Errors (wrapped): ErrDenied when a guard hook refuses the input or a
// request; ErrMaxTurns, ErrTokenLimit (after an AgentStopped event);
// ErrAborted; the provider's error when a model call fails (the failed call
// leaves no assistant message in the history); ctx.Err() when cancelled;
// ErrBusy (at once, nothing done) while another prompt runs on a. The
// error, if any, is also the Err of the SessionTurnEnd event.
func (a *Agent) Prompt(ctx context.Context, text string) (*Result, error) {
	return a.PromptWith(ctx, text, nil)
}

// PromptWith is Prompt with attachments (image blocks, e.g. from an ACP
// client) placed after the text in the user message; the receive_input hooks
// see the text. text may be empty when there are attachments.
func (a *Agent) PromptWith(ctx context.Context, text string, attachments []llm.Block) (*Result, error) {
	if !a.busy.CompareAndSwap(false, true) {
		return nil, ErrBusy
	}
	defer a.busy.Store(false)
	return a.drive(ctx, a.eng.Start(ctx, a.st, text, attachments))
}

// drive carries out the engine's steps in this process until the prompt
// ends.
func (a *Agent) drive(ctx context.Context, st Step) (*Result, error) {
	for {
		a.syncUsage()
		switch st.Kind {
		case StepSend:
			st = a.send(ctx, st)
		case StepApprove:
			d, err := a.eng.cfg.Approver.Approve(ctx, *st.Approval)
			st = a.eng.Approved(ctx, a.st, d, err)
		case StepRunTool:
			st = a.eng.ToolDone(ctx, a.st, a.eng.RunTool(ctx, st))
		default:
			if st.Result == nil && st.Err == nil {
				return nil, nil
			}
			if st.Result == nil {
				return nil, st.Err
			}
			return st.Result, st.Err
		}
	}
}

// send streams a StepSend's request from the Config's provider.
func (a *Agent) send(ctx context.Context, st Step) Step {
	streamCtx, cut := context.WithCancel(ctx)
	defer cut()
	cutOff := false
	resp, err := a.eng.cfg.Provider.Stream(streamCtx, st.Request, func(d llm.Delta) {
		if cutOff {
			return
		}
		if a.eng.Delta(ctx, a.st, d) != nil {
			cutOff = true
			cut()
		}
	})
	return a.eng.Responded(ctx, a.st, resp, err)
}

// NewID returns a random 16-hex-digit id for loops and correlation.
func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// SetMode changes the approval mode for the next user turn (ACP
// session/set_mode). An unknown mode is ignored.
func (a *Agent) SetMode(m Mode) {
	switch m {
	case ModeAsk, ModeAllowlist, ModeAll:
		a.eng.cfg.Mode = m
	}
}

func ptr[T any](v T) *T { return &v }
