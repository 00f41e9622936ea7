package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
		Short: "Measure layouts: 'bench cache' prices them, 'bench assemble' times them, on recorded trajectories",
	}
	var dir, provider, model, scenario, format, report string
	var layouts []string
	cache := &cobra.Command{
		Use:   "cache --trajectories DIR",
		Short: "Price every layout, the oracle and the observed usage on recorded trajectories",
		Long: `Turn every *.traj.json in DIR into a session (scenario append: the history as
recorded; managed: files the agent read become working-file context items, refreshed
when it edits them — see the README for the rules), assemble every call with each
layout, run the provider's prompt-cache simulator over the requests and price them.

The oracle is the lowest cost any layout's requests allow (every repeated block read
from the cache): each layout is reported as a multiple of it. Observed is what the
recording's provider reported.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return benchCache(os.Stdout, os.Stderr, dir, provider, model, scenario, format, report, layouts)
		},
	}
	fl := cache.Flags()
	fl.StringVar(&dir, "trajectories", "", "directory of *.traj.json files (required)")
	fl.StringVar(&provider, "provider", "anthropic", "cache simulator: "+simProviderNames)
	fl.StringVar(&model, "model", "", "price-table model, any id of cachesim/prices.json (default per provider, e.g. claude-sonnet-4-5)")
	fl.StringVar(&scenario, "scenario", "managed", "append or managed")
	fl.StringSliceVar(&layouts, "layouts", []string{"flat", "kiro", "panels", "tiered", "cachefit"}, "layouts to price")
	fl.StringVar(&format, "format", "table", "table or json")
	fl.StringVar(&report, "report", "", "also write an HTML report with charts to this file")
	cmd.AddCommand(cache, newBenchAssembleCmd())
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
			sessions, sc, err := loadBenchSessions(dir, scenario, format)
			if err != nil {
				return err
			}
			res, err := benchcache.TimeAssemble(sessions, layouts, rounds, progressBar(os.Stderr, "timing"))
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
	fl.StringVar(&scenario, "scenario", "managed", "append or managed")
	fl.StringSliceVar(&layouts, "layouts", []string{"flat", "kiro", "panels", "tiered", "cachefit"}, "layouts to time")
	fl.IntVar(&rounds, "rounds", 1, "times to repeat the whole run")
	fl.StringVar(&format, "format", "table", "table or json")
	return c
}

// loadBenchSessions checks the flags the bench commands share (--trajectories,
// --scenario, --format table|json) and derives the sessions.
func loadBenchSessions(dir, scenario, format string) ([]*benchcache.Session, benchcache.Scenario, error) {
	if dir == "" {
		return nil, "", usagef("--trajectories DIR is required (e.g. ../shared/data/trajectories/mini-swe-agent/train)")
	}
	if format != "table" && format != "json" {
		return nil, "", usagef("unknown --format %q (valid: table, json)", format)
	}
	sc := benchcache.Scenario(scenario)
	if sc != benchcache.Append && sc != benchcache.Managed {
		return nil, "", usagef("unknown --scenario %q (valid: append, managed)", scenario)
	}
	sessions, err := benchcache.LoadDirSkipping(dir, sc, func(err error) {
		warn(fmt.Sprintf("%v; skipped", err))
	})
	if err != nil {
		return nil, "", usageError{fmt.Errorf("--trajectories: %w", err)}
	}
	return sessions, sc, nil
}

func benchCache(stdout, stderr io.Writer, dir, provider, model, scenario, format, report string, layouts []string) error {
	provider, err := simProvider(provider)
	if err != nil {
		return err
	}
	if err := checkPricedModel(model); err != nil {
		return err
	}
	if report != "" {
		if err := checkWritable(report); err != nil {
			return usageError{fmt.Errorf("--report %s: %w", report, err)}
		}
	}
	sessions, sc, err := loadBenchSessions(dir, scenario, format)
	if err != nil {
		return err
	}
	t0 := time.Now()
	rep, err := benchcache.Run(sessions, sc, benchcache.Options{Provider: provider, Model: model, Layouts: layouts,
		Progress: progressBar(stderr, "pricing")})
	if err != nil {
		if strings.Contains(err.Error(), "unknown provider") || strings.Contains(err.Error(), "no price") || strings.Contains(err.Error(), "layout") && !strings.Contains(err.Error(), "call") {
			return usageError{err}
		}
		return err
	}
	fmt.Fprintf(stderr, "priced %d trajectories × %d layouts in %.1fs\n", rep.Trajectories, len(layouts), time.Since(t0).Seconds())
	if report != "" {
		f, err := os.Create(report)
		if err != nil {
			return usageError{fmt.Errorf("--report: %w", err)}
		}
		if err := benchcache.WriteHTML(f, rep); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "report written to %s\n", report)
	}
	if format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "layout\tcost USD\t× oracle\thit ratio\tinput\tcache read\tcache write\toutput\t\n")
	row := func(name string, t benchcache.Totals, ratio string) {
		fmt.Fprintf(tw, "%s\t%.2f\t%s\t%.3f\t%d\t%d\t%d\t%d\t\n", name, t.CostUSD, ratio, t.HitRatio, t.Input, t.CacheRead, t.CacheWrite, t.Output)
	}
	for _, r := range rep.Ratios() {
		row(r.Layout, rep.Layouts[r.Layout], fmt.Sprintf("%.3f", r.Ratio))
	}
	row("oracle", rep.Oracle, "1.000")
	if rep.Observed != nil {
		row("observed ("+rep.Observed.Model+")", rep.Observed.Totals, "")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%d trajectories · scenario %s · %s cache rules · priced as %s\n", rep.Trajectories, rep.Scenario, rep.Provider, rep.Model)
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
	f, err := os.CreateTemp(filepath.Dir(path), ".strata-write-check-*")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// progressBar returns a progress callback drawing a bar on w when w is a
// terminal, and printing a line every 10% otherwise.
func progressBar(w io.Writer, label string) func(done, total int) {
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
			fmt.Fprintf(w, "\r%s [%s%s] %d/%d", label, strings.Repeat("█", n), strings.Repeat("·", 30-n), done, total)
			if done == total {
				fmt.Fprintln(w)
			}
			return
		}
		if pct/10 != last/10 || done == total {
			last = pct
			fmt.Fprintf(w, "%s: %d/%d (%d%%)\n", label, done, total, pct)
		}
	}
}
