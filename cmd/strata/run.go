package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/agentctx"
	"github.com/strata-agent/strata/internal/demo"
	"github.com/strata-agent/strata/internal/providers"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/tool"
)

type runFlags struct {
	provider, model, layout, format, agentFile string
	maxTurns                                   int
	maxTokens                                  int64
	replayFiles                                []string
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] PROMPT...",
		Short: "Run the agent loop on a prompt (offline demo when no API key is set)",
		Long: `Run the agent loop: stream the model's answer, execute the tool calls it makes
(fs_read, fs_write, execute_bash, grep, glob, rooted at the working directory),
feed the results back, and stop on end_turn or the turn limit.

Provider selection: --provider, else the first of ANTHROPIC_API_KEY, OPENAI_API_KEY
that is set, else the offline demo (a recorded session served on 127.0.0.1).
Base URLs: ANTHROPIC_BASE_URL, OPENAI_BASE_URL (and DEEPSEEK_/XAI_/OLLAMA_/VLLM_BASE_URL).
--replay FILE serves recorded responses (raw SSE, JSON-lines chunks or JSON) to the
real SDK client instead of calling the provider.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMain(cmd.Context(), f, strings.Join(args, " "))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.provider, "provider", "", "provider: "+strings.Join(providers.Names(), ", "))
	fl.StringVar(&f.model, "model", "", "model id (default: the provider's default)")
	fl.StringVar(&f.layout, "layout", "flat", "request layout: "+strings.Join(prompt.Names(), ", "))
	fl.StringVar(&f.format, "format", "text", "output: text (streamed answer) or json (one event per line)")
	fl.StringVar(&f.agentFile, "agent", "", "kiro / Amazon Q agent file (JSON) whose prompt becomes the system prompt")
	fl.IntVar(&f.maxTurns, "max-turns", agent.DefaultMaxTurns, "most model calls per prompt (continuation limit)")
	fl.Int64Var(&f.maxTokens, "max-tokens", 0, "output cap per model call in tokens (0 = provider default)")
	fl.StringSliceVar(&f.replayFiles, "replay", nil, "serve these recorded response files on 127.0.0.1 instead of calling the provider")
	return cmd
}

func runMain(ctx context.Context, f runFlags, text string) error {
	if f.format != "text" && f.format != "json" {
		return usagef("unknown --format %q (valid: text, json)", f.format)
	}
	if f.maxTurns < 1 {
		return usagef("--max-turns %d: want at least 1", f.maxTurns)
	}
	layout, err := prompt.Lookup(f.layout)
	if err != nil {
		return usageError{fmt.Errorf("--layout: %w", err)}
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	tmpl, tools, model, err := loadAgent(f.agentFile, wd)
	if err != nil {
		return err
	}
	if f.model == "" {
		f.model = model
	}
	prov, model, cleanup, err := selectProvider(f)
	if err != nil {
		return err
	}
	defer cleanup()
	reg := tool.NewRegistry(tools...)
	bus := event.NewBus()
	out := newPrinter(os.Stdout, f.format)
	bus.Subscribe(out.observe)
	ag, err := agent.New(agent.Config{
		Provider: prov, Layout: layout, Tools: reg, Env: &tool.Env{Workdir: wd},
		Model: model, Context: tmpl, MaxTokens: f.maxTokens, MaxTurns: f.maxTurns, Bus: bus,
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	res, runErr := ag.Prompt(ctx, text)
	bus.Close()
	out.finish()
	if f.format == "text" && res != nil {
		u := res.Usage
		fmt.Fprintf(os.Stderr, "[%s · %d model call(s) · tokens: input %d, output %d, cache read %d, cache write %d]\n",
			prov.Name(), res.Turns, u.Input, u.Output, u.CacheRead, u.CacheWrite)
	}
	if errors.Is(runErr, agent.ErrMaxTurns) {
		return fmt.Errorf("agent stopped: max turns %d reached", f.maxTurns)
	}
	return runErr
}

//go:embed default_system.md
var defaultSystem string

// loadAgent returns the context template, the tools and the agent's model for
// --agent FILE (resolved against the working directory, as kiro runs from
// the project root), or strata's default system prompt and every built-in
// tool when no agent is given. Warnings go to stderr.
func loadAgent(file, root string) (prompt.Context, []tool.Tool, string, error) {
	if file == "" {
		return prompt.Context{System: defaultSystem}, tool.Builtins(), "", nil
	}
	l, err := agentctx.Load(file, root)
	if err != nil {
		return prompt.Context{}, nil, "", usageError{err}
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
	return l.Context, tools, l.Agent.Model, nil
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
