package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
)

// chatState is what the chat commands remember across prompts: the usage
// of this chat's prompts and the approval mode in effect.
type chatState struct {
	total agent.Result
	mode  agent.Mode
}

// chatHelp is /help's text: every chat command (docs/cli.md, "chat").
const chatHelp = `commands:
  /help               this list
  /mode [MODE]        show the approval mode, or set it: ask, allowlist, all
  /agent [swap] NAME  swap to another agent of the workspace (its MCP servers
                      replace the running ones; the conversation goes on);
                      /agent alone lists the agents
  /model              the provider, model and layout in use
  /tools              the agent's tools, and those allowed without asking
  /mcp                the MCP servers: state, tools, errors
  /cost, /usage       tokens (incl. cache read/write), context use, USD cost
  /compact            freeze every earlier prompt into history chunks now (shorter requests)
  /clear              start a new conversation in the same session (the earlier one stays stored)
  /steer TEXT         queue TEXT for the running prompt's next model call
  /exit               end the chat (so does Ctrl+C when idle)
@path in a prompt attaches that file (fs_read's path rules; Tab completes).
Keys: PgUp/PgDn or the mouse wheel scroll; Up/Down/Home/End too when the
input is empty; Esc cancels a running prompt; Enter while it runs steers it.`

// chatSlash runs text when it is a chat command (a line starting with "/"
// other than "/exit", which the caller handles): /steer TEXT, /agent NAME,
// /mode, /usage, … (chatHelp), or an unknown one, which is refused with the
// valid list rather than sent to the model. Answers go to w; st holds the
// chat's usage so far and its mode. It reports whether text was a command.
// Line mode and the full-screen chat (withChatCommands) both use it.
func chatSlash(ctx context.Context, w io.Writer, s *strata.Session, st *chatState, text string) bool {
	if len(text) < 2 || text[0] != '/' || strings.HasPrefix(text, "//") {
		return false
	}
	cmd, arg, _ := strings.Cut(text[1:], " ")
	arg = strings.TrimSpace(arg)
	switch cmd {
	case "steer":
		if arg == "" {
			fmt.Fprintf(w, "strata: /steer TEXT: no text to steer with\n")
			break
		}
		s.Steer(arg)
		fmt.Fprintf(w, "steering: queued for the next model call\n")
	case "agent":
		swapCommand(ctx, w, s, arg)
	default:
		chatCommand(w, s, st, cmd, arg)
	}
	return true
}

func chatCommand(w io.Writer, s *strata.Session, st *chatState, cmd, arg string) {
	ws := s.Workspace()
	switch cmd {
	case "help", "?":
		fmt.Fprintln(w, chatHelp)
	case "mode":
		if arg == "" {
			fmt.Fprintf(w, "approval mode: %s (change it with /mode ask|allowlist|all)\n", st.mode)
			return
		}
		m, err := approvalMode(arg)
		if err != nil {
			fmt.Fprintf(w, "strata: /mode: %v\n", err)
			return
		}
		s.SetMode(m)
		st.mode = m
		fmt.Fprintf(w, "approval mode: %s\n", m)
	case "usage", "cost":
		u := s.Usage()
		r := s.UsageReport()
		fmt.Fprintf(w, "%d model call(s) · tokens: input %d, output %d, cache read %d, cache write %d · %s\n",
			st.total.Turns, u.Input, u.Output, u.CacheRead, u.CacheWrite, costText(r, ws.Model()))
		if r.Context > 0 {
			window := "window unknown"
			if r.Window > 0 {
				window = fmt.Sprintf("%d%% of the %d-token window", r.Context*100/r.Window, r.Window)
			}
			fmt.Fprintf(w, "context: %d tokens (%s)\n", r.Context, window)
		}
		if l := keepAliveLine(s); l != "" {
			fmt.Fprintln(w, l)
		}
	case "model":
		fmt.Fprintf(w, "provider %s · model %s · layout %s (start the chat with --provider/--model to change them)\n", ws.ProviderName(), ws.Model(), ws.Layout())
	case "tools":
		toolsCommand(w, ws)
	case "mcp":
		mcpCommand(w, ws)
	case "compact":
		n, err := s.Compact(context.Background())
		switch {
		case err != nil:
			fmt.Fprintf(w, "strata: /compact: %v\n", err)
		case n == 0:
			fmt.Fprintln(w, "nothing to compact: only the last prompt is in the conversation")
		default:
			fmt.Fprintf(w, "compacted: %d earlier message(s) are now frozen history chunks (a tl;dr of each long text with --compact-tldr); the next request is shorter\n", n)
		}
	case "clear":
		if err := s.Clear(context.Background()); err != nil {
			fmt.Fprintf(w, "strata: /clear: %v\n", err)
			return
		}
		fmt.Fprintln(w, "new conversation: the next prompt starts without the earlier messages (they stay stored in the session)")
	default:
		fmt.Fprintf(w, "strata: unknown command /%s (valid: /help, /mode ask|allowlist|all, /agent NAME, /model, /tools, /mcp, /cost, /usage, /compact, /clear, /steer TEXT, /exit)\n", cmd)
	}
}

// toolsCommand lists the agent's tools, the ones run without asking, and
// each MCP server's tools.
func toolsCommand(w io.Writer, ws *strata.Workspace) {
	cfg := ws.Agent().Config
	if cfg == nil {
		fmt.Fprintln(w, "tools: the built-ins (no agent file)")
		return
	}
	fmt.Fprintf(w, "agent %s · tools: %s\n", orDash(cfg.Name), orDash(strings.Join(cfg.Tools, ", ")))
	fmt.Fprintf(w, "allowed without asking: %s (and the read-only built-ins in allowlist mode)\n", orDash(strings.Join(cfg.AllowedTools, ", ")))
	if m := ws.MCP(); m != nil {
		for _, st := range m.Statuses() {
			fmt.Fprintf(w, "  @%s: %s\n", st.Name, orDash(strings.Join(st.Tools, ", ")))
		}
	}
}

// mcpCommand lists the MCP servers with their state and errors.
func mcpCommand(w io.Writer, ws *strata.Workspace) {
	m := ws.MCP()
	if m == nil || len(m.Statuses()) == 0 {
		fmt.Fprintln(w, "no MCP servers (the agent's mcpServers and .kiro/settings/mcp.json name them)")
		return
	}
	for _, st := range m.Statuses() {
		fmt.Fprintf(w, "%s: %s · %d tool(s) · %s\n", st.Name, st.State, len(st.Tools), st.Command)
		if st.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", st.Error)
		}
	}
}
