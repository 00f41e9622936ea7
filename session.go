package strata

import (
	"cmp"
	"context"
	"fmt"
	"github.com/strata-agent/strata/internal/permission"
	"github.com/strata-agent/strata/internal/providers"
	"github.com/strata-agent/strata/keepalive"
	"iter"
	"slices"
	"sync"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/compact"
	"github.com/strata-agent/strata/config"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/mcp"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/telemetry"
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
	ws      *Workspace
	id      string
	agent   *agent.Agent
	bus     *event.Bus
	rec     *session.Recorder
	otel    *telemetry.Observer // nil without Options.TracerProvider / MeterProvider
	lease   *session.Lease
	mcp     []*mcp.Manager
	release func()
	parts   loopParts          // what the session's loop was built from, for an agent swap
	keep    *keepalive.Keeper  // keep-alive pings and cost (usagereport.go)
	tldr    *session.TLDRCache // the session's stored tl;drs (tldrstore.go)

	pending     []llm.Block
	pendingTurn int

	mu      sync.Mutex
	syncObs []*event.Observer // Stream's and Subscribe's inline observers
	closed  bool
	stop    context.CancelCauseFunc // cancels the running prompt (nil between prompts)
}

// A Session holds its stored session's writer lease (session.Hold) from
// open to Close, so one session has one writer at a time: opening a session
// another process (or another Session) holds fails with an error wrapping
// session.ErrBusy, before any model call. A holder that dies without Close
// blocks the session for at most session.LeaseTTL.

// NewSession starts a new stored session; its first prompt is its first
// loop (each prompt is a loop of its own: docs/turn.md, rule 2).
func (w *Workspace) NewSession(ctx context.Context, o SessionOptions) (*Session, error) {
	return w.open(ctx, "", nil, o)
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
	if id == "" {
		return nil, configErrorf("resume: empty session id")
	}
	return w.open(ctx, id, nil, o)
}

// BranchSession starts a new loop in the stored session id from the
// conversation up to and including its turn afterTurn, counted across the
// loops of the session's latest conversation from 0 (session.LoopRecord
// Numbered: the numbers `strata sessions show` lists, and those a session
// had when it was one loop). The new loop's first prompt is its turn 0,
// triggered by event.TriggerBranch. A session with no stored turn gives a
// *ConfigError wrapping session.ErrNotFound.
func (w *Workspace) BranchSession(ctx context.Context, id string, afterTurn int, o SessionOptions) (*Session, error) {
	if afterTurn < 0 {
		return nil, configErrorf("branch: turn %d: want the number of a completed turn", afterTurn)
	}
	return w.open(ctx, id, &branchPoint{turn: afterTurn}, o)
}

// BranchSessionAt is BranchSession at turn index of loop loopID (a unique
// prefix works) of the session: any loop's turn, not only one of the latest
// conversation's.
func (w *Workspace) BranchSessionAt(ctx context.Context, id, loopID string, index int, o SessionOptions) (*Session, error) {
	if loopID == "" || index < 0 {
		return nil, configErrorf("branch: loop %q turn %d: want a loop id and the index of a completed turn in it", loopID, index)
	}
	return w.open(ctx, id, &branchPoint{loop: loopID, turn: index}, o)
}

