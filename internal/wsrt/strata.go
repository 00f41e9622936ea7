// Package wsrt is the machinery behind package strata's Workspace and
// Session: it opens a workspace (agent, MCP servers, hooks, provider,
// repository context), builds each loop's agent.Config (layout, tools,
// authority stack, keep-alive, stored tl;drs), and runs, records, restores,
// swaps and forks sessions. Package strata is its documented public face:
// every exported identifier here that strata re-exports is documented
// there; the types Options, SessionOptions, ForkOptions, RenderOptions,
// Rendered and UsageReport mirror strata's field for field
// (docs/architecture.md, "packages").
package wsrt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/strata-agent/strata/agentfile"
	"github.com/strata-agent/strata/internal/repoctx"
	"github.com/strata-agent/strata/keepalive"
	"github.com/strata-agent/strata/trust"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/compact"
	"github.com/strata-agent/strata/config"
	"github.com/strata-agent/strata/hooks"
	"github.com/strata-agent/strata/internal/providers"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/mcp"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/tool"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	_ "github.com/strata-agent/strata/prompt/cachefit" // register the layouts
	_ "github.com/strata-agent/strata/prompt/flat"
	_ "github.com/strata-agent/strata/prompt/kiro"
	_ "github.com/strata-agent/strata/prompt/panels"
	_ "github.com/strata-agent/strata/prompt/peers"
	_ "github.com/strata-agent/strata/prompt/tiered"
)

// DefaultLayout is strata.DefaultLayout (documented there).
const DefaultLayout = "cachefit"

// Options mirrors strata.Options field for field (a type conversion turns one into
// the other); strata.Options documents the fields.
type Options struct {
	Dir            string
	Agent          string
	Instructions   string
	NoProjectFiles bool

	Provider        llm.Provider
	ProviderName    string
	APIKey, BaseURL string
	Replay          []replay.Response
	Respond         func(replay.Request) replay.Response
	Model           string
	Params          llm.Params
	Limits          llm.Limits

	MaxToolResultBytes int

	Layout       string
	ReminderFile string
	URLs         []string
	Review       string
	ReviewFiles  []string

	Mode     agent.Mode
	Approver agent.Approver

	Store session.Store

	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider

	Tools                         []tool.Tool
	NoBuiltins                    bool
	DisableRepoContext            bool
	DisableMCP, DisableAgentHooks bool
	Hooks                         []agent.Hook
	BeforeTurn                    func(ctx context.Context, info agent.TurnInfo) error
	AfterTurn                     func(ctx context.Context, rec agent.TurnRecord)

	MaxTurns         int
	MaxSessionTokens int64
	Compaction       *compact.Policy
	CompactTLDR      bool
	Now              func() time.Time
	KeepAlive        keepalive.Options

	Warn      func(msg string)
	MCPStderr io.Writer
	MCPOAuth  mcp.OAuthOptions
	MCPElicit mcp.Elicitor

	MaxSubAgentDepth, MaxSubAgentsPerResponse, MaxToolCallsPerResponse int
	WebFetchAllowPrivate                                               bool

	Trust trust.Func
}

// ConfigError is strata.ConfigError (documented there).
type ConfigError struct{ Err error }

// Error returns the underlying error's message.
func (e *ConfigError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *ConfigError) Unwrap() error { return e.Err }

func configErrorf(format string, args ...any) error {
	return &ConfigError{Err: fmt.Errorf(format, args...)}
}

// ErrClosed is strata.ErrClosed (documented there).
var ErrClosed = errors.New("strata: closed")

// Workspace is strata.Workspace (documented there).
type Workspace struct {
	opts     Options
	dir      string
	agent    *agentfile.File // nil config for the default agent
	tools    []tool.Tool
	mcp      *mcp.Manager      // the agent's MCP servers; nil when none were launched
	mcpNames map[string]string // model-facing name → "@server/tool"
	hooks    []agent.Hook
	prov     *providers.Choice
	store    session.Store
	repo     *repoctx.Context // file tree, symbols, reminder, URL and review context

	mu      sync.Mutex
	closed  bool
	closers []func()
	// agentClosers release what belongs to the loaded agent (its MCP
	// servers, knowledge index, sub-agent workspaces): run by Close and by
	// an agent swap.
	agentClosers []func()
	children     *subagents // use_subagent's other agents, opened on first use
	// started holds the trust hash every agent file of the workspace had
	// when it opened (shared with sub-agent workspaces): an agent loaded
	// later whose hash differs is new or rewritten (trust.Request.Changed).
	// nil while Open loads the first agent.
	started startTrust
	// agentHash is the trust.Request.Hash of the loaded agent.
	agentHash string
	// preTrusted is the hash an agent swap already asked Options.Trust
	// about, while it loads that agent.
	preTrusted string
	// depth is how deep in use_subagent this workspace's loops run (0 =
	// the session's own agent).
	depth int
	// outer is the tool environment of the loop that started this
	// sub-agent workspace (nil for the session's own): what the workspace
	// reads for itself (knowledge bases) stays inside it too (tool.Narrow).
	outer *tool.Env
}

