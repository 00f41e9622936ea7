package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/internal/benchcache"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/token"
	"github.com/strata-agent/strata/tool"
	"github.com/strata-agent/strata/trajectory"
)

func init() { register(newReplayCmd) }

func newReplayCmd() *cobra.Command {
	var file, layout, provider, format string
	cmd := &cobra.Command{
		Use:   "replay --trajectory FILE",
		Short: "Re-drive a recorded trajectory through the loop and price each turn's request",
		Long: `Re-drive a recorded mini-swe-agent trajectory through strata's real loop: each
recorded model reply is served as an Anthropic Messages stream by llm/replay on
127.0.0.1 to the real SDK, each execute_bash call gets the recorded observation from
a replay tool, and each request is assembled by --layout. Every request is then run
through --provider's prompt-cache simulator: per turn it prints the prompt tokens,
the simulated cache read/write tokens and the cost in USD.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return replayTrajectory(cmd.Context(), os.Stdout, file, layout, provider, format)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&file, "trajectory", "", "a *.traj.json file (required)")
	fl.StringVar(&layout, "layout", strata.DefaultLayout, layoutHelp())
	fl.StringVar(&provider, "provider", "anthropic", "cache simulator and prices: "+simProviderNames)
	fl.StringVar(&format, "format", "table", "table or json")
	return cmd
}

// turnRow is one replayed turn.
type turnRow struct {
	Turn       int     `json:"turn"`
	Prompt     int64   `json:"prompt_tokens"`
	Input      int64   `json:"input_tokens"`
	CacheRead  int64   `json:"cache_read_tokens"`
	CacheWrite int64   `json:"cache_write_tokens"`
	Output     int64   `json:"output_tokens"`
	CostUSD    float64 `json:"cost_usd"`
	Observed   int64   `json:"observed_cached_tokens"` // what the recording's provider reported
}

func replayTrajectory(ctx context.Context, w io.Writer, file, layoutName, provider, format string) error {
	if file == "" {
		return usagef("--trajectory FILE is required")
	}
	if format != "table" && format != "json" {
		return usagef("unknown --format %q (valid: table, json)", format)
	}
	provider, err := simProvider(provider)
	if err != nil {
		return err
	}
	price, _ := cachesim.Lookup(benchcache.DefaultModels[provider])
	if _, err := prompt.Lookup(layoutName); err != nil {
		return usageError{fmt.Errorf("--layout: %w", err)}
	}
	tr, err := trajectory.Load(file)
	if err != nil {
		return usageError{err}
	}
	script := make([]replay.Response, len(tr.Calls))
	for i, c := range tr.Calls {
		reply := tr.Reply(i)
		stop := llm.StopEndTurn
		if len(reply.ToolUses()) > 0 {
			stop = llm.StopToolUse
		}
		u := c.Usage.LLM()
		u.Reasoning = 0 // Anthropic reports thinking inside output_tokens, with no count of its own
		if script[i], err = replay.AnthropicStream(fmt.Sprintf("msg_replay_%d", i), u, stop, reply.Content...); err != nil {
			return fmt.Errorf("replay %s: call %d: %w", file, i, err)
		}
	}

	var sim cachesim.Simulator = cachesim.ForPrice(price)
	if provider == "bedrock" {
		sim = cachesim.NewBedrock(price.MinCacheableTokens)
	}
	var rows []turnRow
	var simErr error
	price1 := func(req *llm.Request) {
		i := len(rows)
		if i >= len(tr.Calls) || simErr != nil {
			return
		}
		c := tr.Calls[i]
		r, err := sim.Simulate(cachesim.FromRequest(req, token.Estimator{}, c.Created, c.Usage.CompletionTokens))
		if err != nil {
			simErr = fmt.Errorf("turn %d: %w", i, err)
			return
		}
		rows = append(rows, turnRow{Turn: i, Prompt: r.Prompt, Input: r.Input, CacheRead: r.CacheRead, CacheWrite: r.CacheWrite,
			Output: r.Output, CostUSD: price.Cost(r), Observed: c.Usage.CachedTokens})
	}
	observe := agent.Hook{Name: "price", Stage: agent.StageSendRequest, Phase: agent.PhasePre, Kind: agent.HookObserver,
		Func: func(_ context.Context, p *agent.Payload) (agent.Verdict, error) {
			price1(p.Request)
			return agent.Verdict{}, nil
		}}
	calls := 0
	ws, err := strata.Open(ctx, strata.Options{
		ProviderName: "anthropic", Replay: script, Model: price.ID, Layout: layoutName, Mode: agent.ModeAll,
		Instructions: tr.System, NoBuiltins: true, Tools: []tool.Tool{newRecordedBash(tr)},
		DisableMCP: true, DisableAgentHooks: true, NoProjectFiles: true, DisableRepoContext: true, MaxTurns: len(tr.Calls) + 1, Hooks: []agent.Hook{observe},
		BeforeTurn: func(context.Context, agent.TurnInfo) error {
			if calls++; calls > len(tr.Calls) {
				return errEndOfRecording
			}
			return nil
		},
	})
	if err != nil {
		return cliError(err)
	}
	defer ws.Close()
	a, err := ws.NewSession(ctx, strata.SessionOptions{})
	if err != nil {
		return err
	}
	defer a.Close()
	// The task, then every plain user message (format errors) after a reply
	// without a tool call, as mini-swe-agent sent them.
	prompts := []string{tr.Messages[0].Text()}
	for i := 1; i+1 < len(tr.Messages); i++ {
		if tr.Messages[i].Role == llm.RoleAssistant && len(tr.Messages[i].ToolUses()) == 0 {
			prompts = append(prompts, tr.Messages[i+1].Text())
		}
	}
	for _, p := range prompts {
		if len(rows) >= len(tr.Calls) {
			break
		}
		if _, err := a.Prompt(ctx, p); err != nil && !errors.Is(err, errEndOfRecording) {
			return fmt.Errorf("replay %s at turn %d: %w", file, len(rows), err)
		}
	}
	if simErr != nil {
		return simErr
	}
	return printReplay(w, format, tr, layoutName, provider, price.ID, rows)
}

var errEndOfRecording = errors.New("end of the recording")

func printReplay(w io.Writer, format string, tr *trajectory.Trajectory, layout, provider, model string, rows []turnRow) error {
	var sum turnRow
	for _, r := range rows {
		sum.Prompt += r.Prompt
		sum.Input += r.Input
		sum.CacheRead += r.CacheRead
		sum.CacheWrite += r.CacheWrite
		sum.Output += r.Output
		sum.CostUSD += r.CostUSD
		sum.Observed += r.Observed
	}
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"trajectory": tr.InstanceID, "layout": layout, "provider": provider, "model": model,
			"turns": rows, "total": sum})
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "turn\tprompt\tinput\tcache read\tcache write\toutput\tcost USD\tobserved cached\t\n")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%.4f\t%d\t\n", r.Turn, r.Prompt, r.Input, r.CacheRead, r.CacheWrite, r.Output, r.CostUSD, r.Observed)
	}
	fmt.Fprintf(tw, "total\t%d\t%d\t%d\t%d\t%d\t%.4f\t%d\t\n", sum.Prompt, sum.Input, sum.CacheRead, sum.CacheWrite, sum.Output, sum.CostUSD, sum.Observed)
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%s · %d turns · layout %s · %s cache rules · priced as %s · observed = the recording's own cached tokens (%s)\n",
		tr.InstanceID, len(rows), layout, provider, model, tr.Model)
	return err
}

// recordedBash is execute_bash answering from the recording: the n-th call
// gets the observation recorded for the trajectory's n-th tool call (the loop
// runs them in order, one per reply).
type recordedBash struct {
	results []llm.Block
	next    int
}

func newRecordedBash(t *trajectory.Trajectory) *recordedBash {
	r := &recordedBash{}
	for _, m := range t.Messages {
		for _, b := range m.Content {
			if b.Type == llm.BlockToolResult {
				r.results = append(r.results, b)
			}
		}
	}
	return r
}

func (*recordedBash) Spec() llm.ToolSpec { return (&tool.ExecuteBash{}).Spec() }

func (r *recordedBash) Run(context.Context, *tool.Env, json.RawMessage) (tool.Result, error) {
	if r.next >= len(r.results) {
		return tool.Result{}, fmt.Errorf("the recording has only %d tool calls", len(r.results))
	}
	b := r.results[r.next]
	r.next++
	return tool.Result{Content: b.Content, IsError: b.IsError}, nil
}