func (w *Workspace) open(ctx context.Context, id string, branch *branchPoint, o SessionOptions) (s *Session, err error) {
	w.mu.Lock()
	closed := w.closed
	w.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	prov, err := w.client()
	if err != nil {
		return nil, err
	}
	s = &Session{ws: w, bus: event.NewBus(), release: func() {}}
	built := s // s is nil once an error is returned
	defer func() {
		if err != nil {
			built.bus.Close()
			built.release()
			if built.lease != nil {
				built.lease.Release()
			}
		}
	}()
	if w.mcp != nil {
		s.mcp = append(s.mcp, w.mcp)
	}
	cwd := o.Cwd
	if cwd == "" {
		cwd = w.dir
	}
	var extra []tool.Tool
	if len(o.MCPServers) > 0 {
		m := launchMCP(context.WithoutCancel(ctx), o.MCPServers, cwd, w.opts)
		s.release, s.mcp = m.Terminate, append(s.mcp, m)
		for _, t := range m.Tools() {
			extra = append(extra, t)
		}
	}
	env := w.env(cwd)
	env.Editor, env.Terminal = o.Editor, o.Terminal
	mode, approver := w.opts.Mode, w.opts.Approver
	if o.Mode != "" {
		mode = o.Mode
	}
	if o.Approver != nil {
		approver = o.Approver
	}
	cfg, err := w.loopConfig(prov, env, s.bus, mode, approver, extra)
	if err == nil {
		cfg, err = cfg.With(o.Overrides)
	}
	if err != nil {
		return nil, err
	}
	cfg.Provider = s.keepAlive(cfg.Provider, cfg.Model, cfg.Layout)
	s.storeTLDRs(&cfg)
	s.parts = loopParts{env: env, mode: mode, approver: approver, extra: extra, over: o.Overrides}
	if len(o.MCPServers) > 0 {
		s.parts.own = s.mcp[len(s.mcp)-1]
	}
	if id == "" {
		st, err := w.store.CreateSession(ctx, session.SessionMeta{Cwd: cwd, AgentFile: w.opts.Agent, Provider: w.prov.Name,
			Model: w.prov.Model, Layout: w.opts.Layout, Title: o.Title})
		if err != nil {
			return nil, err
		}
		s.id = st.ID
		if err := s.hold(ctx); err != nil {
			return nil, err
		}
		if s.agent, err = agent.New(cfg); err != nil {
			return nil, err
		}
	} else if err := s.restore(ctx, cfg, id, branch); err != nil {
		return nil, err
	}
	s.rec = session.NewRecorder(w.store, s.id)
	s.bus.SubscribeSync(s.record)
	if o.OnEventSync != nil {
		s.bus.SubscribeSync(o.OnEventSync)
	}
	s.bus.SubscribeSync(s.dispatch)
	if o.OnEvent != nil {
		s.bus.Subscribe(o.OnEvent)
	}
	if w.opts.TracerProvider != nil || w.opts.MeterProvider != nil {
		// Drop: a slow exporter never holds the loop up (docs/telemetry.md).
		s.otel = telemetry.NewObserver(telemetry.Config{TracerProvider: w.opts.TracerProvider, MeterProvider: w.opts.MeterProvider,
			SessionID: s.id, Layout: cmp.Or(w.opts.Layout, DefaultLayout), CaptureContent: telemetry.ContentFromEnv()})
		s.bus.Subscribe(s.otel.Observe, event.WithPolicy(event.Drop))
	}
	return s, nil
}

// hold takes the session's writer lease; losing it later stops the running
// prompt.
func (s *Session) hold(ctx context.Context) error {
	l, err := session.Hold(ctx, s.ws.store, s.id, 0, s.interrupt)
	if err != nil {
		return err // names the session (and the holder)
	}
	s.lease = l
	return nil
}

// record stores e through the recorder; a failed write stops the running
// prompt before the loop's next step (Prompt then returns the error).
func (s *Session) record(e event.Event) {
	if err := s.rec.Observe(context.Background(), e); err != nil {
		s.interrupt(err)
	}
}

// interrupt cancels the running prompt, if any, with cause err.
func (s *Session) interrupt(err error) {
	s.mu.Lock()
	stop := s.stop
	s.mu.Unlock()
	if stop != nil {
		stop(err)
	}
}

// run runs f (one prompt of the loop) with a context record and the lease
// can cancel, and fails it when a step could not be recorded or the lease
// was lost: the session's history would otherwise differ from the loop's.
func (s *Session) run(ctx context.Context, f func(context.Context) (*agent.Result, error)) (*agent.Result, error) {
	if err := s.unrecorded(); err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	s.mu.Lock()
	s.stop = stop
	s.mu.Unlock()
	res, err := f(ctx)
	s.mu.Lock()
	s.stop = nil
	s.mu.Unlock()
	if uerr := s.unrecorded(); uerr != nil {
		return res, uerr
	}
	s.saveCheckpoint(ctx)
	return res, err
}

// unrecorded returns why the session's store no longer matches its loop: a
// failed recorder write or a lost lease (nil when neither happened).
func (s *Session) unrecorded() error {
	if err := s.rec.Err(); err != nil {
		return fmt.Errorf("session %s: a step could not be stored, so the prompt stopped: %w", s.id, err)
	}
	if err := s.lease.Err(); err != nil {
		return fmt.Errorf("session %s: the prompt stopped: %w", s.id, err)
	}
	return nil
}

