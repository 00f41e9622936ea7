package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/durable"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// pollEvery is how often a --temporal command asks the session workflow for
// new events and a pending approval while a prompt runs (a query each).
const pollEvery = 150 * time.Millisecond

// remoteSession is a session running as a workflow on Temporal workers, as
// a --temporal command drives it: prompts go out as updates, events come
// back from the workflow's query and are printed as they arrive, approvals
// are asked here and answered through the client.
type remoteSession struct {
	dc       *durable.Client
	id       string
	out      *printer
	approver agent.Approver
	seen     int             // events printed so far (the query's index)
	answered map[string]bool // approvals already answered, by Approval id
	streamed bool            // text deltas were printed for the current assistant message
	// steer, when set (chat on a terminal), delivers the lines typed while a
	// prompt runs: each is sent as a steering message ("/steer " optional).
	steer <-chan string
}

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

// startRemote starts (or, with --session, resumes) the session workflow for
// f on t's workers and says its id on stderr.
func startRemote(ctx context.Context, f runFlags, t temporalFlags) (*remoteSession, func(), error) {
	if f.format != "text" && f.format != "json" {
		return nil, nil, usagef("unknown --format %q (valid: text, json)", f.format)
	}
	if f.continueHere {
		return nil, nil, usagef("-c/--continue with --temporal: the sessions are in the workers' store; pass --session ID")
	}
	spec, err := specOf(f, f.session)
	if err != nil {
		return nil, nil, err
	}
	c, err := t.dial(ctx)
	if err != nil {
		return nil, nil, err
	}
	dc := durable.NewClient(c, t.taskQueue)
	id, err := dc.Start(ctx, spec)
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("starting the session workflow on %s (task queue %s): %w", t.addr, t.taskQueue, err)
	}
	fmt.Fprintf(os.Stderr, "strata: session %s on Temporal %s (task queue %s, workflow %s%s)\n", id, t.addr, t.taskQueue, durable.WorkflowIDPrefix, id)
	rs := &remoteSession{dc: dc, id: id, out: newPrinter(os.Stdout, f.format), approver: terminalApprover(), answered: map[string]bool{}}
	rs.out.setSession(id)
	return rs, c.Close, nil
}

// prompt runs text as the session's next prompt on the workers, printing the
// events as they arrive and answering approvals, and returns its result.
func (rs *remoteSession) prompt(ctx context.Context, text string) (*agent.Result, error) {
	type outcome struct {
		res *agent.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := rs.dc.Prompt(ctx, rs.id, text)
		done <- outcome{res, err}
	}()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case o := <-done:
			// The last events (the answer, SessionTurnEnd) were logged
			// before the update returned.
			if err := rs.drain(context.WithoutCancel(ctx)); err != nil && o.err == nil {
				o.err = err
			}
			return o.res, o.err
		case l, ok := <-rs.steer:
			if !ok {
				rs.steer = nil // end of input: the running prompt still finishes
				continue
			}
			if l = strings.TrimSpace(strings.TrimPrefix(l, "/steer ")); l != "" {
				if err := rs.dc.Steer(ctx, rs.id, l); err != nil {
					fmt.Fprintf(os.Stderr, "strata: steering: %v\n", err)
				}
			}
		case <-tick.C:
			if err := rs.drain(ctx); err != nil {
				return nil, err
			}
			if err := rs.answerPending(ctx); err != nil {
				return nil, err
			}
		}
	}
}

// drain prints the events logged since the last call.
func (rs *remoteSession) drain(ctx context.Context) error {
	evs, err := rs.dc.Events(ctx, rs.id, rs.seen)
	if err != nil {
		return fmt.Errorf("reading the session's events: %w", err)
	}
	for _, e := range evs {
		rs.show(e)
	}
	rs.seen += len(evs)
	return nil
}

// show prints one event. The workflow logs whole assistant messages (a
// model call's stream stays on the worker that made it), so an assistant
// message that came without text deltas is printed from its MessageEnd.
func (rs *remoteSession) show(e event.Event) {
	switch {
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

// answerPending asks for the workflow's pending approval, if any not yet
// answered, and sends the answer.
func (rs *remoteSession) answerPending(ctx context.Context) error {
	req, err := rs.dc.Pending(ctx, rs.id)
	if err != nil {
		return fmt.Errorf("asking for a pending approval: %w", err)
	}
	if req == nil || rs.answered[approvalID(req)] {
		return nil
	}
	if err := rs.drain(ctx); err != nil { // show what led to the call first
		return err
	}
	d, aerr := rs.approver.Approve(ctx, *req)
	if aerr != nil {
		fmt.Fprintf(os.Stderr, "strata: %v\n", aerr)
		d = agent.RejectOnce
	}
	rs.answered[approvalID(req)] = true
	if err := rs.dc.Approve(ctx, rs.id, approvalID(req), d); err != nil {
		return fmt.Errorf("answering the approval of %s: %w", req.Call.Name, err)
	}
	return nil
}

// approvalID is the id an approval is answered by: the call's tool_use id.
func approvalID(req *agent.ApprovalRequest) string {
	if req.Call.ID != "" {
		return req.Call.ID
	}
	return req.CorrelationID
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
	res, runErr := rs.prompt(ctx, text)
	if err := rs.dc.End(context.WithoutCancel(ctx), rs.id); err != nil && runErr == nil {
		runErr = fmt.Errorf("ending the session workflow: %w", err)
	}
	return rs.finish(f, res, runErr)
}

// finish prints the outcome as drive does (text: the usage line on stderr;
// json: the result line) and returns the error to exit with.
func (rs *remoteSession) finish(f runFlags, res *agent.Result, runErr error) error {
	rs.out.finish()
	if f.format == "json" {
		r := runResult{SessionID: rs.id}
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
			res.Turns, u.Input, u.Output, u.CacheRead, u.CacheWrite, rs.id)
	}
	if errors.Is(runErr, agent.ErrMaxTurns) && res != nil {
		return fmt.Errorf("agent stopped: max turns %d reached (continuation rounds; tool calls before the limit may have completed)", res.Rounds)
	}
	return cliError(runErr)
}
