package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"golang.org/x/sys/unix"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/internal/tui"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/tool"
)

// chatScreen runs the full-screen chat (internal/tui) on the loop: the
// status bar reads the session (tui.Info), approvals preview fs_write
// edits, warnings go into the transcript, a resumed session shows its
// earlier conversation, and when the chat ends its transcript is printed
// to the terminal so that it stays in the scrollback (docs/cli.md, "chat").
func chatScreen(ctx context.Context, f runFlags) error {
	var send lazySend
	f.screen = &screenHooks{observe: tui.Observer(send.send), approver: tui.Approver{Send: send.send}, elicit: tui.Elicitor{Send: send.send}}
	return drive(ctx, f, func(ctx context.Context, s *strata.Session) (*agent.Result, error) {
		if err := resumePending(ctx, s); err != nil {
			return nil, err
		}
		logs.fileOnly() // --verbose lines would tear the screen; they stay in the log file
		say := transcriptSay(send.send)
		toScreen := func(s string) { say(s) }
		warnTo.Store(&toScreen)
		defer warnTo.Store(nil)
		m := tui.New(withChatCommands(s, say, func(ctx context.Context, text string) (*agent.Result, error) {
			return promptWithMentions(ctx, s, say, text)
		}), "")
		m.SetSteer(s.SteerRunning)
		m.SetInfo(screenInfo(s, f))
		m.SetPreview(func(c llm.Block) (string, bool, error) { return previewEdit(ctx, s, c) })
		m.SetComplete(func(prefix string) []string { return completePath(s.Workspace().ToolEnv(), prefix) })
		if f.session != "" || f.continueHere {
			m.ShowHistory(s.History(), "session "+s.ID())
		}
		err := runScreen(ctx, m, f.first, &send)
		u, calls := m.Usage()
		return &agent.Result{Usage: u, Turns: calls}, err
	})
}

// runScreen runs the chat screen m until it quits, first running the
// prompt first ("" = none), with send delivering to it, then prints its
// transcript to the terminal's scrollback. A program killed because ctx
// ended ends like /exit.
func runScreen(ctx context.Context, m *tui.Model, first string, send *lazySend) error {
	m.SetFirst(first)
	p := tea.NewProgram(m, tea.WithContext(ctx))
	send.set(p.Send)
	_, err := p.Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		err = nil // interrupted from outside: end like /exit
	}
	printTranscript(m)
	return err
}

// printTranscript writes the chat's transcript to stdout once the
// alternate screen is gone, laid out at the terminal's width, so that the
// conversation stays in the terminal's scrollback as Claude Code's does
// (colours downsampled to what the terminal supports, none with NO_COLOR).
func printTranscript(m *tui.Model) {
	width := 80
	if ws, err := unix.IoctlGetWinsize(int(os.Stdout.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
		width = int(ws.Col)
	}
	out := m.Rendered(width)
	if out == "" {
		return
	}
	w := colorprofile.NewWriter(os.Stdout, os.Environ())
	fmt.Fprintln(w, out)
}

// screenInfo returns what the status bar shows of session s: provider,
// model, layout, session id, offline demo, context use and cost in USD
// (strata.Session.UsageReport, priced from the cachesim table), and the
// session's tokens (its stored calls too, when resumed).
func screenInfo(s *strata.Session, f runFlags) func() tui.Info {
	offline := usesDemo(f)
	return func() tui.Info {
		ws := s.Workspace()
		r := s.UsageReport()
		u := s.Usage()
		return tui.Info{Provider: ws.ProviderName(), Model: ws.Model(), Layout: f.layout, Session: s.ID(), Offline: offline,
			Context: r.Context, Window: r.Window, CostUSD: r.CostUSD, Priced: priced(r, ws.Model()), Usage: &u}
	}
}

// previewEdit is the diff an fs_write call c would make, read through the
// workspace's fs_write path rules; ok is false for other tools.
func previewEdit(ctx context.Context, s *strata.Session, c llm.Block) (string, bool, error) {
	if c.Name != "fs_write" {
		return "", false, nil
	}
	var w tool.FSWrite
	d, err := w.Preview(ctx, s.Workspace().ToolEnv(), c.Input)
	return d, err == nil, err
}

// costText is a session's cost for footers and /cost: "$0.0123", or
// "unknown price" naming the model when the price table has no row for
// it (or a cache write's TTL is unknown).
func costText(r strata.UsageReport, model string) string {
	if !priced(r, model) {
		return fmt.Sprintf("cost: unknown price for %s", model)
	}
	return "cost " + tui.USD(r.CostUSD)
}

// priced reports whether r's cost is known: UsageReport says so, and the
// price table has the model (before the first call UsageReport's zero cost
// is "priced" whatever the model).
func priced(r strata.UsageReport, model string) bool {
	_, ok := cachesim.Lookup(model)
	return r.Priced && ok
}

// lazySend forwards to a program's Send once the program exists; messages
// before that (there are none in practice) are dropped.
type lazySend struct {
	mu sync.Mutex
	fn func(tea.Msg)
}

func (l *lazySend) set(fn func(tea.Msg)) { l.mu.Lock(); l.fn = fn; l.mu.Unlock() }

func (l *lazySend) send(m tea.Msg) {
	l.mu.Lock()
	fn := l.fn
	l.mu.Unlock()
	if fn != nil {
		fn(m)
	}
}
