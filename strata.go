// Package strata is the runtime of the strata turn engine: the one place
// where a kiro / Amazon Q agent file (or strata's default agent), a provider,
// a request layout, the tools and MCP servers, hooks, approvals and a session
// store are put together into sessions you Prompt, observe and Close. The
// CLI (`strata run`, `chat`, `acp`, `render`, `replay`, `sessions`) and Go
// programs use it the same way:
//
//	ws, err := strata.Open(ctx, strata.Options{Agent: ".kiro/agents/coder.json"})
//	if err != nil { … }
//	defer ws.Close()
//	s, err := ws.NewSession(ctx, strata.SessionOptions{})
//	if err != nil { … }
//	defer s.Close()
//	res, err := s.Prompt(ctx, "what is in this directory?")
//
// A Workspace holds what every session of one agent shares: the loaded agent,
// its MCP servers (launched once, terminated by Close), its hooks, the
// provider and the store. A Session is one conversation: its own loop, event
// bus, recorder and — always — its own layout instance (stateful layouts such
// as cachefit keep per-conversation placement state; sharing one would move
// another conversation's cached prefix). Sub-agents get fresh instances too.
//
// Every loop's request goes through the same code path whether it is sent
// (Session.Prompt) or only shown (Workspace.Render): the layout receives the
// provider's wire API (llm.Provider.API), and the request knobs
// (Options.Params) are applied after assembly, so `strata render` prints
// exactly what `strata run` sends.
package strata

