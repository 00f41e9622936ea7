package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/strata-agent/strata"
)

// swapCommand runs the chat's /agent NAME: the session swaps to the agent
// (strata.Session.SwapAgent: every MCP server terminated, the new agent's
// launched) and says what it now runs; without a name it lists the agents
// of the workspace. Failures are reported on w and the chat goes on.
func swapCommand(ctx context.Context, w io.Writer, s *strata.Session, name string) {
	ws := s.Workspace()
	if name == "" {
		var names []string
		for _, a := range strata.FindAgents(ws.Dir()) {
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