// loopConfig is the configuration of one loop of this workspace: a fresh
// layout instance, the workspace's context template, tools (plus extra and
// use_subagent), hooks and authority stack, on env and bus.
func (w *Workspace) loopConfig(prov llm.Provider, env *tool.Env, bus *event.Bus, mode agent.Mode, approver agent.Approver, extra []tool.Tool) (agent.Config, error) {
	layout, err := prompt.Lookup(w.opts.Layout)
	if err != nil {
		return agent.Config{}, &ConfigError{Err: err}
	}
	o := w.opts
	cfg := agent.Config{
		Provider: prov, Layout: layout, Env: env, Model: w.prov.Model, Params: o.Params, Context: w.agent.Context,
		MaxTurns: o.MaxTurns, MaxSessionTokens: o.MaxSessionTokens, Bus: bus, Mode: mode,
		AllowedTool: w.allowedTool(), Approver: approver,
		Hooks: w.loopHooks(), BeforeTurn: o.BeforeTurn, AfterTurn: o.AfterTurn,
		Compaction: o.Compaction, Now: o.Now, ContextWindow: int(providers.ContextWindow(w.prov.Model)),
	}
	if o.Compaction != nil && o.CompactTLDR {
		p := *o.Compaction
		p.Summarize = compact.ProviderSummarizer(prov, w.prov.Model)
		cfg.Compaction = &p
	}
	w.allowlist(env, mode, approver).Apply(&cfg)
	w.fileRefreshHook(&cfg)
	w.panelSources(&cfg, env, bus)
	w.repo.Apply(&cfg, layout)
	tools := append(slices.Clip(w.tools), extra...)
	if !o.NoBuiltins && (w.agent.Config == nil || w.agent.Config.ToolAllowed(agent.SubAgentToolName)) {
		self := cfg
		self.Tools = tool.NewRegistry(tools...)
		tools = append(tools, agent.SubAgentToolFor(w.newChild(self, env, mode, approver), w.availableSubAgents()))
	}
	cfg.Tools = tool.NewRegistry(tools...)
	limitResponses(&cfg, o)
	return cfg, nil
}

// allowedTool is authority step 1: the agent's `tools` (nil = all).
func (w *Workspace) allowedTool() func(string) bool {
	cfg := w.agent.Config
	if cfg == nil {
		return nil
	}
	return func(name string) bool {
		extra, _ := w.extra(name)
		return extra || cfg.ToolAllowed(w.configName(name))
	}
}

// extra reports whether name is one of Options.Tools, the program's own
// tools, and whether its tool.Traits say PreApproved (it runs without
// asking).
func (w *Workspace) extra(name string) (extra, preApproved bool) {
	for _, t := range w.opts.Tools {
		if t.Spec().Name == name {
			return true, tool.TraitsOf(t).PreApproved
		}
	}
	return false, false
}

// allowlist is the permission.Allowlist of a loop on env in mode, asking
// approver, reading the workspace as it is at each call.
func (w *Workspace) allowlist(env *tool.Env, mode agent.Mode, approver agent.Approver) *permission.Allowlist {
	src := permission.Source{Agent: func() *config.Agent { return w.agent.Config }, ConfigName: w.configName,
		Extra: w.extra, TrustedSubAgent: w.trustedSubAgent}
	return permission.New(src, env, mode, approver)
}

// env is the workspace policy for tools rooted at dir, from the agent's
// toolsSettings (kiro built-in-tools.md), kept per tool: fs_read's
// allowedPaths/deniedPaths become the read policy (fs_read, grep, glob),
// fs_write's the write policy (fs_write, todo_list's saves), execute_bash's
// command patterns the command policy. Never merged: a path allowed for
// reading does not become writable (tool.ResolvePath).
func (w *Workspace) env(dir string) *tool.Env {
	e := &tool.Env{Workdir: dir, MaxResultBytes: w.opts.MaxToolResultBytes, ConfigPaths: config.StrataPaths()}
	cfg := w.agent.Config
	if cfg == nil {
		return e
	}
	r, wr := cfg.ToolSettings("fs_read"), cfg.ToolSettings("fs_write")
	e.ReadPaths = tool.PathPolicy{AllowedPaths: r.AllowedPaths, DeniedPaths: r.DeniedPaths}
	e.WritePaths = tool.PathPolicy{AllowedPaths: wr.AllowedPaths, DeniedPaths: wr.DeniedPaths}
	s := cfg.ToolSettings("execute_bash")
	e.AllowedCommands, e.DeniedCommands = s.AllowedCommands, s.DeniedCommands
	e.DenyByDefault, e.AutoAllowReadonly = s.DenyByDefault, s.AutoAllowReadonly
	return e
}

// ID returns the stored session's id.
func (s *Session) ID() string { return s.id }

// LoopID returns the id of the session's current loop: the running or last
// prompt's (each prompt is a loop), else the loop the next prompt uses.
func (s *Session) LoopID() string { return s.agent.LoopID() }

// History returns the loop's conversation so far (shared; do not modify).
func (s *Session) History() []llm.Message { return s.agent.History() }

// Usage returns the summed usage of every model call of the loop and of
// the session's keep-alive pings (KeepAlive).
func (s *Session) Usage() llm.Usage { return s.agent.Usage().Add(s.keep.Stats().Usage) }

// MCP returns the MCP managers whose tools and prompts the session offers:
// the agent's, then the session's own (SessionOptions.MCPServers).
func (s *Session) MCP() []*mcp.Manager { return s.mcp }

