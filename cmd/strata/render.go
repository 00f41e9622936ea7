package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/token"
)

type renderFlags struct {
	provider, model, layout, format, agentFile string
	session, db, now, tokens                   string
	explain, live, trust                       bool
	knobs                                      knobFlags
	context                                    contextFlags
	maxTokens                                  int64
	dir                                        string // project root ("" = working directory); set by tests
}

func newRenderCmd() *cobra.Command {
	var f renderFlags
	cmd := &cobra.Command{
		Use:   "render [flags] PROMPT... | -",
		Short: "Print the exact request body the provider SDK would send for a prompt (nothing is sent)",
		Long: `Assemble the request for PROMPT with a layout and print the exact JSON body the
provider's official SDK would send, captured at the HTTP layer by a transport that
records and never sends. No API key is needed. Standard output is the JSON body
only; the request line (method and path: Bedrock and Gemini carry the model in
it) and the model go to standard error. The prompt is read from standard input
as for 'strata run' ('-', or no arguments and a pipe).

--explain prints a table of the layout's layers with token counts and cache breakpoints
instead (--format json for the same as JSON).`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := promptArg(cmd, args, os.Stdin)
			if err != nil {
				return err
			}
			return renderMain(cmd.Context(), os.Stdout, f, text)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.provider, "provider", "anthropic", providerHelp())
	fl.StringVar(&f.model, "model", "", "model id (default: the provider's default)")
	fl.StringVar(&f.layout, "layout", strata.DefaultLayout, layoutHelp())
	fl.StringVar(&f.agentFile, "agent", "", agentHelp)
	fl.BoolVar(&f.explain, "explain", false, "print the layers, their token counts and cache breakpoints instead of the body")
	fl.StringVar(&f.format, "format", "table", "with --explain: table or json")
	fl.Int64Var(&f.maxTokens, "max-tokens", 0, "output cap in tokens (0 = provider default)")
	fl.StringVar(&f.session, "session", "", "continue this stored session: its latest loop's history comes before PROMPT")
	addStoreFlags(fl, &f.db)
	fl.StringVar(&f.now, "now", "", "request time as RFC 3339 (default: the current time); fixes the timestamps panels prints")
	fl.BoolVar(&f.live, "live", false, "start the agent as a run would: launch its MCP servers (their tools join the request) and run its agentSpawn hooks")
	fl.BoolVar(&f.trust, "trust", false, "with --live: "+trustHelp)
	f.knobs.add(fl)
	f.context.add(fl)
	fl.StringVar(&f.tokens, "tokens", "exact", "with --explain: exact (BPE: o200k_base for OpenAI models; cl100k_base, an approximation, for Claude; "+
		"o200k_base as an estimate for other models, whose tokenizers are not bundled), estimate (≈4 bytes/token), "+
		"or api (exact layers as above, and the total from the provider's count-tokens endpoint: Anthropic, Gemini, Bedrock; needs the API key or AWS credentials; one request, no message sent)")
	return cmd
}

