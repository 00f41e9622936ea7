package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/durable"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/remote"
	"github.com/strata-agent/strata/llm"
)

// remoteSession is a session running as a workflow on Temporal workers, as
// a --temporal command drives it (internal/remote): prompts go out as
// updates, events come back from the workflow's query and are printed as
// they arrive, approvals are asked here and answered through the client.
type remoteSession struct {
	remote.Session
	dc       *durable.Client
	out      *printer
	streamed bool   // text deltas were printed for the current assistant message
	loop     string // the loop of the last event with a turn (the JSON result's loop_id)
	// pings sums the usage of the workers' keep-alive pings seen so far
	// (their cache_keepalive events), which chat adds to its total as the
	// in-process chat does.
	pings llm.Usage
	// steer, when set (chat on a terminal), delivers the lines typed while a
	// prompt runs: each is sent as a steering message ("/steer " optional).
	steer <-chan string
	// tracer, when OTEL_* configures telemetry, makes each prompt's
	// invoke_agent span: the parent of the client's UpdateWorkflow span and,
	// through the workflow's headers, of the workers' spans.
	tracer trace.Tracer
	// heard is set by the first event shown: a worker runs the session.
	heard atomic.Bool
	// hint names the worker command to start, for the no-worker hint.
	hint string
	// warn, when set, shows the no-worker hint (the full-screen chat's
	// transcript); nil = standard error.
	warn func(string)
}

// noWorkerAfter is how long a prompt waits without any event before the
// client says that no worker may be polling its task queue.
const noWorkerAfter = 5 * time.Second

// specOf is the session workflow's Spec for the run flags f: the workers
// open the workspace at this process's working directory with f's agent,
// provider, model, layout, approval mode and limits (their own flags fill
// in the rest).
func specOf(f runFlags, session string) (durable.Spec, error) {
	mode, err := approvalMode(f.approve)
	if err != nil {
		return durable.Spec{}, err
	}
	dir, err := os.Getwd()
	if err != nil {
		return durable.Spec{}, fmt.Errorf("the working directory (the workers' workspace): %w", err)
	}
	if len(f.replayFiles) > 0 {
		return durable.Spec{}, usagef("--replay with --temporal: the workers answer with their own provider; pass --replay to 'strata worker'")
	}
	return durable.Spec{SessionID: session, Dir: dir, Agent: f.agentFile, Provider: f.provider, Model: f.model,
		Layout: f.layout, Mode: mode, MaxTurns: f.maxTurns, MaxSessionTokens: f.maxSessionTokens}, nil
}

// submitter returns the Spec of the run flags f for session (see specOf;
// --layout and --approve only when given on the command line) and a
// durable.Client of t's server and queue; the caller calls the returned
// close.
func submitter(ctx context.Context, f runFlags, t temporalFlags, session string) (durable.Spec, *durable.Client, func(), error) {
	spec, err := specOf(f, session)
	if err != nil {
		return durable.Spec{}, nil, nil, err
	}
	if t.changed != nil && !t.changed("layout") {
		spec.Layout = "" // the workers' --layout
	}
	if t.changed != nil && !t.changed("approve") {
		spec.Mode = "" // the workers' --approve
	}
	c, err := t.dial(ctx)
	if err != nil {
		return durable.Spec{}, nil, nil, err
	}
	return spec, durable.NewClient(c, t.taskQueue), c.Close, nil
}

// startRemote starts (or, with --session, resumes) the session workflow for
// f on t's workers and says its id on stderr.
func startRemote(ctx context.Context, f runFlags, t temporalFlags) (*remoteSession, func(), error) {
	if f.format != "text" && f.format != "json" {
		return nil, nil, usagef("unknown --format %q (valid: text, json)", f.format)
	}
	if f.continueHere {
		return nil, nil, usagef("-c/--continue with --temporal: the sessions are in the workers' store; pass --session ID")
	}
	spec, dc, closeClient, err := submitter(ctx, f, t, f.session)
	if err != nil {
		return nil, nil, err
	}
	// --session ID continues a stored session: an id the workers' store
	// lacks is an error, not a new session (Spec.Resume).
	spec.Resume = f.session != ""
	id, err := dc.Start(ctx, spec)
	if err != nil {
		closeClient()
		return nil, nil, fmt.Errorf("starting the session workflow on %s (task queue %s): %w", t.addr, t.taskQueue, err)
	}
	fmt.Fprintf(os.Stderr, "strata: session %s on Temporal %s (task queue %s, workflow %s%s)\n", id, t.addr, t.taskQueue, durable.WorkflowIDPrefix, id)
	rs := &remoteSession{dc: dc, out: newPrinter(os.Stdout, f.format),
		hint: fmt.Sprintf("strata worker --temporal %s --task-queue %s --namespace %s", t.addr, t.taskQueue, t.namespace)}
	rs.Session = remote.Session{Service: dc, ID: id, Observe: rs.show, Approver: saying(terminalApprover())}
	if sdk := startTelemetry(); sdk != nil && sdk.TracerProvider != nil {
		rs.tracer = sdk.TracerProvider.Tracer("github.com/strata-agent/strata/cmd/strata")
	}
	rs.out.setSession(id)
	return rs, closeClient, nil
}