// Open implements strata.Open (documented there).
func Open(ctx context.Context, o Options) (*Workspace, error) {
	if o.Layout == "" {
		o.Layout = DefaultLayout
	}
	if _, err := prompt.Lookup(o.Layout); err != nil {
		return nil, &ConfigError{Err: fmt.Errorf("layout: %w", err)}
	}
	switch o.Mode {
	case "":
		o.Mode = agent.ModeAllowlist
	case agent.ModeAsk, agent.ModeAllowlist, agent.ModeAll:
	default:
		return nil, configErrorf("unknown approval mode %q (valid: ask, allowlist, all)", o.Mode)
	}
	if o.MaxTurns < 0 || o.MaxSessionTokens < 0 {
		return nil, configErrorf("MaxTurns %d and MaxSessionTokens %d must not be negative", o.MaxTurns, o.MaxSessionTokens)
	}
	if o.Warn == nil {
		o.Warn = func(msg string) { slog.Warn(msg) }
	}
	if o.Store == nil {
		o.Store = session.NewMemory()
	}
	dir := o.Dir
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	if o.MaxTurns == 0 {
		rs, err := config.LoadRuntimeSettings(dir, config.UserDir())
		if err != nil {
			return nil, &ConfigError{Err: err}
		}
		o.MaxTurns = rs.MaxIterations // 0 still: agent.DefaultMaxTurns
	}
	w := &Workspace{opts: o, dir: dir, store: o.Store}
	var err error
	if w.repo, err = repoctx.Open(ctx, repoctx.Options{Layout: o.Layout, URLs: o.URLs, Review: o.Review, ReviewFiles: o.ReviewFiles,
		ReminderFile: o.ReminderFile, Off: o.DisableRepoContext, WebFetchAllowPrivate: o.WebFetchAllowPrivate}, dir); err != nil {
		var ie *repoctx.InputError
		if errors.As(err, &ie) {
			err = &ConfigError{Err: ie.Err}
		}
		return nil, err
	}
	if err := w.loadAgent(ctx); err != nil {
		w.Close()
		return nil, err
	}
	w.started = snapshotAgents(w.dir, w.agent, w.agentHash, o)
	model := ""
	if w.agent.Config != nil {
		model = w.agent.Config.Model
	}
	if w.prov, err = chooseProvider(o, model); err != nil {
		w.Close()
		return nil, err
	}
	w.closers = append(w.closers, w.prov.Close)
	reg := tool.NewRegistry(w.tools...)
	if err := reg.Err(); err != nil {
		w.Close()
		return nil, &ConfigError{Err: err}
	}
	return w, nil
}

// loadAgent loads Options.Agent (or the default agent), asks Options.Trust
// about the commands its files would run, then activates it: MCP servers,
// agentSpawn hooks and the loop hooks.
func (w *Workspace) loadAgent(ctx context.Context) error {
	o := w.opts
	sys := o.Instructions
	if sys == "" {
		sys = agentfile.DefaultInstructions
	}
	var err error
	if w.agent, err = workspaceAgent(w.dir, o.Agent, sys, o.NoProjectFiles); err != nil {
		return err
	}
	for _, wn := range w.agent.Warnings {
		o.Warn(wn.String())
	}
	if o.Agent == "" {
		if !o.NoBuiltins {
			w.tools = tool.Builtins()
		}
		w.tools = override(w.tools, o.Tools)
		if w.agent.Resolved == nil {
			return nil
		}
		if err := w.checkTrust(ctx); err != nil {
			return err
		}
		w.startMCP(ctx, w.agent.Resolved.MCPServers, nil)
		return nil
	}
	cfg := w.agent.Config
	if !o.NoBuiltins {
		for _, t := range tool.Builtins() {
			if cfg.ToolAllowed(t.Spec().Name) {
				w.tools = append(w.tools, t)
			}
		}
		extra, err := w.kiroTools(ctx)
		if err != nil {
			return err
		}
		w.tools = append(w.tools, extra...)
	}
	w.tools = override(w.tools, o.Tools)
	if err := w.checkTrust(ctx); err != nil {
		return err
	}
	w.startMCP(ctx, w.agent.Resolved.MCPServers, cfg)
	if !o.DisableAgentHooks {
		r := hooks.New(cfg, hooks.Options{Cwd: w.dir, ToolName: w.configName, Warn: o.Warn})
		w.agent.Context.HookOutputs = append(w.agent.Context.HookOutputs, r.AgentSpawn(ctx)...)
		w.hooks = r.Hooks()
	}
	return nil
}

