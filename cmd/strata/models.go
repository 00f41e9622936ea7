package main

import (
	"encoding/json"
	"fmt"
	"github.com/strata-agent/strata/internal/providers"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/strata-agent/strata/cachesim"
)

func init() { register(newModelsCmd) }

func newModelsCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the priced models: id, provider, context window, prices per MTok, kiro names",
		Long: `List the models of the price table (cachesim/prices.json): id, provider family,
context window (tokens; "-" where strata does not know it), and prices in USD per
million tokens (input, output, cache read, cache write with the 5-minute TTL).
The KIRO column names the kiro-cli model names that map to the model: an agent
whose "model" is one of them is sent the provider's id (Claude API id on
anthropic, a Bedrock inference-profile id on bedrock).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "table" && format != "json" {
				return usagef("unknown --format %q (valid: table, json)", format)
			}
			return listModels(cmd.OutOrStdout(), format)
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "table or json")
	return cmd
}

// modelJSON is one model as 'models --format json' prints it; prices in
// USD per million tokens, context windows in tokens (0 = unknown: strata
// knows the windows of the models kiro names).
type modelJSON struct {
	ID            string `json:"id"`
	Provider      string `json:"provider"`
	ContextWindow int64  `json:"context_window"`
	// MaxContextWindow is the largest window a kiro "-1m" name selects
	// (Anthropic's context-1m beta), else = ContextWindow.
	MaxContextWindow int64    `json:"max_context_window"`
	Input            float64  `json:"input"`
	Output           float64  `json:"output"`
	CacheRead        float64  `json:"cache_read"`
	CacheWrite5m     float64  `json:"cache_write_5m"`
	KiroNames        []string `json:"kiro_names,omitempty"`
	PriceSource      string   `json:"price_source"`
}

// listModels writes the price table's models as a table or JSON lines.
func listModels(w io.Writer, format string) error {
	t, err := cachesim.Default()
	if err != nil {
		return err
	}
	kiro := map[string][]string{}   // price row id → kiro names
	window := map[string][2]int64{} // price row id → smallest and largest context window of its kiro names
	for _, k := range providers.KiroModels() {
		p, ok := t.Lookup(k.Anthropic)
		if !ok {
			continue
		}
		kiro[p.ID] = append(kiro[p.ID], k.Name)
		w, seen := window[p.ID]
		if !seen || k.ContextWindow < w[0] {
			w[0] = k.ContextWindow
		}
		w[1] = max(w[1], k.ContextWindow)
		window[p.ID] = w
	}
	var rows []modelJSON
	for _, p := range t.Models {
		rows = append(rows, modelJSON{ID: p.ID, Provider: p.Provider, ContextWindow: window[p.ID][0], MaxContextWindow: window[p.ID][1],
			Input: p.Input, Output: p.Output, CacheRead: p.CacheRead, CacheWrite5m: p.CacheWrite5m,
			KiroNames: kiro[p.ID], PriceSource: p.PriceSource})
	}
	if format == "json" {
		enc := json.NewEncoder(w)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPROVIDER\tCONTEXT\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE 5m\tKIRO")
	for _, r := range rows {
		ctx := "-"
		if r.ContextWindow > 0 {
			ctx = fmt.Sprint(r.ContextWindow)
		}
		if r.MaxContextWindow > r.ContextWindow {
			ctx += fmt.Sprintf(" (%d with -1m)", r.MaxContextWindow)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t$%g\t$%g\t$%g\t$%g\t%s\n", r.ID, r.Provider, ctx, r.Input, r.Output, r.CacheRead, r.CacheWrite5m,
			strings.Join(r.KiroNames, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, "prices: USD per million tokens (cachesim/prices.json; each row names its source page)")
	return err
}