// prompt runs text as the session's next prompt on the workers, printing the
// events as they arrive and answering approvals, and returns its result.
func (rs *remoteSession) prompt(ctx context.Context, text string) (*agent.Result, error) {
	if !rs.heard.Load() {
		t := time.AfterFunc(noWorkerAfter, func() {
			if !rs.heard.Load() {
				msg := fmt.Sprintf("strata: no worker has taken session %s yet: is '%s' running?", rs.ID, rs.hint)
				if rs.warn != nil {
					rs.warn(msg)
				} else {
					fmt.Fprintln(os.Stderr, msg)
				}
			}
		})
		defer t.Stop()
	}
	if rs.tracer == nil {
		return rs.Prompt(ctx, text, rs.steer)
	}
	ctx, span := rs.tracer.Start(ctx, "invoke_agent", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "invoke_agent"), attribute.String("gen_ai.conversation.id", rs.ID)))
	defer span.End()
	res, err := rs.Prompt(ctx, text, rs.steer)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	return res, err
}

// saying returns a prompts' approver that also prints why a call was
// refused (the reason, e.g. no terminal to ask on, does not travel with the
// answer to the workflow).
func saying(a agent.Approver) agent.Approver {
	return agent.ApproverFunc(func(ctx context.Context, r agent.ApprovalRequest) (agent.Decision, error) {
		d, err := a.Approve(ctx, r)
		if err != nil {
			fmt.Fprintf(os.Stderr, "strata: %v\n", err)
		}
		return d, err
	})
}

// show prints one event. The workflow's log carries the model's stream
// deltas (durable replays them from the model-call activity); an assistant
// message that came without any is printed whole from its MessageEnd, so
// its text is never lost.
func (rs *remoteSession) show(e event.Event) {
	rs.heard.Store(true)
	if e.Turn != nil {
		rs.loop = e.Turn.LoopID
	}
	switch {
	case e.Kind == event.CacheKeepAlive && e.Usage != nil:
		rs.pings = rs.pings.Add(*e.Usage)
	case e.Kind == event.MessageStart:
		rs.streamed = false
	case e.Kind == event.MessageUpdate && e.Delta != nil && e.Delta.Type == llm.DeltaText:
		rs.streamed = true
	case e.Kind == event.MessageEnd && !rs.streamed && !rs.out.json && e.Message != nil && e.Message.Role == llm.RoleAssistant:
		if text := e.Message.Text(); text != "" {
			rs.out.observe(event.Event{Kind: event.MessageUpdate, Delta: &llm.Delta{Type: llm.DeltaText, Text: text}})
		}
	}
	rs.out.observe(e)
}

// remoteRun runs one prompt on t's workers ('strata run --temporal'): the
// session workflow ends with the prompt (its stored session stays on the
// workers' store; --session ID continues it).
func remoteRun(ctx context.Context, f runFlags, t temporalFlags, text string) error {
	rs, closeClient, err := startRemote(ctx, f, t)
	if err != nil {
		return err
	}
	defer closeClient()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	res, runErr := rs.prompt(ctx, text)
	if err := rs.dc.End(context.WithoutCancel(ctx), rs.ID); err != nil && runErr == nil {
		runErr = fmt.Errorf("ending the session workflow: %w", err)
	}
	return rs.interrupted(ctx, rs.finish(f, res, runErr))
}

// interrupted turns the error of a prompt Ctrl-C stopped waiting for into
// an interruptedError (exit 130) whose hint says what became of it: a
// remote prompt cannot be stopped mid-way, it runs to its end on the
// workers and is stored there.
func (rs *remoteSession) interrupted(ctx context.Context, err error) error {
	// The SDK's error for an update abandoned by cancellation does not
	// wrap context.Canceled: the signal's context says it.
	if ctx.Err() == nil || err == nil {
		return err
	}
	return &interruptedError{session: rs.ID, err: err, hint: fmt.Sprintf("the prompt runs to its end on the workers and the session's workflow ends after it;\n"+
		"see it with: strata sessions show %s (on the workers' store); continue with: strata run --temporal ADDR --session %s", rs.ID, rs.ID)}
}

// finish prints the outcome as drive does (text: the usage line on stderr;
// json: the result line) and returns the error to exit with.
func (rs *remoteSession) finish(f runFlags, res *agent.Result, runErr error) error {
	rs.out.finish()
	if f.format == "json" {
		r := runResult{SessionID: rs.ID, LoopID: rs.loop}
		if res != nil {
			r.Answer, r.StopReason, r.Usage, r.Turns = res.Message.Text(), string(res.StopReason), res.Usage, res.Turns
		}
		if runErr != nil {
			r.Error = runErr.Error()
		}
		rs.out.result(r)
	}
	if f.format == "text" && res != nil {
		u := res.Usage
		fmt.Fprintf(os.Stderr, "[temporal · %d model call(s) · tokens: input %d, output %d, cache read %d, cache write %d · session %s]\n",
			res.Turns, u.Input, u.Output, u.CacheRead, u.CacheWrite, rs.ID)
	}
	if errors.Is(runErr, agent.ErrMaxTurns) && res != nil {
		return fmt.Errorf("agent stopped: max turns %d reached (continuation rounds; tool calls before the limit may have completed)", res.Rounds)
	}
	return cliError(runErr)
}