func renderMain(ctx context.Context, w io.Writer, f renderFlags, text string) error {
	if f.format != "table" && f.format != "json" {
		return usagef("unknown --format %q (valid: table, json)", f.format)
	}
	if f.tokens != "exact" && f.tokens != "estimate" && f.tokens != "api" {
		return usagef("unknown --tokens %q (valid: exact, estimate, api)", f.tokens)
	}
	if !f.explain && (f.format != "table" || f.tokens != "exact") {
		// Without --explain the output is the request body, JSON already;
		// the two flags shape the layer table only.
		return usagef("--format and --tokens apply to --explain: add --explain (without it render prints the request body, which is JSON)")
	}
	var now time.Time
	if f.now != "" {
		var err error
		if now, err = time.Parse(time.RFC3339, f.now); err != nil {
			return usagef("--now %q: want RFC 3339, e.g. 2026-11-23T10:00:00Z", f.now)
		}
	}
	params, err := f.knobs.params(f.maxTokens)
	if err != nil {
		return err
	}
	o := strata.Options{Dir: f.dir, Agent: f.agentFile, ProviderName: f.provider, Model: f.model, Layout: f.layout, Params: params,
		DisableMCP: !f.live, DisableAgentHooks: !f.live, Warn: warn, MCPStderr: logs.mcpStderr(), Trust: cliTrust(f.trust)}
	f.context.apply(&o)
	if f.session != "" {
		st, err := openStore(f.db)
		if err != nil {
			return err
		}
		defer st.Close()
		o.Store = st
	}
	ws, err := strata.Open(ctx, o)
	if err != nil {
		return cliError(err)
	}
	defer ws.Close()
	var api apiCounter
	if f.explain && f.tokens == "api" {
		if api, err = newAPICounter(ws.ProviderName()); err != nil {
			return err
		}
	}
	ro := strata.RenderOptions{Session: f.session, Prompt: text, Now: now}
	if f.explain && f.tokens != "estimate" {
		ro.Counter = token.ForModel(ws.Model()) // the layers; --tokens api adds the provider's total
	}
	r, err := ws.Render(ctx, ro)
	if err != nil {
		return cliError(err)
	}
	if f.explain {
		var pc *providerCount
		if api.endpoint != "" {
			if pc, err = api.count(ctx, ws.ProviderName(), ws.Model(), r.Body); err != nil {
				return err
			}
		}
		if err := printBreakdown(w, r.Breakdown, pc, f.format, r.API); err != nil {
			return err
		}
		if f.tokens != "api" && f.format == "table" {
			offerAPICount(w, ws.ProviderName())
		}
		return nil
	}
	fmt.Fprintf(os.Stderr, "strata: render: %s %s · provider %s · model %s · not sent\n", r.Method, requestPath(r.URL), ws.ProviderName(), ws.Model())
	_, err = fmt.Fprintf(w, "%s\n", r.Body)
	return err
}

// requestPath returns the path and query of a captured request's URL (the
// capture's host is a loopback placeholder, not the provider's endpoint).
func requestPath(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.RequestURI()
}

// printBreakdown writes the layers as a table or JSON, with the provider's
// own count (pc, nil when not asked for) as the last line or as the JSON
// field provider_count.
func printBreakdown(w io.Writer, bd *prompt.Breakdown, pc *providerCount, format string, api llm.API) error {
	sent := api.TakesBreakpoints()
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(struct {
			*prompt.Breakdown
			ProviderCount   *providerCount `json:"provider_count,omitempty"`
			BreakpointsSent bool           `json:"breakpoints_sent"`
		}{bd, pc, sent})
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "#\tLAYER\tROLE\tTOKENS\tCACHE\tSTARTS WITH\n")
	for i, s := range bd.Spans {
		mark := ""
		if s.Break {
			mark = "◆ breakpoint"
			if !sent {
				mark = "◇ (not sent)"
			}
		}
		if c := s.Cache; c != nil { // the layout's own per-panel tracking (panels)
			state := "miss"
			if c.Hit {
				state = "hit"
			}
			mark = strings.TrimSpace(fmt.Sprintf("%s %s $%.6f (loop $%.6f)", mark, state, c.Cost, c.Total))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\n", i+1, s.Name, s.Role, s.Tokens, mark, s.Preview)
	}
	bps := fmt.Sprintf("%d breakpoint(s)", bd.Breakpoints)
	if !sent && bd.Breakpoints > 0 {
		bps = fmt.Sprintf("%d breakpoint(s), not sent: %s caches prefixes automatically", bd.Breakpoints, api)
	}
	fmt.Fprintf(tw, "\tTOTAL\t\t%d\t%s\t\n", bd.TotalTokens, bps)
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "layout %s · tokens counted by %s\n", bd.Layout, bd.Counter); err != nil {
		return err
	}
	if pc != nil {
		_, err := fmt.Fprintf(w, "%s: %d input tokens in all (the provider's exact count for %s)\n", pc.Endpoint, pc.InputTokens, pc.Model)
		return err
	}
	return nil
}