import (
	"context"
	"errors"
	"fmt"
	"github.com/strata-agent/strata/agentfile"
	"github.com/strata-agent/strata/internal/repoctx"
	"github.com/strata-agent/strata/keepalive"
	"github.com/strata-agent/strata/trust"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

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

// DefaultLayout is the layout used when Options.Layout is empty: cachefit,
// the cheapest layout in every measurement of `strata bench cache` (README,
// "What the layouts cost").
const DefaultLayout = "cachefit"

// Options configure a Workspace. The zero value is usable: strata's default
// agent in the process's working directory, the provider chosen from the
// environment (ANTHROPIC_API_KEY, then OPENAI_API_KEY), DefaultLayout,
// allowlist approvals, sessions kept in memory.
type Options struct {
	// Dir is the workspace root the tools run in ("" = the process's working
	// directory).
	Dir string
	// Agent is a kiro / Amazon Q agent file path or agent name (a name is
	// looked up in .kiro/agents, .amazonq/cli-agents and the global
	// folders: docs/kiro.md); "" runs strata's default agent: Instructions
	// and every built-in tool.
	Agent string
	// Instructions replace agentfile.DefaultInstructions for the default agent (no
	// Agent). Ignored when Agent is set: the agent file's prompt applies.
	Instructions string
	// NoProjectFiles makes the default agent (no Agent) read no project
	// files: no default resources (AGENTS.md, CLAUDE.md, README.md), no
	// steering, no mcp.json. Ignored when Agent is set.
	NoProjectFiles bool

	// Provider, when set, is used as is (ProviderName, APIKey, BaseURL and
	// Replay are ignored; Model is then required unless the agent file
	// names one).
	Provider llm.Provider
	// ProviderName selects a provider by name (ProviderNames lists them;
	// "openai" is accepted for "openai-chat"); "" = the first of
	// ANTHROPIC_API_KEY, OPENAI_API_KEY that is set.
	ProviderName string
	// APIKey and BaseURL override the provider's key and base URL variables.
	APIKey, BaseURL string
	// Replay, when non-empty, serves these responses on 127.0.0.1 to the
	// provider's real SDK instead of calling the provider (offline runs and
	// tests; see llm/replay). ProviderName must name their wire format.
	Replay []replay.Response
	// Respond, when set (and Replay is empty), is served on 127.0.0.1 the
	// same way but answers each request with Respond(request): for scripted
	// conversations whose order is not fixed (replay.NewResponder). The
	// server lives as long as the workspace.
	Respond func(replay.Request) replay.Response
	// Model is the model id ("" = the agent file's model, else the
	// provider's default).
	Model string
	// Params are the request knobs of every model call (output cap,
	// temperature, reasoning, tool choice).
	Params llm.Params
	// Limits bound every model call of a provider chosen by name (or
	// serving Replay): the stream idle timeout, the longest retry delay
	// honoured and an overall request deadline (llm.Limits documents them;
	// the zero value applies its defaults: 5 min idle, 60 s retry delay, no
	// deadline). Ignored with Provider: its own configuration applies.
	Limits llm.Limits

	// MaxToolResultBytes caps the text of every tool_result (built-in and
	// MCP tools; bytes): the first MaxToolResultBytes are kept with a note
	// saying how much was cut (tool.Env.MaxResultBytes). 0 =
	// tool.DefaultMaxResultBytes (256 KiB); negative = no cap. The size of
	// a model's answer is capped by Limits.MaxResponseBytes.
	MaxToolResultBytes int

	// Layout is the registered name of the request layout (prompt.Names);
	// "" = DefaultLayout. Every loop gets a fresh instance.
	Layout string
	// ReminderFile is the system reminder appended to each user prompt by
	// layouts that place one (tiered): "" = repoctx.DefaultReminderFile in Dir,
	// which may be absent; a named file must exist. It is re-read before
	// every request.
	ReminderFile string
	// URLs are fetched when the workspace opens (256 KiB and 15 s each)
	// and sent as URL context by layouts that place it (tiered); with any
	// other layout they are a *ConfigError. A URL that cannot be fetched
	// fails Open with an error naming it.
	URLs []string
	// Review is the base (branch, tag or commit) of review mode: the
	// summary, commit log, pre-change symbol map and reverse diffs of the
	// workspace against it (git) are sent as review context by layouts
	// that place it (tiered). An unknown base is a *ConfigError.
	Review string
	// ReviewFiles are the files of review mode's reverse diffs (paths
	// relative to the workspace; nil = every changed file). A file the
	// change does not touch is a *ConfigError; without Review, too.
	ReviewFiles []string

	// Mode is the approval mode of new sessions ("" = agent.ModeAllowlist).
	Mode agent.Mode
	// Approver answers the approvals Mode leaves open (nil: they are
	// rejected with a reason naming how to allow the call).
	Approver agent.Approver

	// Store records sessions (nil = session.NewMemory(): nothing outlives
	// the process). The workspace does not close it.
	Store session.Store

	// TracerProvider and MeterProvider, when set, receive every session's
	// OpenTelemetry spans and metrics (package telemetry, GenAI semantic
	// conventions: invoke_agent, chat and execute_tool spans, token usage
	// and operation duration histograms; docs/telemetry.md). Nil: none.
	// Message contents are added only when
	// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true. The caller
	// owns the providers: it flushes and shuts them down.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider

	// Tools are extra tools offered beside the agent's; a tool named like a
	// built-in replaces it. They pass the same approval as built-ins (in
	// allowlist mode they are asked about) unless their tool.Traits say
	// PreApproved (tool.WithTraits marks a tool the program trusts).
	Tools []tool.Tool
	// NoBuiltins offers no built-in tool (only Tools and MCP tools).
	NoBuiltins bool
	// DisableRepoContext gathers no file tree, symbol map or reminder for
	// layouts that ask for them (a replay of a session recorded in another
	// repository, where the local files would only add noise).
	DisableRepoContext bool
	// DisableMCP does not launch the agent's MCP servers; DisableAgentHooks runs
	// none of its hooks (agentSpawn, userPromptSubmit, pre/postToolUse).
	DisableMCP, DisableAgentHooks bool
	// Hooks are extra loop hooks (transform, guard, observer) run after the
	// agent's own.
	Hooks []agent.Hook
	// BeforeTurn and AfterTurn are the Turn callbacks (docs/turn.md) of
	// every loop.
	BeforeTurn func(ctx context.Context, info agent.TurnInfo) error
	AfterTurn  func(ctx context.Context, rec agent.TurnRecord)

	// MaxTurns is the continuation limit per prompt, in continuation
	// rounds (agent.Config.MaxTurns). 0 = settings.json's
	// runtime.continuation.maxIterations (config.LoadRuntimeSettings: the
	// workspace's .strata/settings.json, then the user config dir's
	// strata/settings.json), else agent.DefaultMaxTurns (docs/loop.md,
	// "continuation limit"). MaxSessionTokens stops a loop once it used
	// that many tokens (0 = no cap).
	MaxTurns         int
	MaxSessionTokens int64
	// Compaction, when set, detaches old turns into frozen history chunks
	// (compact.Default is the Context Pilot policy, docs/panels.md).
	Compaction *compact.Policy
	// CompactTLDR, with Compaction, shows a model-written tl;dr of each
	// long text message in detached chunks (compact.ProviderSummarizer on
	// the loop's provider and model; docs/panels.md, "tl;dr"). Render shows
	// chunks without tl;dr: it sends nothing.
	CompactTLDR bool
	// Now is the clock of the request time layouts may print (nil =
	// time.Now).
	Now func() time.Time
	// KeepAlive configures the keep-alive pings of every session: the
	// last request re-sent with max_tokens 1 while the session idles, so
	// its cache entry is read instead of lost (docs/keepalive.md). The
	// zero value sends none: pings are billed requests. keepalive.Options{On: true}
	// pings by the default policy (Anthropic and Bedrock models, layouts
	// that ask for pings: at most 11 pings per idle stretch, 4 min 30 s
	// apart), as the strata CLI does by default.
	KeepAlive keepalive.Options

	// Warn receives warnings (missing resources, MCP servers that failed to
	// launch, unknown tool names); nil logs them with slog.Warn.
	Warn func(msg string)
	// MCPStderr receives the MCP servers' stderr, each line prefixed with
	// the server's name (nil = discarded).
	MCPStderr io.Writer
	// MCPOAuth is how remote MCP servers that answer 401 are authorized
	// (docs/mcp-auth.md); the zero value opens the system browser and
	// keeps tokens only for the process.
	MCPOAuth mcp.OAuthOptions
	// MCPElicit puts MCP servers' elicitation requests to the person; nil
	// = servers are told strata does not support elicitation.
	MCPElicit mcp.Elicitor

	// MaxSubAgentDepth bounds how deep use_subagent nests: a sub-agent
	// of a sub-agent … at most this many levels below the session's agent
	// (0 = DefaultMaxSubAgentDepth; negative = no named sub-agents).
	// MaxSubAgentsPerResponse bounds the use_subagent calls run from one
	// model response (0 = DefaultMaxSubAgentsPerResponse), and
	// MaxToolCallsPerResponse all the tool calls run from one response (0
	// = DefaultMaxToolCallsPerResponse); calls over a limit are not run
	// and get an is_error tool_result saying why, so the next request
	// stays valid. Negative = no limit for these two.
	MaxSubAgentDepth, MaxSubAgentsPerResponse, MaxToolCallsPerResponse int
	// WebFetchAllowPrivate lets web_fetch reach loopback and private
	// addresses (127.0.0.0/8, ::1, 10/8, 172.16/12, 192.168/16, fc00::/7,
	// 100.64/10); link-local and cloud metadata addresses (169.254/16,
	// fe80::/10, fd00:ec2::254) stay refused (urlfetch.Policy).
	WebFetchAllowPrivate bool

	// Trust decides, before any of them runs, whether the commands the
	// workspace's files name may run: the agent file's hooks and the MCP
	// servers of the agent file, of the mcp.json files it includes and, for
	// the default agent, of .kiro/settings/mcp.json, .amazonq/mcp.json,
	// .mcp.json and the user's global mcp.json (trust.Request lists them; a
	// workspace that names none is not asked about). A refusal fails Open
	// with a *ConfigError matching trust.ErrUntrusted, and nothing ran. It is
	// asked again when an agent file is loaded later (a sub-agent spawned
	// by use_subagent, an agent swap), with trust.Request.Changed set when
	// the file's commands or permissions are not those it had at Open. nil
	// trusts every command the workspace holds at Open, as a program that
	// chose Dir and Agent itself may, and refuses Changed requests;
	// programs that open workspaces they did not write (a cloned repository)
	// should set it, e.g. trust.Remembered(store, ask) as the CLI does.
	// Servers given per session (SessionOptions.MCPServers, from an ACP
	// client) are the caller's choice and are not asked about.
	Trust trust.Func
}

// ConfigError is an error in the configuration a Workspace was given (an
// unknown layout or provider, an invalid agent file, a missing API key): the
// caller must change its input. The CLI exits with status 2 for it.
type ConfigError struct{ Err error }

// Error returns the underlying error's message.
func (e *ConfigError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *ConfigError) Unwrap() error { return e.Err }

func configErrorf(format string, args ...any) error {
	return &ConfigError{Err: fmt.Errorf(format, args...)}
}

// ErrClosed is returned by methods of a closed Workspace or Session.
var ErrClosed = errors.New("strata: closed")

// Workspace is an opened agent: the loaded configuration, its running MCP
// servers and hooks, the provider and the session store. Its methods are
// safe for concurrent use; each Session is one conversation.
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

// Open loads the agent (resolving a name as kiro does), launches its MCP
// servers and runs its agentSpawn hooks (unless disabled), and chooses the
// provider. A server that fails to launch is a warning, as in kiro.
// Configuration errors are *ConfigError. The caller must Close the
// workspace.
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

// Dir returns the workspace root.
func (w *Workspace) Dir() string { return w.dir }

// Agent returns the loaded agent; its Config is nil for strata's default
// agent.
func (w *Workspace) Agent() *agentfile.File { return w.agent }

// ProviderName returns the name of the chosen provider ("anthropic", …, or
// the Name of Options.Provider).
func (w *Workspace) ProviderName() string { return w.prov.Name }

// Model returns the model id requests carry.
func (w *Workspace) Model() string { return w.prov.Model }

// Layout returns the name of the workspace's layout.
func (w *Workspace) Layout() string { return w.opts.Layout }

// Store returns the session store.
func (w *Workspace) Store() session.Store { return w.store }

// MCP returns the agent's MCP manager (nil when the agent has no servers or
// MCP is disabled).
func (w *Workspace) MCP() *mcp.Manager { return w.mcp }

// Close terminates the agent's MCP servers and stops the replay server, if
// any. Sessions should be closed first. Close is idempotent.
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

// ProviderNames lists the providers Options.ProviderName accepts, sorted
// (without the providerAliases).
func ProviderNames() []string { return providers.Names() }