// Pending returns the tool calls a crash cut off in a resumed session (nil
// otherwise); ResumePending resolves them.
func (s *Session) Pending() []llm.Block { return s.pending }

// ResumePending is ResumePendingWith with the zero agent.ResumeOptions:
// at-most-once, the call a crash interrupted is reported to the model as
// interrupted and not run again.
func (s *Session) ResumePending(ctx context.Context) (*agent.Result, error) {
	return s.ResumePendingWith(ctx, agent.ResumeOptions{})
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
	if len(s.pending) == 0 {
		return nil, nil
	}
	p := s.pending
	s.pending = nil
	if o.ReadOnly == nil {
		o.ReadOnly = s.agent.Retryable
	}
	return s.run(ctx, func(ctx context.Context) (*agent.Result, error) { return s.agent.Resume(ctx, s.pendingTurn, p, o) })
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
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	return s.run(ctx, func(ctx context.Context) (*agent.Result, error) { return s.agent.PromptWith(ctx, text, attachments) })
}

// Stream runs Prompt and yields its events as they happen, ending with the
// prompt's error, if any (as a zero Event and the error). Breaking out of
// the loop cancels the prompt; the iterator returns once the prompt has
// stopped, leaving no goroutine behind. Events are delivered inline: the
// loop waits while the range body runs.
func (s *Session) Stream(ctx context.Context, text string, attachments ...llm.Block) iter.Seq2[event.Event, error] {
	return func(yield func(event.Event, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		ch := make(chan event.Event)
		unsubscribe := s.subscribeSync(func(e event.Event) {
			select {
			case ch <- e:
			case <-ctx.Done():
			}
		})
		done := make(chan error, 1)
		go func() {
			_, err := s.Prompt(ctx, text, attachments...)
			unsubscribe()
			close(ch)
			done <- err
		}()
		stopped := false
		for e := range ch {
			if !stopped && !yield(e, nil) {
				stopped = true
				cancel()
			}
		}
		if err := <-done; err != nil && !stopped {
			yield(event.Event{}, err)
		}
	}
}

// Subscribe adds an observer that runs inline for every event of the
// session's loops from now on, until the returned function is called.
func (s *Session) Subscribe(o event.Observer) (unsubscribe func()) { return s.subscribeSync(o) }

func (s *Session) subscribeSync(o event.Observer) func() {
	p := &o
	s.mu.Lock()
	s.syncObs = append(s.syncObs, p)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.syncObs = slices.DeleteFunc(s.syncObs, func(q *event.Observer) bool { return q == p })
		s.mu.Unlock()
	}
}

// dispatch runs the Subscribe/Stream observers on e.
func (s *Session) dispatch(e event.Event) {
	s.mu.Lock()
	obs := slices.Clone(s.syncObs)
	s.mu.Unlock()
	for _, o := range obs {
		(*o)(e)
	}
}

// Steer queues a steering message, added as a user message before the
// running prompt's next model call (or the next prompt's first).
func (s *Session) Steer(text string) { s.agent.Steer(text) }

// SteerRunning queues text as a steering message of the running prompt and
// reports whether that prompt will send it to the model (agent.Agent.
// SteerRunning); on false nothing is queued and the caller runs text as
// the next prompt.
func (s *Session) SteerRunning(text string) bool { return s.agent.SteerRunning(text) }

// SetMode changes the approval mode for the next prompts.
func (s *Session) SetMode(m agent.Mode) {
	s.agent.SetMode(m)
	s.mu.Lock()
	s.parts.mode = m
	s.mu.Unlock()
}

// Close flushes the event observers, stops the session's own MCP servers,
// releases the session's writer lease and returns the recorder's first
// write error (the session was then not fully recorded), if any. Close is
// idempotent.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.keep.Close()
	s.bus.Close()
	if s.otel != nil {
		s.otel.Close() // ends the spans an interrupted prompt left open
	}
	s.release()
	lerr := s.lease.Release()
	if err := s.rec.Err(); err != nil {
		return fmt.Errorf("session %s was not fully recorded: %w", s.id, err)
	}
	if lerr != nil {
		return fmt.Errorf("session %s: %w", s.id, lerr)
	}
	return nil
}

// Run is the one-shot form: it opens a workspace with o, runs prompt in a
// new session, closes both and returns the result. Errors are Open's,
// NewSession's, Prompt's or the session's Close's, in that order.
func Run(ctx context.Context, o Options, prompt string) (*agent.Result, error) {
	w, err := Open(ctx, o)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	s, err := w.NewSession(ctx, SessionOptions{})
	if err != nil {
		return nil, err
	}
	res, err := s.Prompt(ctx, prompt)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return res, err
}
