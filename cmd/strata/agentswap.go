package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/strata-agent/strata/agentfile"

	tea "charm.land/bubbletea/v2"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/internal/tui"
)

// swapCommand runs the chat's /agent NAME: the session swaps to the agent
// (strata.Session.SwapAgent: every MCP server terminated, the new agent's
// launched) and says what it now runs; without a name it lists the agents
// of the workspace. Failures are reported on w and the chat goes on.
func swapCommand(ctx context.Context, w io.Writer, s *strata.Session, name string) {
	name = agentfile.SwapName(name) // "/agent swap NAME" too, as kiro-cli
	ws := s.Workspace()
	if n, ok := strings.CutPrefix(name, "swap "); ok { // kiro's "/agent swap NAME"
		name = strings.TrimSpace(n)
	} else if name == "swap" || name == "list" {
		name = ""
	}
	if name == "" {
		var names []string
		for _, a := range agentfile.Find(ws.Dir()) {
			names = append(names, a.Name)
		}
		fmt.Fprintf(w, "strata: /agent NAME (agents: %s)\n", orDash(strings.Join(names, ", ")))
		return
	}
	if err := s.SwapAgent(ctx, name); err != nil {
		fmt.Fprintf(w, "strata: /agent %s: %v\n", name, err)
		return
	}
	servers := 0
	if m := ws.MCP(); m != nil {
		servers = len(m.Statuses())
	}
	fmt.Fprintf(w, "agent: %s (model %s, %d MCP server(s))\n", ws.Agent().Config.Name, ws.Model(), servers)
}

// withChatCommands wraps the full-screen chat's run function: a prompt
// that is a chat command ("/agent NAME", "/mode …", "/steer TEXT", "/usage",
// an unknown "/x": chatSlash) runs as in line mode, its answer written to
// the transcript through say, and never reaches the model; every other
// prompt goes to run, and its usage counts for /usage. The returned
// function runs one prompt at a time (the screen waits for each).
func withChatCommands(s *strata.Session, say func(string), run tui.RunFunc) tui.RunFunc {
	st := &chatState{mode: s.Workspace().Mode()}
	total := &st.total
	return func(ctx context.Context, text string) (*agent.Result, error) {
		var b strings.Builder
		if chatSlash(ctx, &b, s, st, strings.TrimSpace(text)) {
			say(strings.TrimRight(b.String(), "\n"))
			return &agent.Result{}, nil
		}
		res, err := run(ctx, text)
		if res != nil {
			total.Turns += res.Turns
			total.Usage = total.Usage.Add(res.Usage)
		}
		return res, err
	}
}

// transcriptSay writes text into the full-screen chat's transcript (a
// tui.NoticeMsg).
func transcriptSay(send func(tea.Msg)) func(string) {
	return func(text string) { send(tui.NoticeMsg{Text: text}) }
}