// startMCP launches servers unless MCP is disabled and offers their tools
// (those cfg's tools field allows; all of them for the default agent, nil
// cfg).
func (w *Workspace) startMCP(ctx context.Context, servers []config.NamedMCPServer, cfg *config.Agent) {
	w.mcpNames = map[string]string{}
	if w.opts.DisableMCP || len(servers) == 0 {
		return
	}
	w.mcp = launchMCP(ctx, servers, w.dir, w.opts)
	w.agentClosers = append(w.agentClosers, w.mcp.Terminate) // the agent's: a swap stops them
	for _, t := range w.mcp.Tools() {
		w.mcpNames[t.Spec().Name] = t.ConfigName()
		if cfg == nil || cfg.ToolAllowed(t.ConfigName()) {
			w.tools = append(w.tools, t)
		}
	}
}

// override returns tools with every tool of extra replacing the one of the
// same name, and the rest of extra appended.
func override(tools, extra []tool.Tool) []tool.Tool {
	names := map[string]bool{}
	for _, t := range extra {
		names[t.Spec().Name] = true
	}
	var out []tool.Tool
	for _, t := range tools {
		if !names[t.Spec().Name] {
			out = append(out, t)
		}
	}
	return append(out, extra...)
}

// launchMCP starts servers (a failed launch is a warning) and freezes the
// manager. The caller terminates it.
func launchMCP(ctx context.Context, servers []config.NamedMCPServer, dir string, o Options) *mcp.Manager {
	stderr := o.MCPStderr
	if stderr == nil {
		stderr = io.Discard
	}
	m := mcp.NewManager(mcp.Options{Stderr: stderr, Roots: []string{dir}, Dir: dir, OAuth: o.MCPOAuth, Elicit: o.MCPElicit})
	for _, s := range servers {
		if err := m.LaunchServer(ctx, s.Name, agentfile.MCPServerConfig(s.Server)); err != nil {
			o.Warn(fmt.Sprintf("MCP server %q (%s): %v", s.Name, s.Source, err))
		}
	}
	m.Freeze()
	return m
}

// configName maps a model-facing tool name to the name agent configs use:
// "@server/tool" for MCP tools, the name itself for built-ins.
func (w *Workspace) configName(name string) string {
	if n, ok := w.mcpNames[name]; ok {
		return n
	}
	return name
}

// Dir implements strata.Workspace.Dir (documented there).
func (w *Workspace) Dir() string { return w.dir }

// Agent implements strata.Workspace.Agent (documented there).
func (w *Workspace) Agent() *agentfile.File { return w.agent }

// ProviderName implements strata.Workspace.ProviderName (documented there).
func (w *Workspace) ProviderName() string { return w.prov.Name }

// Model implements strata.Workspace.Model (documented there).
func (w *Workspace) Model() string { return w.prov.Model }

// Layout implements strata.Workspace.Layout (documented there).
func (w *Workspace) Layout() string { return w.opts.Layout }

// Store implements strata.Workspace.Store (documented there).
func (w *Workspace) Store() session.Store { return w.store }

// MCP implements strata.Workspace.MCP (documented there).
func (w *Workspace) MCP() *mcp.Manager { return w.mcp }

// Close implements strata.Workspace.Close (documented there).
func (w *Workspace) Close() error {
	w.mu.Lock()
	closers := append(w.closers, w.agentClosers...)
	w.closers, w.agentClosers, w.closed = nil, nil, true
	w.mu.Unlock()
	for i := len(closers) - 1; i >= 0; i-- {
		closers[i]()
	}
	return nil
}

// ProviderNames implements strata.ProviderNames (documented there).
func ProviderNames() []string { return providers.Names() }
