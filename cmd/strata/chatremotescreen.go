package main

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/providers"
	"github.com/strata-agent/strata/internal/tui"
	"github.com/strata-agent/strata/llm"
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
	st := &remoteStatus{provider: f.provider, model: f.model, layout: f.layout, session: rs.ID}
	rs.Observe = func(e event.Event) {
		rs.heard.Store(true)
		st.observe(e)
		send.send(tui.EventMsg{Event: e})
	}
	rs.Approver = tui.Approver{Send: send.send}
	mode := "the workers' --approve"
	if t.changed != nil && t.changed("approve") {
		mode = f.approve
	}
	run := func(ctx context.Context, text string) (*agent.Result, error) {
		var b strings.Builder
		switch text = strings.TrimSpace(text); {
		case text == "/help":
			say(remoteChatHelp)
			return &agent.Result{}, nil
		case text == "/mode" || strings.HasPrefix(text, "/mode "):
			mode = remoteMode(ctx, rs, &b, mode, strings.TrimSpace(strings.TrimPrefix(text, "/mode")))
			say(strings.TrimRight(b.String(), "\n"))
			return &agent.Result{}, nil
		case strings.HasPrefix(text, "/steer "):
			return &agent.Result{}, rs.dc.Steer(ctx, rs.ID, strings.TrimSpace(strings.TrimPrefix(text, "/steer ")))
		case strings.HasPrefix(text, "/") && !strings.HasPrefix(text, "//"):
			say(fmt.Sprintf("unknown command %s in chat --temporal (/help lists them)", text))
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

// remoteStatus is what the status bar of a remote chat shows, read from
// the session's events: the provider and model of the last request (the
// flags' until one is sent), the context the conversation holds after
// it (its prompt tokens plus its output) and the calls' cost in USD, the
// workers' keep-alive pings included (docs/durable.md).
type remoteStatus struct {
	mu                               sync.Mutex
	provider, model, layout, session string
	context                          int64
	usage                            llm.Usage
}

// observe takes one event of the session.
func (s *remoteStatus) observe(e event.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case e.Kind == event.ProviderRequest: // the model asked for, as the in-process bar shows (a response may name a dated id)
		if e.Provider != "" {
			s.provider = e.Provider
		}
		if e.Model != "" {
			s.model = e.Model
		}
	case e.Kind == event.ProviderResponse && e.Usage != nil:
		s.usage = s.usage.Add(*e.Usage)
		s.context = e.Usage.PromptTokens() + e.Usage.Output
	case e.Kind == event.CacheKeepAlive && e.Usage != nil: // a worker's ping costs, as in process; the context is unchanged
		s.usage = s.usage.Add(*e.Usage)
	}
}

// info is tui.Model's status: the cost is known when the price table has
// the model and no cache write's TTL is in doubt (a model whose 1-hour
// writes cost more than its 5-minute ones, with writes the events do not
// break down), as keepalive.Keeper.Cost prices a session's calls.
func (s *remoteStatus) info() tui.Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := tui.Info{Provider: s.provider, Model: s.model, Layout: s.layout, Session: s.session, Context: s.context,
		Window: providers.ContextWindow(s.model)}
	if p, ok := cachesim.Lookup(s.model); ok && (s.usage.CacheWrite == 0 || p.CacheWrite1h == 0 || p.CacheWrite1h == p.CacheWrite5m) {
		u := s.usage
		in.CostUSD = p.Cost(cachesim.Result{Input: u.Input, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, CacheWrite5m: u.CacheWrite,
			Output: u.Output, Prompt: u.PromptTokens()})
		in.Priced = true
	}
	return in
}
