package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"time"

	"github.com/strata-agent/strata/internal/providers"
	"github.com/strata-agent/strata/trust"

	"github.com/spf13/cobra"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/compact"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/demo"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/mcp"
)

type runFlags struct {
	provider, model, layout, format, agentFile string
	approve, session, db                       string
	maxTurns                                   int
	context                                    contextFlags
	maxTokens, maxSessionTokens                int64
	replayFiles                                []string
	replayDelay                                time.Duration
	streamIdle, maxRetryDelay, requestTimeout  time.Duration
	compact, compactTLDR                       bool
	trust                                      bool // --trust: the workspace's hooks and MCP servers may run
	subAgentDepth, subAgentsPerResponse        int  // --max-subagent-depth, --max-subagents-per-response
	toolCallsPerResponse                       int  // --max-tool-calls-per-response
	webFetchPrivate                            bool // --web-fetch-private
	continueHere                               bool // -c/--continue: the last session of this directory
	knobs                                      knobFlags
	keepalive                                  *keepAliveFlag // --keepalive (chat, acp, worker); nil = no pings (run)

	// first is the chat's first prompt ('strata "a question"'), not a flag.
	first string

	// Set by chat's full-screen mode, not by flags: screen receives the
	// loop's events and answers approvals instead of stdout and the
	// terminal prompt.
	screen *screenHooks
	// lineAsker is set by chat's line mode on a terminal: its stdin reader
	// owns the terminal, so tool approvals and MCP forms are asked through
	// it (lineAsker).
	lineAsker *lineAsker
}

// screenHooks connect a full-screen UI to drive.
type screenHooks struct {
	observe  func(event.Event)
	approver agent.Approver
	elicit   mcp.Elicitor // MCP servers' forms, asked on the screen
}

