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
	"io"
	"time"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/agentfile"
	"github.com/strata-agent/strata/compact"
	"github.com/strata-agent/strata/internal/providers"
	"github.com/strata-agent/strata/internal/wsrt"
	"github.com/strata-agent/strata/keepalive"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/mcp"
	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/tool"
	"github.com/strata-agent/strata/trust"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// DefaultLayout is the layout used when Options.Layout is empty: cachefit,
// the cheapest layout in every measurement of `strata bench cache` (README,
// "What the layouts cost").
const DefaultLayout = "cachefit"

// Defaults of the limits Options sets (docs/security.md, "Limits you can
// set"; config keys subAgentDepth, subAgentsPerResponse and
// toolCallsPerResponse).
const (
	// DefaultMaxSubAgentDepth is how many use_subagent levels may nest
	// below the session's agent: a ping ↔ pong pair of agents delegating
	// to each other stops there.
	DefaultMaxSubAgentDepth = 3
	// DefaultMaxSubAgentsPerResponse is how many use_subagent calls of one
	// model response run.
	DefaultMaxSubAgentsPerResponse = 8
	// DefaultMaxToolCallsPerResponse is how many tool calls of one model
	// response run.
	DefaultMaxToolCallsPerResponse = 64
)

// The runtime (internal/wsrt) applies the same defaults: each line below
// fails to compile when a value differs (an index out of range, a
// duplicate map key).
var (
	_ = [1]struct{}{}[DefaultMaxSubAgentDepth-wsrt.DefaultMaxSubAgentDepth]
	_ = [1]struct{}{}[DefaultMaxSubAgentsPerResponse-wsrt.DefaultMaxSubAgentsPerResponse]
	_ = [1]struct{}{}[DefaultMaxToolCallsPerResponse-wsrt.DefaultMaxToolCallsPerResponse]
	_ = map[bool]int{false: 0, DefaultLayout == wsrt.DefaultLayout: 0}
)

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
//
// It is struct{ Err error } (Err is the underlying error, which Error and
// Unwrap return), an alias of the runtime's type: errors.As(err, &ce) with
// a *strata.ConfigError matches every configuration error strata returns.
type ConfigError = wsrt.ConfigError

// ErrClosed is returned by methods of a closed Workspace or Session.
var ErrClosed = wsrt.ErrClosed

// ErrPromptRunning is returned by Session.SwapAgent while a prompt runs:
// an agent swap happens between prompts.
var ErrPromptRunning = wsrt.ErrPromptRunning

// Workspace is an opened agent: the loaded configuration, its running MCP
// servers and hooks, the provider and the session store. Its methods are
// safe for concurrent use; each Session is one conversation.
type Workspace struct{ rt *wsrt.Workspace }

// Open loads the agent (resolving a name as kiro does), launches its MCP
// servers and runs its agentSpawn hooks (unless disabled), and chooses the
// provider. A server that fails to launch is a warning, as in kiro.
// Configuration errors are *ConfigError. The caller must Close the
// workspace.
func Open(ctx context.Context, o Options) (*Workspace, error) {
	rt, err := wsrt.Open(ctx, wsrt.Options(o))
	if err != nil {
		return nil, err
	}
	return &Workspace{rt: rt}, nil
}

// Dir returns the workspace root.
func (w *Workspace) Dir() string { return w.rt.Dir() }

// Agent returns the loaded agent; its Config is nil for strata's default
// agent.
func (w *Workspace) Agent() *agentfile.File { return w.rt.Agent() }

// ProviderName returns the name of the chosen provider ("anthropic", …, or
// the Name of Options.Provider).
func (w *Workspace) ProviderName() string { return w.rt.ProviderName() }

// Model returns the model id requests carry.
func (w *Workspace) Model() string { return w.rt.Model() }

// Layout returns the name of the workspace's layout.
func (w *Workspace) Layout() string { return w.rt.Layout() }

// Store returns the session store.
func (w *Workspace) Store() session.Store { return w.rt.Store() }

// MCP returns the agent's MCP manager (nil when the agent has no servers or
// MCP is disabled).
func (w *Workspace) MCP() *mcp.Manager { return w.rt.MCP() }

// Mode returns the approval mode sessions of the workspace start in
// (Options.Mode); Session.SetMode changes one session's.
func (w *Workspace) Mode() agent.Mode { return w.rt.Mode() }

// ToolEnv returns the environment the workspace's built-in tools run in
// for a session of its directory: the path rules of the agent's
// toolsSettings (fs_read's allowedPaths and deniedPaths, fs_write's) and
// execute_bash's command patterns. A UI uses it to read what a tool call
// will change (tool.FSWrite.Preview) or a file the user mentions with the
// same rules the tools apply. The agent a session swaps to has its own
// rules: call it again after a swap.
func (w *Workspace) ToolEnv() *tool.Env { return w.rt.ToolEnv() }

// Close terminates the agent's MCP servers and stops the replay server, if
// any. Sessions should be closed first. Close is idempotent.
func (w *Workspace) Close() error { return w.rt.Close() }

// ProviderNames lists the providers Options.ProviderName accepts, sorted
// (without the providerAliases).
func ProviderNames() []string { return providers.Names() }
