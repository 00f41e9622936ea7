package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/spf13/pflag"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	tlog "go.temporal.io/sdk/log"

	"github.com/strata-agent/strata/durable"
	"github.com/strata-agent/strata/session"
)

// defaultTaskQueue is the Temporal task queue 'strata worker' polls and the
// --temporal commands submit to when --task-queue is not given.
const defaultTaskQueue = "strata"

// temporalHelp is the paragraph the --temporal commands add to their help.
const temporalHelp = `
With --temporal HOST:PORT the session runs as a durable workflow on the workers
('strata worker') polling --task-queue of that Temporal server: each model call
and each tool call is an activity on a worker, the workspace, provider, agent
and session store are the worker's (run the workers in the same directory), and
a crashed worker's session continues on another. Without --temporal (the
default) the loop runs in this process and records into the embedded SQLite
session database. README, "Running on Temporal"; docs/durable.md.`

// temporalFlags are --temporal, --task-queue and --namespace: the Temporal
// server and queue a command submits to ('strata run --temporal') or polls
// ('strata worker').
type temporalFlags struct {
	addr, taskQueue, namespace string
	// changed reports whether a flag was given on the command line (the
	// FlagSet's Changed): a submitted Spec carries --layout and --approve
	// only when given, so that the workers' own defaults apply otherwise.
	changed func(name string) bool
	// payloads, when set, is the store of the claim check (a worker's
	// --store): payloads over claimThreshold bytes (0 = the default) go
	// there instead of through Temporal (docs/durable.md, "Claim check").
	payloads       session.Payloads
	claimThreshold int
}

// add adds the flags to fl.
func (t *temporalFlags) add(fl *pflag.FlagSet) {
	t.changed = fl.Changed
	fl.StringVar(&t.addr, "temporal", "", "HOST:PORT of a Temporal server: run the session on its workers instead of in this process (default: in-process, recorded in the embedded SQLite store)")
	fl.StringVar(&t.taskQueue, "task-queue", defaultTaskQueue, "with --temporal: the task queue the workers poll")
	fl.StringVar(&t.namespace, "namespace", "default", "with --temporal: the Temporal namespace")
}

// on reports whether --temporal was given.
func (t temporalFlags) on() bool { return t.addr != "" }

// check validates the flags: --temporal must be HOST:PORT, the queue and
// namespace non-empty. The errors are usage errors naming the flag.
func (t temporalFlags) check() error {
	if _, port, err := net.SplitHostPort(t.addr); err != nil || port == "" {
		return usagef("--temporal %q: want HOST:PORT of a Temporal frontend (e.g. 127.0.0.1:7233; scripts/temporal-dev start prints one)", t.addr)
	}
	if t.taskQueue == "" {
		return usagef("--task-queue: want a queue name (default %q)", defaultTaskQueue)
	}
	if t.namespace == "" {
		return usagef("--namespace: want a namespace name (default \"default\")")
	}
	return nil
}

// dial connects to the Temporal server and checks that it answers (within
// 10 s), with durable's data converter (zlib payloads; with t.payloads the
// claim check too) and, when OTEL_* configures telemetry, Temporal's
// OpenTelemetry interceptor, so that the client's and the workers' spans
// join one trace (docs/durable.md, "Traces"). The SDK's log lines go to
// strata's log file (and stderr with --verbose). The caller closes the
// client.
func (t temporalFlags) dial(ctx context.Context) (client.Client, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	opts := client.Options{HostPort: t.addr, Namespace: t.namespace, Logger: temporalLogger(),
		DataConverter: durable.DataConverter()}
	if t.payloads != nil {
		dc, err := durable.DataConverterWith(t.payloads, t.claimThreshold)
		if err != nil {
			return nil, usagef("--claim-threshold: %v", err)
		}
		opts.DataConverter = dc
	}
	if sdk := startTelemetry(); sdk != nil && sdk.TracerProvider != nil {
		ic, err := durable.Tracing(sdk.TracerProvider)
		if err != nil {
			return nil, fmt.Errorf("tracing the Temporal client: %w", err)
		}
		opts.Interceptors = []interceptor.ClientInterceptor{ic}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("connecting to Temporal at %s (namespace %s): %w (is a server running? scripts/temporal-dev start runs a dev server)", t.addr, t.namespace, err)
	}
	return c, nil
}

// temporalLogger routes the SDK's log lines into strata's log file; with
// --verbose its warnings and errors go to stderr as well.
func temporalLogger() tlog.Logger {
	var hs []slog.Handler
	if logs.fileLog != nil {
		hs = append(hs, logs.fileLog.Handler())
	}
	if logs.verbose {
		hs = append(hs, slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	return tlog.NewStructuredLogger(slog.New(slog.NewMultiHandler(hs...)).With("component", "temporal"))
}
