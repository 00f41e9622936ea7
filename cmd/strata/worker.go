package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/worker"

	"github.com/strata-agent/strata/durable"
	"github.com/strata-agent/strata/session"
)

func init() { register(newWorkerCmd) }

func newWorkerCmd() *cobra.Command {
	var f runFlags
	var t temporalFlags
	var idle time.Duration
	var threshold int
	cmd := &cobra.Command{
		Use:   "worker --temporal HOST:PORT [--task-queue Q] [--namespace N] [run flags]",
		Short: "Run strata's Temporal workers: durable sessions submitted with --temporal run here",
		Long: `Poll a Temporal server's task queue and run the strata sessions submitted to it
('strata run|chat|acp|workflow run --temporal HOST:PORT'): the session workflow
(the loop's step engine, deterministic) and its activities (each model call, each
tool call, preparing a session, recording it into this worker's session store).

The run flags (--provider, --model, --agent, --layout, --approve, --store,
--replay, --trust, …) are the defaults of every session this worker opens; the
--agent, --provider, --model, --layout, --approve and --max-turns a client gives
override them. API keys come from this worker's environment; without
one the offline demo answers, as for 'strata run'. Run every worker of a queue
in the same directory (or one the sessions' workspace paths resolve in) with the
same store, so that a session continues on any of them after a crash.

Payloads over --claim-threshold bytes after compression (a long conversation,
large file reads) are kept in --store, which every worker of the queue must
share (SQLite on a shared disk, or PostgreSQL), and Temporal's history holds a
reference: the claim check (docs/durable.md). Clients never need the store.

Keep-alive pings (--keepalive, auto by default as for chat and acp) are this
worker's: the session workflow re-sends a session's last request with
max_tokens 1 from a workflow timer while it idles, through a ping activity
(docs/durable.md, "Keep-alive pings"; docs/keepalive.md).

Delivery (docs/durable.md): model calls are retried by provider error class;
side-effecting tool calls run at most once (a call lost with a crashed worker
reaches the model as interrupted); read-only tools may be retried.

The embedded SQLite path ('strata run' without --temporal) stays the default;
workers are for spreading sessions over machines. Stop with Ctrl-C or SIGTERM:
running activities finish or time out and are taken over by another worker.
A dev server for trying it: scripts/temporal-dev start.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !t.on() {
				return usagef("strata worker needs --temporal HOST:PORT (scripts/temporal-dev start runs a dev server)")
			}
			if idle == 0 {
				idle = -1 // WorkerOptions: negative keeps them open
			}
			t.claimThreshold = threshold
			return workerMain(cmd.Context(), f, t, idle)
		},
	}
	addRunFlags(cmd, &f)
	addKeepAliveFlag(cmd, &f) // the workflow pings between prompts (docs/durable.md, "Keep-alive pings")
	t.add(cmd.Flags())
	cmd.Flags().DurationVar(&idle, "idle-workspace", durable.DefaultIdleWorkspace,
		"close a workspace no session has used this long (its MCP servers stop; the next session reopens it); 0 keeps them open")
	cmd.Flags().IntVar(&threshold, "claim-threshold", durable.DefaultClaimThreshold,
		fmt.Sprintf("bytes (after compression) over which a payload is kept in --store instead of Temporal's history (at least %d)", durable.MinClaimThreshold))
	_ = cmd.Flags().MarkHidden("format") // a worker prints nothing of the sessions
	return cmd
}

// workerMain registers the durable workflow and activities on a worker of
// t's task queue and runs it until SIGINT or SIGTERM. The sessions' workspaces
// open with the run flags f as their template.
func workerMain(ctx context.Context, f runFlags, t temporalFlags, idle time.Duration) error {
	o, err := workspaceOptions(f, nil)
	if err != nil {
		return err
	}
	if o.Store, err = openStore(f.db); err != nil {
		return err
	}
	defer o.Store.Close()
	if p, ok := o.Store.(session.Payloads); ok { // the claim check's store: every worker of the queue shares it
		t.payloads = p
	}
	withTelemetry(&o)
	c, err := t.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	w := worker.New(c, t.taskQueue, worker.Options{})
	acts := durable.Register(w, durable.WorkerOptions{Options: o, IdleWorkspace: idle})
	defer acts.Close()
	if err := w.Start(); err != nil {
		return fmt.Errorf("starting the worker on %s (task queue %s): %w", t.addr, t.taskQueue, err)
	}
	defer w.Stop()
	noteDemo(f)
	fmt.Fprintf(os.Stderr, "strata: worker polling task queue %q of namespace %q on %s (pid %d)\n", t.taskQueue, t.namespace, t.addr, os.Getpid())
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "strata: worker stopping")
	return nil
}
