package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/internal/benchcache"
	_ "github.com/strata-agent/strata/prompt/cachefit" // register the cachefit layout
	_ "github.com/strata-agent/strata/prompt/peers"    // register the peers' layouts
)

func init() { register(newBenchCmd) }

func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure layouts ('bench cache' prices them, 'bench assemble' times them, on recorded trajectories) and throughput on Temporal ('bench temporal')",
	}
	var o benchCacheOptions
	cache := &cobra.Command{
		Use:   "cache --trajectories DIR",
		Short: "Price every layout, the oracle and the observed usage on recorded trajectories",
		Long: `Turn every *.traj.json in DIR into a session, assemble every call with each
layout, run the provider's prompt-cache simulator over the requests and price them.

Scenarios: append (the history as recorded); managed (files the agent read become
working-file context items, refreshed when it edits them); paced (append with a
person's idle gaps: a pause of --pause-length after every --pause-every calls, or at
random at that mean rate with --pause-seed); parallel (append with --parallel
consecutive tool calls merged into one response). --agent FILE adds a real kiro agent's
static context (prompt, tools, resources, steering, skills) to every call; --mcp-tools FILE
adds its MCP servers' tools from a recorded tools/list answer (strata mcp list --record). "all" runs
every scenario (or provider) in one go. See the README for the rules.

The oracle is the lowest cost any layout's requests allow under the simulator's rules
(TTL, minimum, granularity): each layout is reported as a multiple of it. Observed is
what the recording's provider reported.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return benchCache(os.Stdout, os.Stderr, o)
		},
	}
	fl := cache.Flags()
	fl.StringVar(&o.dir, "trajectories", "", "directory of *.traj.json files (required)")
	fl.StringVar(&o.provider, "provider", "anthropic", "cache simulator: "+simProviderNames+", or all (anthropic, bedrock, openai, gemini)")
	fl.StringVar(&o.model, "model", "", "price-table model, any id of cachesim/prices.json (default per provider, e.g. claude-sonnet-4-5)")
	fl.StringVar(&o.scenario, "scenario", "managed", "append, managed, paced, parallel, or all")
	fl.StringSliceVar(&o.layouts, "layouts", []string{"all"}, "layouts to price (all = every registered layout: seeds, peers, cachefit)")
	fl.StringVar(&o.format, "format", "table", "table or json")
	fl.StringVar(&o.report, "report", "", "also write an HTML report with charts to this file")
	fl.StringVar(&o.agent, "agent", "", "kiro agent file whose static context every call carries")
	fl.StringVar(&o.mcpTools, "mcp-tools", "", "with --agent: recorded tools/list answers of its MCP servers (strata mcp list --agent FILE --record OUT) whose allowed tools every call carries")
	fl.IntVar(&o.pauseEvery, "pause-every", benchcache.DefaultPauseEvery, "paced: calls between pauses (mean, with --pause-seed); 0 = no pauses")
	fl.DurationVar(&o.pauseLength, "pause-length", benchcache.DefaultPauseLength, "paced: idle time added per pause")
	fl.Uint64Var(&o.pauseSeed, "pause-seed", 0, "paced: 0 = a pause after every --pause-every calls; else seeded random pauses at that mean rate")
	fl.IntVar(&o.parallel, "parallel", benchcache.DefaultParallel, "parallel: tool calls merged into one response (≥ 2)")
	fl.Int64Var(&o.readStep, "read-step", 0, "openai/gemini/deepseek: round cache reads down to steps of this many tokens instead of the price table's (1 = no rounding; 0 = the table's)")
	cmd.AddCommand(cache, newBenchAssembleCmd(), newBenchTemporalCmd())
	return cmd
}

func newBenchAssembleCmd() *cobra.Command {
	var dir, scenario, format string
	var layouts []string
	var rounds int
	c := &cobra.Command{
		Use:   "assemble --trajectories DIR",
		Short: "Time each layout's assembly and encoding of every request, as a ratio to json.Marshal of the same body",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if rounds < 1 {
				return usagef("--rounds %d: want at least 1", rounds)
			}
			if err := checkBenchFlags(dir, format); err != nil {
				return err
			}
			sc, err := benchcache.ParseScenario(scenario)
			if err != nil {
				return usageError{fmt.Errorf("--scenario: %w", err)}
			}
			sessions, err := loadBenchSessions(dir, sc, benchcache.Derivation{})
			if err != nil {
				return err
			}
			res, err := benchcache.TimeAssemble(sessions, layouts, rounds, progressBar(os.Stderr, "timing", nil))
			if err != nil {
				return err
			}
			if format == "json" {
				enc := json.NewEncoder(os.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(res)
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "layout\trequests\tMB encoded\tms / request\t× json.Marshal\t")
			for _, r := range res {
				fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.3f\t%.2f\t\n", r.Layout, r.Requests, float64(r.BodyBytes)/1e6, r.PerReqMS, r.Ratio)
			}
			tw.Flush()
			fmt.Printf("%d trajectories · scenario %s · %d round(s) · Anthropic encoding · baseline: json.Marshal of each final body, same loop\n", len(sessions), sc, rounds)
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVar(&dir, "trajectories", "", "directory of *.traj.json files (required)")
	fl.StringVar(&scenario, "scenario", "managed", "append, managed, paced or parallel")
	fl.StringSliceVar(&layouts, "layouts", []string{"flat", "kiro", "panels", "tiered", "cachefit"}, "layouts to time")
	fl.IntVar(&rounds, "rounds", 1, "times to repeat the whole run")
	fl.StringVar(&format, "format", "table", "table or json")
	return c
}

// checkBenchFlags checks the flags the bench commands share
// (--trajectories, --format table|json).
func checkBenchFlags(dir, format string) error {
	if dir == "" {
		return usagef("--trajectories DIR is required (e.g. ../shared/data/trajectories/mini-swe-agent/train)")
	}
	if format != "table" && format != "json" {
		return usagef("unknown --format %q (valid: table, json)", format)
	}
	return nil
}

// loadBenchSessions derives the sessions of dir in scenario sc; a file that
// is not a valid trajectory is skipped with a warning.
func loadBenchSessions(dir string, sc benchcache.Scenario, d benchcache.Derivation) ([]*benchcache.Session, error) {
	sessions, err := benchcache.LoadDirWith(dir, sc, d, func(err error) {
		warn(fmt.Sprintf("%v; skipped", err))
	})
	if err != nil {
		return nil, usageError{fmt.Errorf("--trajectories: %w", err)}
	}
	return sessions, nil
}

// benchCacheOptions are the flags of `bench cache`.
type benchCacheOptions struct {
	dir, provider, model, scenario, format, report, agent, mcpTools string
	layouts                                                         []string
	pauseEvery, parallel                                            int
	pauseLength                                                     time.Duration
	pauseSeed                                                       uint64
	readStep                                                        int64
}

// benchProviders are the simulators `--provider all` runs.
var benchProviders = []string{"anthropic", "bedrock", "openai", "gemini"}

// plan turns the flags into the scenarios, providers, layouts and
// derivation to run, or a usage error naming the flag.
func (o benchCacheOptions) plan() ([]benchcache.Scenario, []string, []string, benchcache.Derivation, error) {
	var d benchcache.Derivation
	if err := checkBenchFlags(o.dir, o.format); err != nil {
		return nil, nil, nil, d, err
	}
	scenarios := benchcache.Scenarios
	if o.scenario != "all" {
		sc, err := benchcache.ParseScenario(o.scenario)
		if err != nil {
			return nil, nil, nil, d, usagef("unknown --scenario %q (valid: append, managed, paced, parallel, or all)", o.scenario)
		}
		scenarios = []benchcache.Scenario{sc}
	}
	providers := benchProviders
	if o.provider != "all" {
		p, err := simProvider(o.provider)
		if err != nil {
			return nil, nil, nil, d, usagef("unknown --provider %q (valid: %s, or all)", o.provider, simProviderNames)
		}
		providers = []string{p}
	}
	if o.model != "" && len(providers) > 1 {
		return nil, nil, nil, d, usagef("--model %q with --provider all: one model cannot be priced under every provider; pick a provider", o.model)
	}
	if err := checkPricedModel(o.model); err != nil {
		return nil, nil, nil, d, err
	}
	layouts := o.layouts
	if len(layouts) == 1 && layouts[0] == "all" {
		layouts = benchcache.AllLayouts()
	}
	switch {
	case o.pauseEvery < 0:
		return nil, nil, nil, d, usagef("--pause-every %d: want ≥ 0 (0 = no pauses)", o.pauseEvery)
	case o.pauseLength < 0:
		return nil, nil, nil, d, usagef("--pause-length %s: want ≥ 0", o.pauseLength)
	case o.parallel < 2:
		return nil, nil, nil, d, usagef("--parallel %d: want ≥ 2", o.parallel)
	case o.readStep < 0:
		return nil, nil, nil, d, usagef("--read-step %d: want ≥ 1 (or 0 = the price table's)", o.readStep)
	}
	d.Pacing = benchcache.Pacing{Every: o.pauseEvery, Length: o.pauseLength, Seed: o.pauseSeed}
	if o.pauseEvery == 0 {
		d.Pacing.Every = -1
	}
	d.Parallel = o.parallel
	if o.mcpTools != "" && o.agent == "" {
		return nil, nil, nil, d, usagef("--mcp-tools needs --agent FILE (the agent whose MCP servers were recorded)")
	}
	if o.agent != "" {
		s, err := benchcache.LoadStaticWith(o.agent, benchcache.StaticOptions{MCPTools: o.mcpTools})
		if err != nil {
			return nil, nil, nil, d, usageError{err}
		}
		d.Static = s
	}
	return scenarios, providers, layouts, d, nil
}

func benchCache(stdout, stderr io.Writer, o benchCacheOptions) error {
	scenarios, providers, layouts, d, err := o.plan()
	if err != nil {
		return err
	}
	if o.report != "" {
		if err := checkWritable(o.report); err != nil {
			return usageError{fmt.Errorf("--report %s: %w", o.report, err)}
		}
	}
	var reps []*benchcache.Report
	overall := &benchProgress{start: time.Now(), steps: len(scenarios) * len(providers)}
	for _, sc := range scenarios {
		sessions, err := loadBenchSessions(o.dir, sc, d)
		if err != nil {
			return err
		}
		for _, provider := range providers {
			t0 := time.Now()
			rep, err := benchcache.Run(sessions, sc, benchcache.Options{Provider: provider, Model: o.model, Layouts: layouts,
				Derivation: d, ReadStep: o.readStep, Progress: progressBar(stderr, fmt.Sprintf("[%d/%d] pricing %s/%s", overall.step+1, overall.steps, sc, provider), overall)})
			overall.step++
			if err != nil {
				if strings.Contains(err.Error(), "unknown provider") || strings.Contains(err.Error(), "no price") || strings.Contains(err.Error(), "layout") && !strings.Contains(err.Error(), "call") {
					return usageError{err}
				}
				return err
			}
			fmt.Fprintf(stderr, "priced %d trajectories × %d layouts in %.1fs\n", rep.Trajectories, len(layouts), time.Since(t0).Seconds())
			reps = append(reps, rep)
		}
	}
	if o.report != "" {
		f, err := os.Create(o.report)
		if err != nil {
			return usageError{fmt.Errorf("--report: %w", err)}
		}
		if err := benchcache.WriteHTML(f, reps...); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "report written to %s\n", o.report)
	}
	if o.format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if len(reps) == 1 {
			return enc.Encode(reps[0])
		}
		return enc.Encode(reps)
	}
	for i, rep := range reps {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		if err := writeBenchTable(stdout, rep); err != nil {
			return err
		}
	}
	return nil
}

// writeBenchTable prints one report as a table, rows grouped (seeds, peers,
// strata, oracle), then a line saying what was priced.
func writeBenchTable(stdout io.Writer, rep *benchcache.Report) error {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "group\tlayout\tcost USD\t× oracle\thit ratio\tprompt/call\tinput\tcache read\tcache write\toutput\t\n")
	row := func(group, name string, t benchcache.Totals, ratio string) {
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%s\t%.3f\t%.0f\t%d\t%d\t%d\t%d\t\n", group, name, t.CostUSD, ratio, t.HitRatio, t.PromptPerCall, t.Input, t.CacheRead, t.CacheWrite, t.Output)
	}
	for _, g := range rep.GroupedRatios() {
		for i, r := range g.Ratios {
			group := ""
			if i == 0 {
				group = g.Group
			}
			row(group, r.Layout, rep.Layouts[r.Layout], fmt.Sprintf("%.3f", r.Ratio))
		}
	}
	row(benchcache.GroupOracle, "oracle", rep.Oracle, "1.000")
	if rep.Observed != nil {
		row("", "observed ("+rep.Observed.Model+")", rep.Observed.Totals, "")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(stdout, "%d trajectories · %s · %s cache rules · priced as %s\n", rep.Trajectories, rep.Describe(), rep.Provider, rep.Model); err != nil {
		return err
	}
	var pings []string
	for _, l := range rep.Order {
		if n := rep.Layouts[l].Pings; n > 0 {
			pings = append(pings, fmt.Sprintf("%s %d", l, n))
		}
	}
	if len(pings) == 0 {
		return nil
	}
	_, err := fmt.Fprintf(stdout, "keep-alive pings while idle (in the costs above; the last request re-sent with a one-token answer): %s\n", strings.Join(pings, ", "))
	return err
}

// simProviderNames are the --provider values of bench and replay.
const simProviderNames = "anthropic, bedrock, openai (also openai-chat, openai-responses), gemini, deepseek"

// simProvider maps the --provider of bench and replay to its cache-simulator
// and price family (benchcache.DefaultModels): the family names, and the
// names run and render use for the same provider (openai-chat and
// openai-responses are the openai family). Other names are a usage error
// listing the valid ones.
func simProvider(name string) (string, error) {
	if name == "openai-chat" || name == "openai-responses" {
		name = "openai"
	}
	if _, ok := benchcache.DefaultModels[name]; !ok {
		return "", usagef("unknown --provider %q (valid: %s)", name, simProviderNames)
	}
	return name, nil
}

// checkPricedModel returns a usage error listing the price table's model
// ids when model ("" = the provider's default) has no price.
func checkPricedModel(model string) error {
	if model == "" {
		return nil
	}
	if _, ok := cachesim.Lookup(model); ok {
		return nil
	}
	var ids []string
	if t, err := cachesim.Default(); err == nil {
		for _, p := range t.Models {
			ids = append(ids, p.ID)
		}
	}
	return usagef("--model %q has no price in cachesim/prices.json (valid: %s; dated, dotted and Bedrock ids of these work too)",
		model, strings.Join(ids, ", "))
}

// checkWritable reports whether a file can be created at path, without
// creating or changing it: its directory must exist and take a new file,
// and path must not be a directory.
func checkWritable(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return errors.New("is a directory")
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("its folder %s does not exist: create it first", dir)
	}
	f, err := os.CreateTemp(dir, ".strata-write-check-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the probe's own name means nothing to the user
		}
		return fmt.Errorf("cannot create a file in %s: %w", dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// benchProgress is a bench run's position over all its steps (scenario ×
// provider): the share done and an estimate of the time left, from the
// time taken so far (the steps price the same trajectories, so they take
// about as long as each other).
type benchProgress struct {
	start       time.Time
	step, steps int // steps done, steps in all
}

// overall returns the run's progress when the current step has done of
// total trajectories: " · overall 37% · ~2m10s left" ("" for nil).
func (b *benchProgress) overall(done, total int) string {
	if b == nil || b.steps == 0 || total == 0 {
		return ""
	}
	f := (float64(b.step) + float64(done)/float64(total)) / float64(b.steps)
	left := "…"
	if f > 0 {
		left = "~" + (time.Duration(float64(time.Since(b.start)) / f * (1 - f))).Round(time.Second).String()
	}
	return fmt.Sprintf(" · overall %d%% · %s left", int(f*100), left)
}

// progressBar returns a progress callback drawing a bar on w when w is a
// terminal, and printing a line every 10% otherwise; with a benchProgress
// each line also gives the run's overall position and time left.
func progressBar(w io.Writer, label string, all *benchProgress) func(done, total int) {
	tty := false
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	last := -1
	return func(done, total int) {
		pct := 100 * done / total
		if tty {
			n := 30 * done / total
			fmt.Fprintf(w, "\r%s [%s%s] %d/%d%s\x1b[K", label, strings.Repeat("█", n), strings.Repeat("·", 30-n), done, total, all.overall(done, total))
			if done == total {
				fmt.Fprintln(w)
			}
			return
		}
		if pct/10 != last/10 || done == total {
			last = pct
			fmt.Fprintf(w, "%s: %d/%d (%d%%)%s\n", label, done, total, pct, all.overall(done, total))
		}
	}
}
