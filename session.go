package strata

import (
	"context"
	"iter"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/config"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/wsrt"
	"github.com/strata-agent/strata/keepalive"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/mcp"
	"github.com/strata-agent/strata/tool"
)

// SessionOptions configure one Session. The zero value uses the workspace's
// directory, mode and approver.
type SessionOptions struct {
	// Cwd is the directory the session's tools run in ("" = the workspace's
	// Dir). An ACP client sends its own.
	Cwd string
	// Mode and Approver override the workspace's for this session.
	Mode     agent.Mode
	Approver agent.Approver
	// OnEvent observes every event of the session's loops, including
	// sub-agents', on its own goroutine in emission order (event.Bus
	// Subscribe; Close waits until it has seen every event).
	OnEvent event.Observer
	// OnEventSync observes every event inline, before the loop goes on
	// (event.Bus SubscribeSync): for observers whose side effects must be in
	// order with the loop's, such as a protocol that streams updates before
	// answering a request. It must not block for long.
	OnEventSync event.Observer
	// MCPServers are extra MCP servers for this session only (an ACP
	// client's), launched beside the agent's and terminated by Close.
	MCPServers []config.NamedMCPServer
	// Editor and Terminal let tools read/write files and run commands
	// through a client (ACP fs/* and terminal/* methods); nil = directly.
	Editor   tool.Editor
	Terminal tool.Terminal
	// Title names a new session in the store ("" = the first prompt).
	Title string
	// Overrides are the session's own settings on top of the workspace's:
	// its system prompt, a narrowing tool filter, extra tools (approved
	// like built-ins unless their tool.Traits say PreApproved), hooks and
	// continuation limit (agent.Overrides). They hold for every prompt,
	// fork and agent swap of the session.
	Overrides agent.Overrides
}

// Session is one conversation with the workspace's agent: an agent.Agent
// (its own layout instance; a loop per prompt), an event bus, and a recorder writing every
// completed step to the workspace's store. Prompt, Stream and ResumePending
// run one at a time; Steer, SetMode and Subscribe may be called from any
// goroutine.
type Session struct {
	rt *wsrt.Session
	ws *Workspace
}

// session wraps a runtime session of w.
func (w *Workspace) session(s *wsrt.Session, err error) (*Session, error) {
	if err != nil {
		return nil, err
	}
	return &Session{rt: s, ws: w}, nil
}

// NewSession starts a new stored session; its first prompt is its first
// loop (each prompt is a loop of its own: docs/turn.md, rule 2).
func (w *Workspace) NewSession(ctx context.Context, o SessionOptions) (*Session, error) {
	return w.session(w.rt.NewSession(ctx, wsrt.SessionOptions(o)))
}

// ResumeSession continues the stored session id (a unique prefix works) from
// its latest loop: the whole conversation is restored (the loops it
// continues included), the layout replays it (so the next request keeps the
// cached prefix), and Pending lists the tool calls a crash cut off, which
// ResumePending finishes in that loop. The next prompt is a new loop
// continuing it, its turns indexed from 0. A session with no stored loop
// (its first prompt stopped before its first model call, or it was never
// prompted) opens with an empty conversation. An unknown id is a
// *ConfigError wrapping session.ErrNotFound.
func (w *Workspace) ResumeSession(ctx context.Context, id string, o SessionOptions) (*Session, error) {
	return w.session(w.rt.ResumeSession(ctx, id, wsrt.SessionOptions(o)))
}

// BranchSession starts a new loop in the stored session id from the
// conversation up to and including its turn afterTurn, counted across the
// loops of the session's latest conversation from 0 (session.LoopRecord
// Numbered: the numbers `strata sessions show` lists, and those a session
// had when it was one loop). The new loop's first prompt is its turn 0,
// triggered by event.TriggerBranch. A session with no stored turn gives a
// *ConfigError wrapping session.ErrNotFound.
func (w *Workspace) BranchSession(ctx context.Context, id string, afterTurn int, o SessionOptions) (*Session, error) {
	return w.session(w.rt.BranchSession(ctx, id, afterTurn, wsrt.SessionOptions(o)))
}

// BranchSessionAt is BranchSession at turn index of loop loopID (a unique
// prefix works) of the session: any loop's turn, not only one of the latest
// conversation's.
func (w *Workspace) BranchSessionAt(ctx context.Context, id, loopID string, index int, o SessionOptions) (*Session, error) {
	return w.session(w.rt.BranchSessionAt(ctx, id, loopID, index, wsrt.SessionOptions(o)))
}

// ID returns the stored session's id.
func (s *Session) ID() string { return s.rt.ID() }

// LoopID returns the id of the session's current loop: the running or last
// prompt's (each prompt is a loop), else the loop the next prompt uses.
func (s *Session) LoopID() string { return s.rt.LoopID() }

