package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/strata-agent/strata/acp"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/tool"
)

func init() { register(newACPCmd) }

func newACPCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "acp",
		Short: "Serve the agent over ACP (Agent Client Protocol) on stdin/stdout, for editors and ACP clients",
		Long: `Serve strata as an ACP agent on stdin/stdout: initialize, session/new, session/load
(a stored session replayed as updates), session/prompt, session/cancel and
session/set_mode (ask, allowlist, all). Loop events stream as session/update; tool
approvals go to the client as session/request_permission. Provider selection is as
for 'strata run' (offline demo without an API key). Logs go to stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return acpMain(cmd.Context(), f) },
	}
	addRunFlags(cmd, &f)
	// Output goes over ACP and sessions are chosen by session/new and
	// session/load, so these run flags do not apply.
	_ = cmd.Flags().MarkHidden("format")
	_ = cmd.Flags().MarkHidden("session")
	return cmd
}

// acpHost builds each ACP session's agent the way 'strata run' builds its
// own.
type acpHost struct{ rt *runtime }

func acpMain(ctx context.Context, f runFlags) error {
	rt, err := openRuntime(ctx, f)
	if err != nil {
		return err
	}
	defer rt.close()
	srv := acp.Serve(&acpHost{rt: rt}, rt.store, rt.mode, os.Stdin, os.Stdout)
	defer srv.Close()
	<-srv.Done()
	return nil
}

// NewAgent builds a session's agent; the client's MCP servers run in a
// manager of the session's own, their tools beside the agent's. The prompts
// of both the agent's and the client's servers become slash commands.
func (h *acpHost) NewAgent(ctx context.Context, s acp.Setup) (acp.Built, error) {
	wd := s.Cwd
	if wd == "" {
		wd = h.rt.wd
	}
	env := h.rt.ld.env(wd)
	env.Editor, env.Terminal = s.Editor, s.Terminal
	b := acp.Built{Release: func() {}}
	if h.rt.ld.mcp != nil {
		b.Prompts = append(b.Prompts, h.rt.ld.mcp)
	}
	var extra []tool.Tool
	if len(s.MCPServers) > 0 {
		m := launchMCP(context.WithoutCancel(ctx), s.MCPServers, wd)
		b.Release, b.Prompts = m.Terminate, append(b.Prompts, m)
		for _, t := range m.Tools() {
			extra = append(extra, t)
		}
	}
	cfg := h.rt.config(env, s.Bus, s.Mode, s.Approver, extra...)
	var err error
	if s.LoopID != "" {
		b.Agent, err = agent.Restore(cfg, s.LoopID, s.History, s.Next)
	} else {
		b.Agent, err = agent.New(cfg)
	}
	if err != nil {
		b.Release()
		return acp.Built{}, err
	}
	return b, nil
}