func newRunCmd() *cobra.Command {
	var f runFlags
	var t temporalFlags
	cmd := &cobra.Command{
		Use:   "run [flags] PROMPT... | -",
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
session id is printed on stderr. --session ID continues a session; -c continues
the last session run in this directory.

The prompt is the arguments, or standard input when it is '-' or when there are
no arguments and standard input is not a terminal (echo "fix the tests" | strata run).

Provider selection: --provider (anthropic, openai-chat, openai-responses, gemini,
bedrock, or an OpenAI-compatible name), else the first of ANTHROPIC_API_KEY,
OPENAI_API_KEY that is set, else the offline demo (a recorded session served on
127.0.0.1). Base URLs: ANTHROPIC_BASE_URL, OPENAI_BASE_URL, GEMINI_BASE_URL,
AWS_ENDPOINT_URL_BEDROCK_RUNTIME (and DEEPSEEK_/XAI_/OLLAMA_/VLLM_BASE_URL).
--replay FILE serves recorded responses (raw SSE, JSON-lines chunks, AWS
event-stream) to the real SDK client instead of calling the provider.
--compact detaches old turns into frozen conversation-history chunks.
` + temporalHelp,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := promptArg(cmd, args, os.Stdin)
			if err != nil {
				return err
			}
			if t.on() {
				return remoteRun(cmd.Context(), f, t, text)
			}
			return runMain(cmd.Context(), f, text)
		},
	}
	addRunFlags(cmd, &f)
	addSessionFlags(cmd.Flags(), &f)
	t.add(cmd.Flags())
	return cmd
}

// addRunFlags adds the flags run shares with 'sessions resume' and 'sessions branch'.
func addRunFlags(cmd *cobra.Command, f *runFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.provider, "provider", "", providerHelp())
	fl.StringVar(&f.model, "model", "", "model id (default: the provider's default)")
	fl.StringVar(&f.layout, "layout", strata.DefaultLayout, layoutHelp())
	fl.StringVar(&f.format, "format", "text", "output: text (streamed answer) or json (one event per line)")
	fl.StringVar(&f.agentFile, "agent", "", agentHelp)
	fl.StringVar(&f.approve, "approve", "allowlist", "tool approval: ask, allowlist or all")
	fl.IntVar(&f.maxTurns, "max-turns", 0, "most continuation rounds per prompt (tool results sent back to the model; 1 = one tool round-trip; 0 = settings.json runtime.continuation.maxIterations, else 50)")
	fl.Int64Var(&f.maxTokens, "max-tokens", 0, "output cap per model call in tokens (0 = provider default)")
	fl.Int64Var(&f.maxSessionTokens, "max-session-tokens", 0, "stop when the loop has used this many tokens (0 = no cap)")
	fl.BoolVar(&f.compact, "compact", false, "detach old turns into frozen conversation-history chunks (docs/panels.md: chunks ≥ 25 messages and 5,000 tokens, ≥ 25 messages and 7,500 tokens kept live)")
	fl.BoolVar(&f.compactTLDR, "compact-tldr", false, "with --compact: detached chunks show a model-written tl;dr of each long message (asked of the same provider and model; docs/panels.md, \"tl;dr\")")
	fl.StringSliceVar(&f.replayFiles, "replay", nil, "serve these recorded response files on 127.0.0.1 instead of calling the provider")
	fl.DurationVar(&f.replayDelay, "replay-delay", 0, "with --replay or the offline demo: pause this long before each streamed event (to watch or cancel a stream)")
	addStoreFlags(fl, &f.db)
	fl.DurationVar(&f.streamIdle, "stream-idle-timeout", llm.DefaultStreamIdleTimeout,
		"fail a model call when the server sends nothing for this long (0 = no limit)")
	fl.DurationVar(&f.maxRetryDelay, "max-retry-delay", llm.DefaultMaxRetryDelay,
		"fail at once when the server asks to wait longer than this before a retry (0 = wait as long as it asks)")
	fl.DurationVar(&f.requestTimeout, "request-timeout", 0,
		"fail a model call still unfinished after this long, retries and the streamed answer included (0 = no limit)")
	fl.BoolVar(&f.trust, "trust", false, trustHelp)
	fl.IntVar(&f.subAgentDepth, "max-subagent-depth", strata.DefaultMaxSubAgentDepth, "most use_subagent levels below the session's agent (0 = the default)")
	fl.IntVar(&f.subAgentsPerResponse, "max-subagents-per-response", strata.DefaultMaxSubAgentsPerResponse,
		"most use_subagent calls run from one model response; the others get an error result (0 = the default)")
	fl.IntVar(&f.toolCallsPerResponse, "max-tool-calls-per-response", strata.DefaultMaxToolCallsPerResponse,
		"most tool calls run from one model response; the others get an error result (0 = the default)")
	fl.BoolVar(&f.webFetchPrivate, "web-fetch-private", false,
		"let web_fetch reach loopback and private addresses (link-local and cloud metadata addresses stay refused)")
	f.knobs.add(fl)
	f.context.add(fl)
}

// limits returns the llm.Limits of --stream-idle-timeout, --max-retry-delay
// and --request-timeout (a flag's 0 turns its limit off), or a usage error
// naming a negative flag.
func (f runFlags) limits() (llm.Limits, error) {
	off := func(d time.Duration) time.Duration {
		if d == 0 {
			return -1 // llm.Limits: negative = no limit; 0 would be the default
		}
		return d
	}
	for _, fl := range []struct {
		name string
		d    time.Duration
	}{{"--stream-idle-timeout", f.streamIdle}, {"--max-retry-delay", f.maxRetryDelay}, {"--request-timeout", f.requestTimeout}} {
		if fl.d < 0 {
			return llm.Limits{}, usagef("%s %s: want a duration ≥ 0 (0 = no limit)", fl.name, fl.d)
		}
	}
	return llm.Limits{StreamIdleTimeout: off(f.streamIdle), MaxRetryDelay: off(f.maxRetryDelay), RequestTimeout: f.requestTimeout}, nil
}

func runMain(ctx context.Context, f runFlags, text string) error {
	return drive(ctx, f, func(ctx context.Context, s *strata.Session) (*agent.Result, error) {
		if err := resumePending(ctx, s); err != nil {
			return nil, err
		}
		return s.Prompt(ctx, text)
	})
}

// target says which stored loop a run continues: none (a new session), the
// latest loop of a session, or a branch made from a turn.
type target struct {
	session    string
	branchFrom int    // ≥ 0: branch after this turn (numbered across the latest conversation, or of branchLoop)
	branchLoop string // the loop whose turn branchFrom is; "" = count across the latest conversation
}

// drive opens the workspace and session for f (provider, layout, tools,
// authority, session store and recorder), calls body, and prints the
// outcome.
func drive(ctx context.Context, f runFlags, body func(context.Context, *strata.Session) (*agent.Result, error)) error {
	id, err := sessionToContinue(ctx, f)
	if err != nil {
		return err
	}
	return driveTarget(ctx, f, target{session: id, branchFrom: -1}, body)
}

func driveTarget(ctx context.Context, f runFlags, tg target, body func(context.Context, *strata.Session) (*agent.Result, error)) error {
	if f.format != "text" && f.format != "json" {
		return usagef("unknown --format %q (valid: text, json)", f.format)
	}
	if f.maxTurns < 0 {
		return usagef("--max-turns %d: want at least 1 (0 = settings.json, else %d)", f.maxTurns, agent.DefaultMaxTurns)
	}
	out := newPrinter(os.Stdout, f.format)
	var approver agent.Approver = terminalApprover()
	so := strata.SessionOptions{OnEvent: out.observe}
	switch {
	case f.screen != nil:
		approver = f.screen.approver
		so.OnEvent = f.screen.observe
	case f.lineAsker != nil:
		approver = f.lineAsker
	}
	ws, err := openWorkspace(ctx, f, func(o *strata.Options) {
		o.Approver = approver
		switch {
		case f.screen != nil:
			o.MCPElicit = f.screen.elicit
		case f.lineAsker != nil:
			o.MCPElicit = f.lineAsker
		case isTerminal(os.Stdin):
			o.MCPElicit = cliElicitor("")
		}
	})
	if err != nil {
		return err
	}
	defer ws.Close()
	defer ws.Store().Close()
	var s *strata.Session
	switch {
	case tg.session == "":
		s, err = ws.NewSession(ctx, so)
	case tg.branchFrom >= 0 && tg.branchLoop != "":
		s, err = ws.BranchSessionAt(ctx, tg.session, tg.branchLoop, tg.branchFrom, so)
	case tg.branchFrom >= 0:
		s, err = ws.BranchSession(ctx, tg.session, tg.branchFrom, so)
	default:
		s, err = ws.ResumeSession(ctx, tg.session, so)
	}
	if err != nil {
		return cliError(err)
	}
	noteDemo(f)
	fmt.Fprintf(os.Stderr, "strata: session %s (loop %s)\n", s.ID(), s.LoopID())
	out.setSession(s.ID())

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	res, runErr := body(ctx, s)
	// A step that was not stored fails the run (exit 1): the next
	// continuation would send a history the model never saw.
	if err := s.Close(); err != nil && runErr == nil {
		runErr = err
	} else if err != nil {
		fmt.Fprintf(os.Stderr, "strata: %v\n", err)
	}
	if nt, ok := approver.(*noTerminal); ok && runErr == nil {
		runErr = nt.err()
	}
	out.finish()
	if f.format == "json" {
		out.result(resultOf(s, res, runErr))
	}
	if f.format == "text" && res != nil {
		u := res.Usage
		fmt.Fprintf(os.Stderr, "[%s · %d model call(s) · tokens: input %d, output %d, cache read %d, cache write %d · %s · session %s]\n",
			ws.ProviderName(), res.Turns, u.Input, u.Output, u.CacheRead, u.CacheWrite, costText(s.UsageReport(), ws.Model()), s.ID())
	}
	if ctx.Err() != nil && errors.Is(runErr, context.Canceled) {
		return &interruptedError{session: s.ID(), err: runErr}
	}
	if errors.Is(runErr, agent.ErrMaxTurns) {
		n := f.maxTurns
		if res != nil {
			n = res.Rounds // the bound in force (--max-turns, max_turns or settings.json)
		}
		return fmt.Errorf("agent stopped: max turns %d reached (continuation rounds; tool calls before the limit may have completed)", n)
	}
	return cliError(runErr)
}

// resultOf is the run's outcome for the JSON result line.
func resultOf(s *strata.Session, res *agent.Result, err error) runResult {
	r := runResult{SessionID: s.ID(), LoopID: s.LoopID()}
	if res != nil {
		r.Answer, r.StopReason, r.Usage, r.Turns = res.Message.Text(), string(res.StopReason), res.Usage, res.Turns
	}
	if rep := s.UsageReport(); priced(rep, s.Workspace().Model()) {
		r.CostUSD = &rep.CostUSD
	}
	if err != nil {
		r.Error = err.Error()
	}
	return r
}

// approvalMode parses --approve.
func approvalMode(s string) (agent.Mode, error) {
	m := agent.Mode(s)
	if m != agent.ModeAsk && m != agent.ModeAllowlist && m != agent.ModeAll {
		return "", usagef("unknown --approve %q (valid: ask, allowlist, all)", s)
	}
	return m, nil
}

// cliError marks the runtime's configuration errors, an untrusted
// workspace (trust.ErrUntrusted) and requests a provider refuses to send as
// configured (a knob its wire API cannot express) as usage errors (exit 2).
func cliError(err error) error {
	var ce *strata.ConfigError
	if errors.As(err, &ce) || errors.Is(err, llm.ErrInvalidRequest) || errors.Is(err, trust.ErrUntrusted) {
		return usageError{err}
	}
	return err
}

// openWorkspace validates the run flags and opens the workspace they
// describe: --agent (MCP servers launched, agentSpawn hooks run), the
// provider (--provider, --replay, the environment, else the offline demo),
// --layout, --approve, the request knobs, the limits (--stream-idle-timeout,
// --max-retry-delay, --request-timeout) and the session database. adjust,
// when non-nil, changes the options before opening. The caller closes the
// workspace and its store.
func openWorkspace(ctx context.Context, f runFlags, adjust func(*strata.Options)) (*strata.Workspace, error) {
	o, err := workspaceOptions(f, adjust)
	if err != nil {
		return nil, err
	}
	if o.Store, err = openStore(f.db); err != nil {
		return nil, err
	}
	withTelemetry(&o)
	ws, err := strata.Open(ctx, o)
	if err != nil {
		o.Store.Close()
		return nil, cliError(err)
	}
	return ws, nil
}

// workspaceOptions validates the run flags and returns the strata.Options
// they describe (openWorkspace's, without the session store and telemetry):
// 'strata worker' opens its sessions' workspaces with them.
func workspaceOptions(f runFlags, adjust func(*strata.Options)) (strata.Options, error) {
	mode, err := approvalMode(f.approve)
	if err != nil {
		return strata.Options{}, err
	}
	params, err := f.knobs.params(f.maxTokens)
	if err != nil {
		return strata.Options{}, err
	}
	limits, err := f.limits()
	if err != nil {
		return strata.Options{}, err
	}
	o := strata.Options{Agent: f.agentFile, ProviderName: f.provider, Model: f.model, Layout: f.layout, Mode: mode,
		Params: params, Limits: limits, MaxTurns: f.maxTurns, MaxSessionTokens: f.maxSessionTokens, Warn: warn, MCPStderr: logs.mcpStderr(),
		Trust: cliTrust(f.trust), KeepAlive: f.keepalive.options(),
		MaxSubAgentDepth: f.subAgentDepth, MaxSubAgentsPerResponse: f.subAgentsPerResponse,
		MaxToolCallsPerResponse: f.toolCallsPerResponse, WebFetchAllowPrivate: f.webFetchPrivate}
	f.context.apply(&o)
	if o.MCPOAuth, err = mcpOAuthOptions(isTerminal(os.Stdin)); err != nil {
		return strata.Options{}, err
	}
	o.MCPElicit = cliElicitor("no terminal to ask on")
	if f.compactTLDR && !f.compact {
		return strata.Options{}, usageError{errors.New("--compact-tldr needs --compact")}
	}
	if f.compact {
		p := compact.Default
		o.Compaction, o.CompactTLDR = &p, f.compactTLDR
	}
	if err := chooseReplay(f, &o); err != nil {
		return strata.Options{}, err
	}
	if adjust != nil {
		adjust(&o)
	}
	return o, nil
}

// warn prints a warning on stderr and goes on (kiro reports missing
// resources, hook scripts and MCP commands the same way). While the
// full-screen chat owns the terminal the warning goes into its transcript
// instead (warnTo), so that nothing is written over the screen.
func warn(s string) {
	if to := warnTo.Load(); to != nil {
		(*to)("warning: " + s)
	} else {
		fmt.Fprintf(os.Stderr, "strata: warning: %s\n", s)
	}
	logs.logWarning(s)
}

// warnTo, when set, receives the warnings (the full-screen chat's
// transcript).
var warnTo atomic.Pointer[func(string)]

// chooseReplay sets o.Replay from --replay, or points the provider at the
// offline demo (internal/demo, served on 127.0.0.1 for the life of the
// process) when no provider is named and no API key is set.
func chooseReplay(f runFlags, o *strata.Options) error {
	if len(f.replayFiles) > 0 {
		return replayFiles(f, o)
	}
	if f.provider != "" {
		return nil
	}
	if !usesDemo(f) {
		return nil
	}
	delay := f.replayDelay
	o.ProviderName = "anthropic"
	o.Respond = func(r replay.Request) replay.Response { return demo.Respond(r, delay) }
	if o.Model == "" {
		o.Model = demo.Model
	}
	return nil
}

// usesDemo reports whether f runs the offline demo: no --replay, no
// provider named and no API key in the environment.
func usesDemo(f runFlags) bool {
	if len(f.replayFiles) > 0 || f.provider != "" {
		return false
	}
	_, ok := providers.FromEnv()
	return !ok
}

// noteDemo says on stderr that the offline demo answers, when it does. It
// is called once the workspace and session have opened, so a configuration
// error (an unknown agent or session) is not preceded by it.
func noteDemo(f runFlags) {
	if !usesDemo(f) {
		return
	}
	wd, _ := os.Getwd()
	fmt.Fprintf(os.Stderr, "strata: no API key set, so this is an OFFLINE REPLAY: the model's words are a recorded demo\n"+
		"        served by llm/replay on 127.0.0.1; the tool calls run for real in %s.\n"+
		"        Your prompt is not read by a model: every prompt gets the same list-and-read answer.\n"+
		"        To use a real model set ANTHROPIC_API_KEY or OPENAI_API_KEY (or pass --provider).\n", wd)
}

// replayFiles serves --replay files to the chosen (or detected) provider.
func replayFiles(f runFlags, o *strata.Options) error {
	family := replay.Family("")
	for _, path := range f.replayFiles {
		rs, fam, err := loadReplayFile(path)
		if err != nil {
			return usageError{err}
		}
		if family == "" {
			family = fam
		}
		o.Replay = append(o.Replay, rs...)
	}
	for i := range o.Replay {
		o.Replay[i].Delay = f.replayDelay
	}
	if o.ProviderName == "" {
		if family == "" {
			return usagef("--replay: cannot tell the provider of %s; pass --provider", f.replayFiles[0])
		}
		o.ProviderName = string(family)
	}
	fmt.Fprintf(os.Stderr, "strata: replaying %d recorded response(s) from %s on 127.0.0.1 (provider %s)\n",
		len(o.Replay), strings.Join(f.replayFiles, ", "), o.ProviderName)
	return nil
}
