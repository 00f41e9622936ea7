package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/remote"
	"github.com/strata-agent/strata/internal/tui"
)

// remoteChatScreen is 'strata chat --temporal' on a terminal: the
// full-screen chat of the in-process 'strata chat' (internal/tui) with the
// session running on the workers. The session workflow's events fill the
// transcript as they arrive, approvals are asked on the screen (y / a / n /
// N) and answered through the workflow's approve update, a line typed while
// a prompt runs steers it, and the status bar prices the calls the events
// report. /mode and /help are the line mode's; the transcript stays in the
// terminal's scrollback when the chat ends, and the session workflow ends
// with it (docs/cli.md, "worker and --temporal").
func remoteChatScreen(ctx context.Context, f runFlags, t temporalFlags) error {
	rs, closeClient, err := startRemote(ctx, f, t)
	if err != nil {
		return err
	}
	defer closeClient()
	var send lazySend
	say := transcriptSay(send.send)
	rs.warn = say // the no-worker hint goes into the transcript, not over the screen
	st := &remoteStatus{layout: f.layout, session: rs.ID}
	st.Seed(f.provider, f.model)
	rs.Observe = func(e event.Event) {
		rs.heard.Store(true)
		st.Observe(e)
		send.send(tui.EventMsg{Event: e})
	}
	rs.Approver = tui.Approver{Send: send.send}
	cmds := newRemoteCommands(rs, f, t)
	run := func(ctx context.Context, text string) (*agent.Result, error) {
		var b strings.Builder
		if cmds.run(ctx, &b, strings.TrimSpace(text)) {
			say(strings.TrimRight(b.String(), "\n"))
			return &agent.Result{}, nil
		}
		return rs.prompt(ctx, text)
	}
	m := tui.New(run, "")
	m.SetSteer(func(text string) bool { return rs.dc.Steer(ctx, rs.ID, text) == nil })
	m.SetInfo(st.info)
	runErr := runScreen(ctx, m, f.first, &send)
	if err := rs.dc.End(context.WithoutCancel(ctx), rs.ID); err != nil && runErr == nil {
		runErr = fmt.Errorf("ending the session workflow: %w", err)
	}
	return runErr
}

// remoteStatus is what the status bar of a remote chat shows: what
// remote.Usage reads from the session's events (provider, model, context
// use, cost in USD, the workers' keep-alive pings included:
// docs/durable.md), seeded with the flags' provider and model.
type remoteStatus struct {
	remote.Usage
	layout, session string
}

// info is tui.Model's status.
func (s *remoteStatus) info() tui.Info {
	r := s.Report()
	return tui.Info{Provider: r.Provider, Model: r.Model, Layout: s.layout, Session: s.session,
		Context: r.Context, Window: r.Window, CostUSD: r.CostUSD, Priced: r.Priced}
}