// History returns the loop's conversation so far (shared; do not modify).
func (s *Session) History() []llm.Message { return s.rt.History() }

// Usage returns the summed usage of every model call of the loop and of
// the session's keep-alive pings (KeepAlive).
func (s *Session) Usage() llm.Usage { return s.rt.Usage() }

// MCP returns the MCP managers whose tools and prompts the session offers:
// the agent's, then the session's own (SessionOptions.MCPServers).
func (s *Session) MCP() []*mcp.Manager { return s.rt.MCP() }

// Pending returns the tool calls a crash cut off in a resumed session (nil
// otherwise); ResumePending resolves them.
func (s *Session) Pending() []llm.Block { return s.rt.Pending() }

// Workspace returns the workspace the session belongs to.
func (s *Session) Workspace() *Workspace { return s.ws }

// KeepAlive returns what the session's keep-alive pings did so far: the
// policy for the current idle stretch (zero when the session does not
// ping), the pings sent and their summed usage (also counted in Usage). A
// resumed or branched session counts from the pings its store holds
// (session.SessionDetail.Pings), as its Usage counts from the stored turns.
func (s *Session) KeepAlive() keepalive.Stats { return s.rt.KeepAlive() }

// UsageReport returns the session's context size, its model's context
// window and its cumulative cost, as far as strata knows them
// (keepalive.Keeper.Cost: the calls the keeper saw, each priced at the
// model it went to, plus the rest of Session.Usage priced at the loop's
// model when the TTL of its cache writes does not matter).
func (s *Session) UsageReport() UsageReport {
	return UsageReport(s.rt.UsageReport())
}

// Subscribe adds an observer that runs inline for every event of the
// session's loops from now on, until the returned function is called.
func (s *Session) Subscribe(o event.Observer) (unsubscribe func()) { return s.rt.Subscribe(o) }

// Steer queues a steering message, added as a user message before the
// running prompt's next model call (or the next prompt's first).
func (s *Session) Steer(text string) { s.rt.Steer(text) }

// SteerRunning queues text as a steering message of the running prompt and
// reports whether that prompt will send it to the model (agent.Agent.
// SteerRunning); on false nothing is queued and the caller runs text as
// the next prompt.
func (s *Session) SteerRunning(text string) bool { return s.rt.SteerRunning(text) }

// SetMode changes the approval mode for the next prompts.
func (s *Session) SetMode(m agent.Mode) {
	s.rt.SetMode(m)
}

// Close flushes the event observers, stops the session's own MCP servers,
// releases the session's writer lease and returns the recorder's first
// write error (the session was then not fully recorded), if any. Close is
// idempotent.
func (s *Session) Close() error {
	return s.rt.Close()
}

// Emit publishes a front end's own event on the session's bus, to the
// session's observers (OnEvent, OnEventSync, Subscribe, Stream), in order
// with the loop's events. Its Kind must be namespaced with a dot
// ("acme.note"): the loop's own kinds have none, so a front end cannot
// forge a turn or a tool result; it is not stored in the session. ErrClosed
// after Close.
func (s *Session) Emit(e event.Event) error {
	return s.rt.Emit(e)
}

// ResumePending is ResumePendingWith with the zero agent.ResumeOptions:
// at-most-once, the call a crash interrupted is reported to the model as
// interrupted and not run again.
func (s *Session) ResumePending(ctx context.Context) (*agent.Result, error) {
	return s.rt.ResumePending(ctx)
}

// ResumePendingWith resolves the tool calls Pending lists as agent.Resume
// does with o — the one a crash interrupted, and the side-effecting ones
// after it, get is_error results unless o.RerunInterrupted; read-only calls
// run again — records their results and lets the model continue. A nil
// o.ReadOnly counts the tools whose tool.Traits say they only read or are
// idempotent (fs_read, grep, glob, thinking, introspect, knowledge) as
// safe to run again. With nothing pending it returns (nil, nil); a second
// call finds nothing pending.
func (s *Session) ResumePendingWith(ctx context.Context, o agent.ResumeOptions) (*agent.Result, error) {
	return s.rt.ResumePendingWith(ctx, o)
}

// Prompt runs one user turn: text (and attachments, e.g. image blocks) as
// the user message, then model calls and tool calls until the model ends
// its turn or a limit is hit. Errors are the loop's (agent.ErrMaxTurns,
// agent.ErrDenied, a provider's *llm.APIError, ctx.Err(), …); ErrClosed
// after Close. A step the store failed to write (or a lost writer lease)
// stops the loop before its next step and fails the prompt with an error
// naming the session and wrapping the store's; every later Prompt fails
// with it too, since the stored history no longer matches the loop's.
func (s *Session) Prompt(ctx context.Context, text string, attachments ...llm.Block) (*agent.Result, error) {
	return s.rt.Prompt(ctx, text, attachments...)
}

