package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"slices"
	"sync"
	"time"

	"github.com/strata-agent/strata/durable"
	"github.com/strata-agent/strata/workflow"
)

// remoteWorkflow runs the stage workflow in file on t's Temporal workers
// ('strata workflow run --temporal'): durable.Client.RunStages, the state
// machine in a parent workflow and each stage execution a child workflow
// (docs/durable.md, "Stage workflows"). It prints the session id first;
// in text the audit events and the stages' tool calls as they arrive
// (durable.StagesWatch, the in-process run's lines), then the final slots
// and a summary line on stderr; in json the final state. When stdin is a
// terminal (text only) a call outside a stage's allowedTools is asked
// about here (durable.Spec.StageGrants), else it is refused.
func remoteWorkflow(ctx context.Context, f runFlags, t temporalFlags, file string, inputs map[string]string) error {
	if f.format != "text" && f.format != "json" {
		return usagef("unknown --format %q (valid: text, json)", f.format)
	}
	source, err := os.ReadFile(file)
	if err != nil {
		return usagef("workflow file: %v", err)
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	spec, dc, closeClient, err := submitter(ctx, f, t, hex.EncodeToString(b[:]))
	if err != nil {
		return err
	}
	defer closeClient()
	fmt.Fprintf(os.Stderr, "strata: session %s on Temporal %s (task queue %s, workflow strata-stages-%s)\n", spec.SessionID, t.addr, t.taskQueue, spec.SessionID)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	var watched sync.WaitGroup
	done := make(chan struct{})
	if f.format == "text" {
		var ask workflow.Interactor
		if isTerminal(os.Stdin) { // a person answers the stages' grant interactions here
			spec.StageGrants = true
			ask = &termInteractor{in: bufio.NewReader(os.Stdin)}
		}
		watched.Add(1)
		go func() {
			defer watched.Done()
			watchStages(ctx, dc.WatchStages(spec.SessionID), ask, done)
		}()
	}
	id, st, runErr := dc.RunStages(ctx, spec, file, source, inputs)
	close(done)
	watched.Wait()
	if ctx.Err() != nil {
		return fmt.Errorf("stopped waiting: the stage workflow goes on on the workers; its state is stored in session %s (strata workflow resume %s on a worker's store)", id, id)
	}
	if st != nil {
		if f.format == "json" {
			enc := json.NewEncoder(os.Stdout)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(st); err != nil {
				return err
			}
		} else {
			for _, name := range slices.Sorted(maps.Keys(st.Slots)) {
				sl := st.Slots[name]
				fmt.Fprintf(os.Stdout, "▸ %s: %s (attempt %d) %s\n", name, sl.Outcome, sl.Attempt, compactJSON(sl.Completion))
			}
			fmt.Fprintf(os.Stderr, "[workflow %s · outcome %s · session %s · on Temporal]\n", st.Workflow, orPending(st.Outcome), id)
		}
	}
	return cliError(runErr)
}

// watchStages prints the stage workflow's events as the in-process
// `strata workflow run` prints them, every half second until done, then
// the rest; ask (nil = none) answers the stages' pending grants.
func watchStages(ctx context.Context, w *durable.StagesWatch, ask workflow.Interactor, done <-chan struct{}) {
	p := &workflowPrinter{w: os.Stdout}
	show := func() bool {
		audit, loop, err := w.Next(ctx)
		type line struct {
			at    time.Time
			print func()
		}
		var lines []line
		for _, e := range audit {
			lines = append(lines, line{e.Time, func() { p.event(e) }})
		}
		for _, e := range loop {
			lines = append(lines, line{e.Event.Time, func() { p.loop(e.Stage, e.Event) }})
		}
		slices.SortStableFunc(lines, func(a, b line) int { return a.at.Compare(b.at) })
		for _, l := range lines {
			l.print()
		}
		return err == nil && len(lines) > 0
	}
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-done:
			for show() { // the events the last ticks missed
			}
			return
		case <-t.C:
			show()
			if ask == nil {
				continue
			}
			for _, g := range w.Pending(ctx) {
				ans, err := ask.GrantStageTool(ctx, g.Request)
				if err != nil {
					ans = workflow.GrantDeny
				}
				if err := w.Grant(ctx, g, ans); err != nil {
					fmt.Fprintf(os.Stderr, "strata: %v\n", err)
				}
			}
		}
	}
}
