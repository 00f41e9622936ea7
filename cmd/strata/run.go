package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/compact"
	"github.com/strata-agent/strata/config"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/agentctx"
	"github.com/strata-agent/strata/internal/demo"
	"github.com/strata-agent/strata/internal/providers"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/mcp"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/tool"
)

type runFlags struct {
	provider, model, layout, format, agentFile string
	approve, session, db                       string
	maxTurns                                   int
	maxTokens, maxSessionTokens                int64
	replayFiles                                []string
	replayDelay                                time.Duration
	compact                                    bool

	// Set by chat's full-screen mode, not by flags: screen receives the
	// loop's events and answers approvals instead of stdout and the
	// terminal prompt.
	screen *screenHooks
}

// screenHooks connect a full-screen UI to drive.
type screenHooks struct {
	observe  func(event.Event)
	approver agent.Approver
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] PROMPT...",
		Short: "Run the agent loop on a prompt (offline demo when no API key is set)",
		Long: `Run the agent loop: stream the model's answer, execute the tool calls it makes
(fs_read, fs_write, execute_bash, grep, glob, todo_list, use_subagent and the
agent's MCP tools, rooted at the working directory),
feed the results back, and stop on end_turn or the turn limit.

Every tool call passes the authority stack: the agent's tools, the approval mode
(--approve ask: you are asked on the terminal; allowlist: the agent's allowedTools
and the read-only built-ins run, the rest is asked; all: everything runs), then
the guard hooks.

Every run is recorded in the session database (see 'strata sessions'); the
session id is printed on stderr. --session ID continues a session.

Provider selection: --provider (anthropic, openai-chat, openai-responses, gemini,
bedrock, or an OpenAI-compatible name), else the first of ANTHROPIC_API_KEY,
OPENAI_API_KEY that is set, else the offline demo (a recorded session served on
127.0.0.1). Base URLs: ANTHROPIC_BASE_URL, OPENAI_BASE_URL, GEMINI_BASE_URL,
AWS_ENDPOINT_URL_BEDROCK_RUNTIME (and DEEPSEEK_/XAI_/OLLAMA_/VLLM_BASE_URL).
--replay FILE serves recorded responses (raw SSE, JSON-lines chunks, AWS
event-stream) to the real SDK client instead of calling the provider.
--compact detaches old turns into frozen conversation-history chunks.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMain(cmd.Context(), f, strings.Join(args, " "))
		},
	}
	addRunFlags(cmd, &f)
	fl := cmd.Flags()
	fl.StringVar(&f.session, "session", "", "continue this stored session (id or unique prefix)")
	return cmd
}

// addRunFlags adds the flags run shares with 'sessions resume' and 'sessions branch'.
func addRunFlags(cmd *cobra.Command, f *runFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.provider, "provider", "", "provider: "+strings.Join(providers.Names(), ", "))
	fl.StringVar(&f.model, "model", "", "model id (default: the provider's default)")
	fl.StringVar(&f.layout, "layout", "flat", "request layout: "+strings.Join(prompt.Names(), ", "))
	fl.StringVar(&f.format, "format", "text", "output: text (streamed answer) or json (one event per line)")
	fl.StringVar(&f.agentFile, "agent", "", "kiro / Amazon Q agent file (JSON)")
	fl.StringVar(&f.approve, "approve", "allowlist", "tool approval: ask, allowlist or all")
	fl.IntVar(&f.maxTurns, "max-turns", agent.DefaultMaxTurns, "most model calls per prompt (continuation limit)")
	fl.Int64Var(&f.maxTokens, "max-tokens", 0, "output cap per model call in tokens (0 = provider default)")
	fl.Int64Var(&f.maxSessionTokens, "max-session-tokens", 0, "stop when the loop has used this many tokens (0 = no cap)")
	fl.BoolVar(&f.compact, "compact", false, "detach old turns into frozen conversation-history chunks (docs/panels.md: chunks ≥ 25 messages and 5,000 tokens, ≥ 25 messages and 7,500 tokens kept live)")
	fl.StringSliceVar(&f.replayFiles, "replay", nil, "serve these recorded response files on 127.0.0.1 instead of calling the provider")
	fl.DurationVar(&f.replayDelay, "replay-delay", 0, "with --replay: pause this long before each streamed event (to watch or cancel a stream)")
	fl.StringVar(&f.db, "db", "", "session database (default: $STRATA_DATA_DIR/strata.db, else $XDG_DATA_HOME/strata/strata.db)")
}

func runMain(ctx context.Context, f runFlags, text string) error {
	return drive(ctx, f, func(ctx context.Context, s *runSession) (*agent.Result, error) {
		if err := resumePending(ctx, s); err != nil {
			return nil, err
		}
		return s.agent.Prompt(ctx, text)
	})
}

// runSession is one CLI run of a stored session's loop.
type runSession struct {
	id          string
	agent       *agent.Agent
	pending     []llm.Block // tool calls a crash cut off (resume)
	pendingTurn int         // the turn they belong to
}

// target says which stored loop a run continues: none (a new session), the
// latest loop of a session, or a branch made from a turn.
type target struct {
	session    string
	branchFrom int // ≥ 0: branch the session's latest loop after this turn
}

// drive sets up the loop for f (provider, layout, tools, authority, session
// store and recorder), calls body, and prints the outcome.
func drive(ctx context.Context, f runFlags, body func(context.Context, *runSession) (*agent.Result, error)) error {
	return driveTarget(ctx, f, target{session: f.session, branchFrom: -1}, body)
}

func driveTarget(ctx context.Context, f runFlags, tg target, body func(context.Context, *runSession) (*agent.Result, error)) error {
	if f.format != "text" && f.format != "json" {
		return usagef("unknown --format %q (valid: text, json)", f.format)
	}
	if f.maxTurns < 1 {
		return usagef("--max-turns %d: want at least 1", f.maxTurns)
	}
	rt, err := openRuntime(ctx, f)
	if err != nil {
		return err
	}
	defer rt.close()
	wd, prov, model, st, mode := rt.wd, rt.prov, rt.model, rt.store, rt.mode

	bus := event.NewBus()
	out := newPrinter(os.Stdout, f.format)
	var approver agent.Approver = terminalApprover()
	if f.screen != nil {
		bus.Subscribe(f.screen.observe)
		approver = f.screen.approver
	} else {
		bus.Subscribe(out.observe)
	}
	cfg := rt.config(rt.ld.env(wd), bus, mode, approver)
	rs, err := openRun(st, cfg, tg, session.SessionMeta{Cwd: wd, AgentFile: f.agentFile, Provider: prov.Name(), Model: model, Layout: f.layout})
	if err != nil {
		bus.Close()
		return err
	}
	rec := session.NewRecorder(st, rs.id)
	bus.SubscribeSync(rec.Observer())
	fmt.Fprintf(os.Stderr, "strata: session %s (loop %s)\n", rs.id, rs.agent.LoopID())

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	res, runErr := body(ctx, rs)
	bus.Close()
	out.finish()
	if err := rec.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "strata: warning: the session was not fully recorded: %v\n", err)
	}
	if f.format == "text" && res != nil {
		u := res.Usage
		fmt.Fprintf(os.Stderr, "[%s · %d model call(s) · tokens: input %d, output %d, cache read %d, cache write %d · session %s]\n",
			prov.Name(), res.Turns, u.Input, u.Output, u.CacheRead, u.CacheWrite, rs.id)
	}
	if errors.Is(runErr, agent.ErrMaxTurns) {
		return fmt.Errorf("agent stopped: max turns %d reached", f.maxTurns)
	}
	return runErr
}

// approvalMode parses --approve.
func approvalMode(s string) (agent.Mode, error) {
	m := agent.Mode(s)
	if m != agent.ModeAsk && m != agent.ModeAllowlist && m != agent.ModeAll {
		return "", usagef("unknown --approve %q (valid: ask, allowlist, all)", s)
	}
	return m, nil
}

// runtime is what every loop of one process shares: the layout, the loaded
// agent (with its MCP servers and hooks active), the provider and the
// session store. Used by run, sessions resume/branch and acp.
type runtime struct {
	f      runFlags // model defaulted from the agent file
	mode   agent.Mode
	layout prompt.Layout
	wd     string
	ld     *loaded
	prov   llm.Provider
	model  string
	store  *session.Store
	closer []func()
}

// openRuntime validates --approve and --layout, loads --agent (launching its MCP servers
// and running agentSpawn hooks), selects the provider and opens the store.
// The caller must call close.
func openRuntime(ctx context.Context, f runFlags) (*runtime, error) {
	mode, err := approvalMode(f.approve)
	if err != nil {
		return nil, err
	}
	layout, err := prompt.Lookup(f.layout)
	if err != nil {
		return nil, usageError{fmt.Errorf("--layout: %w", err)}
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	rt := &runtime{mode: mode, layout: layout, wd: wd}
	if rt.ld, err = loadAgent(f.agentFile, wd); err != nil {
		return nil, err
	}
	if f.model == "" {
		f.model = rt.ld.model
	}
	rt.f = f
	rt.closer = append(rt.closer, rt.ld.activate(ctx, wd))
	prov, model, cleanup, err := selectProvider(f)
	if err != nil {
		rt.close()
		return nil, err
	}
	rt.prov, rt.model = prov, model
	rt.closer = append(rt.closer, cleanup)
	if rt.store, err = openStore(f.db); err != nil {
		rt.close()
		return nil, err
	}
	rt.closer = append(rt.closer, func() { rt.store.Close() })
	return rt, nil
}

// close releases what openRuntime opened, last first.
func (rt *runtime) close() {
	for i := len(rt.closer) - 1; i >= 0; i-- {
		rt.closer[i]()
	}
}

// config is the agent configuration of one loop: the runtime's provider,
// layout, context, tools (with extra and use_subagent) and hooks, on env and
// bus.
func (rt *runtime) config(env *tool.Env, bus *event.Bus, mode agent.Mode, approver agent.Approver, extra ...tool.Tool) agent.Config {
	f, ld := rt.f, rt.ld
	cfg := agent.Config{
		Provider: rt.prov, Layout: rt.layout, Env: env, Model: rt.model, Context: ld.context,
		MaxTokens: f.maxTokens, MaxTurns: f.maxTurns, MaxSessionTokens: f.maxSessionTokens, Bus: bus, Mode: mode,
		AllowedTool: ld.allowedTool(), PreApproved: ld.preApproved(), Approver: approver, Hooks: ld.hooks,
	}
	if f.compact {
		p := compact.Default
		cfg.Compaction = &p
	}
	tools := append(append([]tool.Tool(nil), ld.tools...), extra...)
	cfg.Tools = tool.NewRegistry(append(tools, ld.subAgent(cfg)...)...)
	return cfg
}

//go:embed default_system.md
var defaultSystem string

// loaded is the agent a run or render uses: context template, tools, default
// model, and the kiro agent config (nil without --agent).
type loaded struct {
	context prompt.Context
	tools   []tool.Tool
	model   string
	cfg     *config.Agent
	servers []config.NamedMCPServer
	// Set by activate: loop hooks from the agent's hooks, and the config
	// name ("@server/tool") of each MCP tool's model-facing name.
	hooks    []agent.Hook
	mcpNames map[string]string
	mcp      *mcp.Manager // the agent's MCP servers; nil without an agent config
}

// loadAgent loads --agent FILE (resolved against root, as kiro runs from the
// project root), or strata's default system prompt and every built-in tool
// when no agent is given. Warnings go to stderr.
func loadAgent(file, root string) (*loaded, error) {
	if file == "" {
		return &loaded{context: prompt.Context{System: defaultSystem}, tools: tool.Builtins()}, nil
	}
	l, err := agentctx.Load(file, root)
	if err != nil {
		return nil, usageError{err}
	}
	for _, w := range l.Warnings {
		fmt.Fprintf(os.Stderr, "strata: warning: %s\n", w)
	}
	var tools []tool.Tool
	for _, t := range tool.Builtins() {
		if l.Agent.ToolAllowed(t.Spec().Name) {
			tools = append(tools, t)
		}
	}
	return &loaded{context: l.Context, tools: tools, model: l.Agent.Model, cfg: l.Agent, servers: l.Resolved.MCPServers}, nil
}

// subAgent returns the use_subagent tool when the agent may use it: each call
// runs a child loop with the parent's configuration (same bus, so the child is
// shown and recorded) minus use_subagent itself.
func (l *loaded) subAgent(parent agent.Config) []tool.Tool {
	if l.cfg != nil && !l.cfg.ToolAllowed(agent.SubAgentToolName) {
		return nil
	}
	child := parent
	return []tool.Tool{agent.SubAgentTool(func(_ context.Context, name string) (*agent.Agent, error) {
		if name != "" && (l.cfg == nil || name != l.cfg.Name) {
			return nil, fmt.Errorf("agent %q is not available: only the current agent runs as a sub-agent", name)
		}
		return agent.New(child)
	})}
}

// readOnlyBuiltins run without asking in allowlist mode when no agent config
// says otherwise (they cannot change the workspace).
var readOnlyBuiltins = map[string]bool{"fs_read": true, "grep": true, "glob": true}

func (l *loaded) allowedTool() func(string) bool {
	if l.cfg == nil {
		return nil
	}
	return func(name string) bool { return l.cfg.ToolAllowed(l.configName(name)) }
}

// preApproved is the allowlist: the agent's allowedTools (and kiro's
// default-trusted tools), else the read-only built-ins.
func (l *loaded) preApproved() func(llm.Block) bool {
	if l.cfg == nil {
		return func(c llm.Block) bool { return readOnlyBuiltins[c.Name] }
	}
	return func(c llm.Block) bool { return l.cfg.ToolAutoApproved(l.configName(c.Name)) }
}

// env is the workspace policy: rooted at wd, with the agent's toolsSettings
// paths and command patterns (built-in-tools.md).
func (l *loaded) env(wd string) *tool.Env {
	e := &tool.Env{Workdir: wd}
	if l.cfg == nil {
		return e
	}
	for _, name := range []string{"fs_read", "fs_write"} {
		s := l.cfg.ToolSettings(name)
		e.AllowedPaths = append(e.AllowedPaths, s.AllowedPaths...)
		e.DeniedPaths = append(e.DeniedPaths, s.DeniedPaths...)
	}
	s := l.cfg.ToolSettings("execute_bash")
	e.AllowedCommands, e.DeniedCommands = s.AllowedCommands, s.DeniedCommands
	return e
}

// selectProvider resolves --provider / --replay / the environment into a
// provider and model. With no key and no flag it starts the offline demo.
func selectProvider(f runFlags) (llm.Provider, string, func(), error) {
	nop := func() {}
	var spec providers.Spec
	explicit := f.provider != ""
	if explicit {
		s, err := providers.Lookup(f.provider)
		if err != nil {
			return nil, "", nop, usageError{fmt.Errorf("--provider: %w", err)}
		}
		spec = s
	}
	if len(f.replayFiles) > 0 {
		return replayProvider(f, spec)
	}
	if !explicit {
		s, ok := providers.FromEnv()
		if !ok {
			return demoProvider(f)
		}
		spec = s
	}
	p, err := providers.New(spec, providers.Options{MaxRetries: 2})
	if err != nil {
		return nil, "", nop, usageError{err}
	}
	model := f.model
	if model == "" {
		model = spec.Model
	}
	if model == "" {
		return nil, "", nop, usagef("provider %s has no default model: pass --model", spec.Name)
	}
	return p, model, nop, nil
}

func demoProvider(f runFlags) (llm.Provider, string, func(), error) {
	script, err := demo.Script()
	if err != nil {
		return nil, "", func() {}, err
	}
	srv, err := replay.NewServer(script...)
	if err != nil {
		return nil, "", func() {}, err
	}
	wd, _ := os.Getwd()
	fmt.Fprintf(os.Stderr, "strata: no API key set, so this is an OFFLINE REPLAY: the model's words are a recorded demo\n"+
		"        session served by llm/replay on %s; the tool calls run for real in %s.\n"+
		"        Your prompt is not read by a model. To use a real model set ANTHROPIC_API_KEY or OPENAI_API_KEY\n"+
		"        (or pass --provider).\n", srv.URL(), wd)
	spec, _ := providers.Lookup("anthropic")
	p, err := providers.New(spec, providers.Options{APIKey: "offline-replay", BaseURL: srv.URL()})
	if err != nil {
		srv.Close()
		return nil, "", func() {}, err
	}
	return p, demo.Model, func() { srv.Close() }, nil
}

// replayProvider serves --replay files and points the chosen (or detected)
// provider at them.
func replayProvider(f runFlags, spec providers.Spec) (llm.Provider, string, func(), error) {
	nop := func() {}
	var script []replay.Response
	family := replay.Family("")
	for _, path := range f.replayFiles {
		rs, fam, err := loadReplayFile(path)
		if err != nil {
			return nil, "", nop, usageError{err}
		}
		if family == "" {
			family = fam
		}
		script = append(script, rs...)
	}
	for i := range script {
		script[i].Delay = f.replayDelay
	}
	if spec.Name == "" {
		name := string(family)
		if name == "" {
			return nil, "", nop, usagef("--replay: cannot tell the provider of %s; pass --provider", f.replayFiles[0])
		}
		spec, _ = providers.Lookup(name)
	}
	srv, err := replay.NewServer(script...)
	if err != nil {
		return nil, "", nop, err
	}
	fmt.Fprintf(os.Stderr, "strata: replaying %d recorded response(s) from %s on %s (provider %s)\n",
		len(script), strings.Join(f.replayFiles, ", "), srv.URL(), spec.Name)
	p, err := providers.New(spec, providers.Options{APIKey: "replay", BaseURL: srv.URL()})
	if err != nil {
		srv.Close()
		return nil, "", nop, usageError{err}
	}
	model := f.model
	if model == "" {
		model = "replay"
	}
	return p, model, func() { srv.Close() }, nil
}