// PromptWithOverrides is Prompt with o applied to this prompt only (its
// system prompt, a narrowed tool filter, extra tools, hooks, continuation
// limit: agent.Overrides); the session's next prompt runs with its own
// settings again. The prompt is recorded like any other.
func (s *Session) PromptWithOverrides(ctx context.Context, text string, o agent.Overrides, attachments ...llm.Block) (*agent.Result, error) {
	return s.rt.PromptWithOverrides(ctx, text, o, attachments...)
}

// Stream runs Prompt and yields its events as they happen, ending with the
// prompt's error, if any (as a zero Event and the error). Breaking out of
// the loop cancels the prompt; the iterator returns once the prompt has
// stopped, leaving no goroutine behind. Events are delivered inline: the
// loop waits while the range body runs.
func (s *Session) Stream(ctx context.Context, text string, attachments ...llm.Block) iter.Seq2[event.Event, error] {
	return s.rt.Stream(ctx, text, attachments...)
}

// SwapAgent makes ref (an agent name or file, as Options.Agent) the agent
// of the session's workspace, as kiro's `/agent swap` does (kiro-cli turn
// anatomy, MCP: the swap "terminates ALL existing servers, creates a fresh
// McpManager, and relaunches from the new agent's config"): every MCP
// server of the old agent (and of its sub-agents) is terminated, the new
// agent is loaded, its servers launched and frozen and its agentSpawn hooks
// run; then the session's loop continues with the new agent's prompt,
// resources, tools, hooks and model, keeping the conversation exactly as
// the session holds it (agent.Agent.Continue: a prompt that stopped before
// its first turn, whose loop the store has not seen, included). The
// session's own MCP servers (SessionOptions.MCPServers, an ACP client's)
// are the client's, not the agent's, and keep running.
//
// The new agent file is loaded and checked before anything is stopped: an
// unknown name or invalid file is a *ConfigError and changes nothing. It
// returns ErrPromptRunning while a prompt runs and ErrClosed after Close.
//
// The swap changes the workspace: other sessions opened on it keep loops
// built on the old agent, whose MCP servers are gone. Swap only where the
// session is the workspace's only one (`strata chat`; the ACP server
// refuses /agent while other sessions are open), and never while another
// session of the workspace runs a prompt: SwapAgent does not synchronise
// with them.
func (s *Session) SwapAgent(ctx context.Context, ref string) error {
	return s.rt.SwapAgent(ctx, ref)
}

// Clear starts a new conversation in the same session (the chat's
// /clear): the next prompt is a loop of its own that continues no earlier
// loop, so its requests carry no earlier message, with a fresh layout
// instance and conversation id. The earlier loops stay stored in the
// session; its usage keeps counting. It fails while a prompt runs
// (ErrPromptRunning) and after Close (ErrClosed).
func (s *Session) Clear(ctx context.Context) error {
	return s.rt.Clear(ctx)
}

// Compact detaches every prompt of the conversation but the last into
// frozen history chunks now (the chat's /compact; agent.Agent.Compact): the
// next request is shorter and starts a new cached prefix. It stores the
// loop's checkpoint, so a resume keeps the chunks. It returns how many
// messages were detached; ErrPromptRunning while a prompt runs, ErrClosed
// after Close.
func (s *Session) Compact(ctx context.Context) (int, error) {
	return s.rt.Compact(ctx)
}

// UsageReport is what a session can say about its context and cost, for a
// client's usage display (ACP's usage_update: docs/kiro.md, "ACP updates"). A
// zero field is one strata does not know; it never fills in a guess.
type UsageReport struct {
	// Context is the tokens the conversation holds after the loop's last
	// model call: that call's prompt tokens (input, cache read and cache
	// write) plus its output; a resumed or branched session starts from
	// its last stored call. 0 before any model call. A keep-alive ping
	// does not change it: it re-sends the same request.
	Context int64
	// Window is the model's context window in tokens, as the loop's
	// agent.Config.ContextWindow; 0 = unknown.
	Window int64
	// CostUSD is the cumulative cost in USD of every token in
	// Session.Usage (turns, compaction's tl;dr requests and keep-alive
	// pings), priced from cachesim's table (cachesim.Lookup, Price.Cost).
	// Valid only when Priced.
	CostUSD float64
	// Priced reports whether strata could price every token of
	// Session.Usage: the model has a price, and every cache write's TTL
	// is known. False means the cost is unknown, not
	// zero.
	Priced bool
}

// Run is the one-shot form: it opens a workspace with o, runs prompt in a
// new session, closes both and returns the result. Errors are Open's,
// NewSession's, Prompt's or the session's Close's, in that order.
func Run(ctx context.Context, o Options, prompt string) (*agent.Result, error) {
	return wsrt.Run(ctx, wsrt.Options(o), prompt)
}
