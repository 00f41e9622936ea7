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
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/internal/capture"
	"github.com/strata-agent/strata/internal/providers"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/token"
	"github.com/strata-agent/strata/tool"
)

type renderFlags struct {
	provider, model, layout, format, agentFile string
	session, db, now, tokens                   string
	explain, live                              bool
	maxTokens                                  int64
	dir                                        string // project root ("" = working directory); set by tests
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
	fl.StringVar(&f.session, "session", "", "continue this stored session: its latest loop's history comes before PROMPT")
	fl.StringVar(&f.db, "db", "", "session database (default: $STRATA_DATA_DIR/strata.db, $XDG_DATA_HOME/strata/strata.db)")
	fl.StringVar(&f.now, "now", "", "request time as RFC 3339 (default: the current time); fixes the timestamps panels prints")
	fl.BoolVar(&f.live, "live", false, "start the agent as a run would: launch its MCP servers (their tools join the request) and run its agentSpawn hooks")
	fl.StringVar(&f.tokens, "tokens", "exact", "with --explain: exact (BPE: o200k for OpenAI, cl100k approximation for Claude) or estimate")
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
	if f.tokens != "exact" && f.tokens != "estimate" {
		return usagef("unknown --tokens %q (valid: exact, estimate)", f.tokens)
	}
	now := time.Now()
	if f.now != "" {
		if now, err = time.Parse(time.RFC3339, f.now); err != nil {
			return usagef("--now %q: want RFC 3339, e.g. 2026-11-23T10:00:00Z", f.now)
		}
	}
	root := f.dir
	if root == "" {
		if root, err = os.Getwd(); err != nil {
			return err
		}
	}
	ld, err := loadAgent(f.agentFile, root)
	if err != nil {
		return err
	}
	if f.live {
		defer ld.activate(ctx, root)()
	}
	tools, agentModel := append(ld.tools, ld.subAgent(agent.Config{})...), ld.model // the tools run offers
	pc := &ld.context
	pc.Model, pc.MaxTokens, pc.API, pc.Now = f.model, f.maxTokens, spec.API, now.UnixMilli()
	if pc.History, err = sessionHistory(ctx, f.db, f.session); err != nil {
		return err
	}
	pc.History = appendUserText(pc.History, text)
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
	if f.explain && f.tokens == "exact" {
		pc.Counter = token.ForModel(pc.Model)
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

// sessionHistory returns the history of the stored session id's latest loop
// ("" = none) from the database at db ("" = session.DefaultPath()).
func sessionHistory(ctx context.Context, db, id string) ([]llm.Message, error) {
	if id == "" {
		return nil, nil
	}
	st, err := openStore(db)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	loop, err := st.LatestLoop(ctx, id)
	if err != nil {
		return nil, usagef("--session %q: %v (see 'strata sessions list')", id, err)
	}
	return st.History(ctx, loop)
}

// openStore opens the session database at path ("" = session.DefaultPath()).
func openStore(path string) (*session.SQLite, error) {
	if path == "" {
		p, err := session.DefaultPath()
		if err != nil {
			return nil, usagef("no session database: %v (pass --db or set STRATA_DATA_DIR)", err)
		}
		path = p
	}
	return session.Open(path)
}

// appendUserText adds text as the next user message, merged into a trailing
// user message (tool results) so roles keep alternating, as the loop does.
func appendUserText(h []llm.Message, text string) []llm.Message {
	if n := len(h); n > 0 && h[n-1].Role == llm.RoleUser {
		last := h[n-1]
		last.Content = append(append([]llm.Block(nil), last.Content...), llm.TextBlock(text))
		return append(h[:n-1:n-1], last)
	}
	return append(h, llm.UserText(text))
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
