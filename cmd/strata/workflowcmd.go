package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/workflow"
)

func init() { register(newWorkflowCmd) }

// newWorkflowCmd is 'strata workflow': validate, run and resume stage
// workflows (docs/workflows.md).
func newWorkflowCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workflow",
		Short: "Validate, run and resume stage workflows (docs/workflows.md)",
		Long: `A workflow is a YAML file of stages (workflow/schema.json, docs/workflows.md): each stage runs the
agent loop with its own system prompt (the stage's body), tools, turn cap and completion tool, and an
Assert (a shell command such as 'go test ./...', a model judge) decides ok, retry or fail.
The workflow's state is kept in the session database after every stage, so 'strata workflow resume
SESSION' goes on from the last completed stage after a crash.`,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "validate FILE",
		Short: "Check a workflow file against the format",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			d, err := workflow.Load(args[0])
			if err != nil {
				return usageError{err}
			}
			fmt.Fprintf(c.OutOrStdout(), "%s: workflow %s, %d top-level stage(s): ok\n", args[0], d.Name, len(d.Stages))
			return nil
		},
	})
	var f runFlags
	var t temporalFlags
	var inputs []string
	run := &cobra.Command{
		Use:   "run FILE [--input NAME=VALUE]...",
		Short: "Run a workflow in a new session",
		Long: `Run a stage workflow in a new session: in this process, recorded in the embedded
SQLite session database (the default), or with --temporal HOST:PORT on the workers of
that Temporal server ('strata worker'): the state machine in a parent workflow, each
stage execution a child workflow, a parallel group's stages concurrent children
(docs/durable.md, "Stage workflows"). Over Temporal each stage's loop runs in one
activity: a stage a lost worker cut off runs again from its start, its side effects
included; a call outside a stage's allowedTools is refused (no terminal to ask on);
the stages' events are not shown, the final state is.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			d, err := workflow.Load(args[0])
			if err != nil {
				return usageError{err}
			}
			in := map[string]string{}
			for _, kv := range inputs {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return usagef("--input %q: want NAME=VALUE", kv)
				}
				in[k] = v
			}
			if _, err := d.Resolve(in); err != nil {
				return usageError{err}
			}
			if t.on() {
				return remoteWorkflow(c.Context(), f, t, args[0], in)
			}
			return driveWorkflow(c.Context(), f, "", func(ctx context.Context, ws *strata.Workspace, s *strata.Session, o workflow.Options) (*workflow.State, error) {
				return workflow.Run(ctx, ws, s, d, in, o)
			})
		},
	}
	addRunFlags(run, &f)
	run.Flags().StringArrayVar(&inputs, "input", nil, "a workflow input NAME=VALUE (repeatable)")
	t.add(run.Flags())
	cmd.AddCommand(run)
	var rf runFlags
	resume := &cobra.Command{
		Use:   "resume SESSION",
		Short: "Go on with the workflow of a session from its last completed stage",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return driveWorkflow(c.Context(), rf, args[0], func(ctx context.Context, ws *strata.Workspace, s *strata.Session, o workflow.Options) (*workflow.State, error) {
				return workflow.Resume(ctx, ws, s, o)
			})
		},
	}
	addRunFlags(resume, &rf)
	cmd.AddCommand(resume)
	return cmd
}

// driveWorkflow opens the workspace and the session (new, or id), runs
// body with the printer and the terminal interactor, and reports.
func driveWorkflow(ctx context.Context, f runFlags, id string, body func(context.Context, *strata.Workspace, *strata.Session, workflow.Options) (*workflow.State, error)) error {
	if f.format != "text" && f.format != "json" {
		return usagef("unknown --format %q (valid: text, json)", f.format)
	}
	ws, err := openWorkspace(ctx, f, nil)
	if err != nil {
		return err
	}
	defer ws.Close()
	defer ws.Store().Close()
	var s *strata.Session
	if id == "" {
		s, err = ws.NewSession(ctx, strata.SessionOptions{})
	} else {
		s, err = ws.ResumeSession(ctx, id, strata.SessionOptions{})
	}
	if err != nil {
		return cliError(err)
	}
	fmt.Fprintf(os.Stderr, "strata: session %s\n", s.ID())
	p := &workflowPrinter{w: os.Stdout, json: f.format == "json"}
	o := workflow.Options{OnEvent: p.event, OnLoopEvent: p.loop}
	if isTerminal(os.Stdin) {
		o.Interactor = &termInteractor{in: bufio.NewReader(os.Stdin)}
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	st, runErr := body(ctx, ws, s, o)
	if err := s.Close(); err != nil && runErr == nil {
		runErr = err
	}
	if st != nil && !p.json {
		fmt.Fprintf(os.Stderr, "[workflow %s · outcome %s · session %s]\n", st.Workflow, orPending(st.Outcome), s.ID())
	}
	if ctx.Err() != nil && errors.Is(runErr, context.Canceled) {
		return fmt.Errorf("workflow interrupted; go on with: strata workflow resume %s", s.ID())
	}
	if errors.Is(runErr, workflow.ErrNoState) {
		return usageError{runErr}
	}
	return cliError(runErr)
}

func orPending(s string) string {
	if s == "" {
		return "unfinished"
	}
	return s
}

// workflowPrinter prints the audit events: a line each (text), or one
// JSON object per line (json); in text mode also the stages' tool calls.
type workflowPrinter struct {
	w    io.Writer
	json bool
	mu   sync.Mutex
}

func (p *workflowPrinter) event(e workflow.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		b, _ := json.Marshal(e)
		fmt.Fprintf(p.w, "%s\n", b)
		return
	}
	fmt.Fprintln(p.w, "▸ "+e.String())
}

func (p *workflowPrinter) loop(stage string, e event.Event) {
	if p.json || e.Kind != event.ToolExecutionEnd || e.ToolCall == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "  %s: %s %s → %s\n", stage, e.ToolCall.Name, compactJSON(e.ToolCall.Input), e.Outcome)
}

// termInteractor answers grant interactions on the terminal.
type termInteractor struct {
	mu sync.Mutex
	in *bufio.Reader
}

func (t *termInteractor) GrantStageTool(ctx context.Context, r workflow.GrantRequest) (workflow.GrantAnswer, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		fmt.Fprintf(os.Stderr, "\n? stage %s asks for %s %s (outside its allowedTools)  [y] once  [s] for the stage  [n] no: ",
			r.Stage, r.Call.Name, compactJSON(r.Call.Input))
		line, err := t.in.ReadString('\n')
		if err != nil {
			return workflow.GrantDeny, fmt.Errorf("reading the answer: %w", err)
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return workflow.GrantOnce, nil
		case "s", "stage":
			return workflow.GrantStage, nil
		case "n", "no":
			return workflow.GrantDeny, nil
		}
		if ctx.Err() != nil {
			return workflow.GrantDeny, ctx.Err()
		}
	}
}
