package wsrt

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/strata-agent/strata/internal/permission"
	"github.com/strata-agent/strata/internal/providers"
	"github.com/strata-agent/strata/keepalive"

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

// SessionOptions mirrors strata.SessionOptions field for field (a type conversion turns one into
// the other); strata.SessionOptions documents the fields.
type SessionOptions struct {
	Cwd         string
	Mode        agent.Mode
	Approver    agent.Approver
	OnEvent     event.Observer
	OnEventSync event.Observer
	MCPServers  []config.NamedMCPServer
	Editor      tool.Editor
	Terminal    tool.Terminal
	Title       string
	Overrides   agent.Overrides
}

// Session is strata.Session (documented there).
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

// NewSession implements strata.Workspace.NewSession (documented there).
func (w *Workspace) NewSession(ctx context.Context, o SessionOptions) (*Session, error) {
	return w.open(ctx, "", nil, o)
}

// ResumeSession implements strata.Workspace.ResumeSession (documented there).
func (w *Workspace) ResumeSession(ctx context.Context, id string, o SessionOptions) (*Session, error) {
	if id == "" {
		return nil, configErrorf("resume: empty session id")
	}
	return w.open(ctx, id, nil, o)
}

// BranchSession implements strata.Workspace.BranchSession (documented there).
func (w *Workspace) BranchSession(ctx context.Context, id string, afterTurn int, o SessionOptions) (*Session, error) {
	if afterTurn < 0 {
		return nil, configErrorf("branch: turn %d: want the number of a completed turn", afterTurn)
	}
	return w.open(ctx, id, &branchPoint{turn: afterTurn}, o)
}

// BranchSessionAt implements strata.Workspace.BranchSessionAt (documented there).
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
	// Each loop gets its own copy of env: its allowlist binds
	// PersonApproved to the loop's approvals, and a fork, a swapped agent's
	// loop or another session's must neither read nor race on them.
	own := *env
	env = &own
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

// ID implements strata.Session.ID (documented there).
func (s *Session) ID() string { return s.id }

// LoopID implements strata.Session.LoopID (documented there).
func (s *Session) LoopID() string { return s.agent.LoopID() }

// History implements strata.Session.History (documented there).
func (s *Session) History() []llm.Message { return s.agent.History() }

// Usage implements strata.Session.Usage (documented there).
func (s *Session) Usage() llm.Usage { return s.agent.Usage().Add(s.keep.Stats().Usage) }

// MCP implements strata.Session.MCP (documented there).
func (s *Session) MCP() []*mcp.Manager { return s.mcp }

// Pending implements strata.Session.Pending (documented there).
func (s *Session) Pending() []llm.Block { return s.pending }

// ResumePending implements strata.Session.ResumePending (documented there).
func (s *Session) ResumePending(ctx context.Context) (*agent.Result, error) {
	return s.ResumePendingWith(ctx, agent.ResumeOptions{})
}

// ResumePendingWith implements strata.Session.ResumePendingWith (documented there).
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

// Prompt implements strata.Session.Prompt (documented there).
func (s *Session) Prompt(ctx context.Context, text string, attachments ...llm.Block) (*agent.Result, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	return s.run(ctx, func(ctx context.Context) (*agent.Result, error) { return s.agent.PromptWith(ctx, text, attachments) })
}

// Stream implements strata.Session.Stream (documented there).
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

// Subscribe implements strata.Session.Subscribe (documented there).
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

// Steer implements strata.Session.Steer (documented there).
func (s *Session) Steer(text string) { s.agent.Steer(text) }

// SteerRunning implements strata.Session.SteerRunning (documented there).
func (s *Session) SteerRunning(text string) bool { return s.agent.SteerRunning(text) }

// SetMode implements strata.Session.SetMode (documented there).
func (s *Session) SetMode(m agent.Mode) {
	s.agent.SetMode(m)
	s.mu.Lock()
	s.parts.mode = m
	s.mu.Unlock()
}

// Close implements strata.Session.Close (documented there).
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

// Run implements strata.Run (documented there).
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
