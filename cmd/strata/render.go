package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/strata-agent/strata/internal/capture"
	"github.com/strata-agent/strata/internal/providers"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/tool"
)

type renderFlags struct {
	provider, model, layout, format, agentFile string
	explain                                    bool
	maxTokens                                  int64
}

func newRenderCmd() *cobra.Command {
	var f renderFlags
	cmd := &cobra.Command{
		Use:   "render [flags] PROMPT...",
		Short: "Print the exact request body the provider SDK would send for a prompt (nothing is sent)",
		Long: `Assemble the request for PROMPT with a layout and print the exact JSON body the
provider's official SDK would send, captured at the HTTP layer by a transport that
records and never sends. No API key is needed.

--explain prints a table of the layout's layers with token counts and cache breakpoints
instead (--format json for the same as JSON).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return renderMain(cmd.Context(), os.Stdout, f, strings.Join(args, " "))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.provider, "provider", "anthropic", "provider wire format: "+strings.Join(providers.Names(), ", "))
	fl.StringVar(&f.model, "model", "", "model id (default: the provider's default)")
	fl.StringVar(&f.layout, "layout", "flat", "request layout: "+strings.Join(prompt.Names(), ", "))
	fl.StringVar(&f.agentFile, "agent", "", "kiro / Amazon Q agent file (JSON)")
	fl.BoolVar(&f.explain, "explain", false, "print the layers, their token counts and cache breakpoints instead of the body")
	fl.StringVar(&f.format, "format", "table", "with --explain: table or json")
	fl.Int64Var(&f.maxTokens, "max-tokens", 0, "output cap in tokens (0 = provider default)")
	return cmd
}

func renderMain(ctx context.Context, w io.Writer, f renderFlags, text string) error {
	spec, err := providers.Lookup(f.provider)
	if err != nil {
		return usageError{fmt.Errorf("--provider: %w", err)}
	}
	layout, err := prompt.Lookup(f.layout)
	if err != nil {
		return usageError{fmt.Errorf("--layout: %w", err)}
	}
	if f.format != "table" && f.format != "json" {
		return usagef("unknown --format %q (valid: table, json)", f.format)
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	tmpl, tools, agentModel, err := loadAgent(f.agentFile, wd)
	if err != nil {
		return err
	}
	pc := &tmpl
	pc.Model, pc.MaxTokens = f.model, f.maxTokens
	pc.History = []llm.Message{llm.UserText(text)}
	pc.Tools = tool.NewRegistry(tools...).Specs()
	if pc.Model == "" {
		pc.Model = agentModel
	}
	if pc.Model == "" {
		pc.Model = spec.Model
	}
	if pc.Model == "" {
		return usagef("provider %s has no default model: pass --model", spec.Name)
	}
	req, bd, err := layout.Assemble(pc)
	if err != nil {
		return err
	}
	if f.explain {
		bd.Breakpoints = len(req.Breakpoints)
		return printBreakdown(w, bd, f.format)
	}
	body, err := captureBody(ctx, spec, req)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", body)
	return err
}

// captureBody sends req through the real provider SDK over a recording
// transport and returns the body it would have sent.
func captureBody(ctx context.Context, spec providers.Spec, req *llm.Request) ([]byte, error) {
	tr := &capture.Transport{}
	p, err := providers.New(spec, providers.Options{APIKey: "render-not-sent", BaseURL: "http://127.0.0.1:1", HTTPClient: tr.Client()})
	if err != nil {
		return nil, usageError{err}
	}
	_, err = p.Stream(ctx, req, nil)
	reqs := tr.Requests()
	if len(reqs) == 0 {
		if err == nil {
			err = errors.New("the SDK sent no request")
		}
		return nil, fmt.Errorf("render: %w", err)
	}
	return reqs[len(reqs)-1].Body, nil
}

func printBreakdown(w io.Writer, bd *prompt.Breakdown, format string) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(bd)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "#\tLAYER\tROLE\tTOKENS\tCACHE\tSTARTS WITH\n")
	for i, s := range bd.Spans {
		mark := ""
		if s.Break {
			mark = "◆ breakpoint"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\n", i+1, s.Name, s.Role, s.Tokens, mark, s.Preview)
	}
	fmt.Fprintf(tw, "\tTOTAL\t\t%d\t%d breakpoint(s)\t\n", bd.TotalTokens, bd.Breakpoints)
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "layout %s · tokens counted by %s\n", bd.Layout, bd.Counter)
	return err
}
