package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/acp"
	"github.com/strata-agent/strata/agent"
)

func init() { register(newACPCmd) }

func newACPCmd() *cobra.Command {
	var f runFlags
	var t temporalFlags
	var kiro bool
	cmd := &cobra.Command{
		Use:   "acp",
		Short: "Serve the agent over ACP (Agent Client Protocol) on stdin/stdout, for editors and ACP clients",
		Long: `Serve strata as an ACP agent on stdin/stdout: initialize, session/new, session/load
(a stored session replayed as updates), session/prompt, session/cancel and
session/set_mode (ask, allowlist, all). Loop events stream as session/update; tool
approvals go to the client as session/request_permission. Provider selection is as
for 'strata run' (offline demo without an API key). Logs go to stderr.

kiro's dialect (updates on _kiro.dev/session/update, tool output as
tool_call_chunk) goes to clients that ask for it in their capabilities;
--kiro-dialect sends every client what kiro-cli sends (standard updates on
session/update, tool_call_chunk on _kiro.dev/session/update).
` + temporalHelp + `
Over --temporal: session/new, session/prompt (updates, approvals through
session/request_permission, steering, images) and session/set_mode; session/cancel
ends the session's workflow after its running prompt; no session/load, client MCP
servers or client fs/terminal.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if t.on() {
				return remoteACP(cmd.Context(), f, t, kiro)
			}
			return acpMain(cmd.Context(), f, kiro)
		},
	}
	addRunFlags(cmd, &f)
	addKeepAliveFlag(cmd, &f)
	t.add(cmd.Flags())
	cmd.Flags().BoolVar(&kiro, "kiro-dialect", false, "send every client kiro-cli's tool_call_chunk on _kiro.dev/session/update")
	// Output goes over ACP and sessions are chosen by session/new and
	// session/load, so these run flags do not apply.
	_ = cmd.Flags().MarkHidden("format")
	_ = cmd.Flags().MarkHidden("session")
	return cmd
}

func acpMain(ctx context.Context, f runFlags, kiro bool) error {
	elicit := &acp.Elicitor{Warn: warn} // MCP forms go to the client when it takes them
	ws, err := openWorkspace(ctx, f, func(o *strata.Options) { o.MCPElicit = elicit })
	if err != nil {
		return err
	}
	defer ws.Close()
	defer ws.Store().Close()
	noteDemo(f)
	mode, _ := approvalMode(f.approve) // validated by openWorkspace
	return acp.ServeWith(ctx, ws, acp.ServeOptions{Mode: mode, KiroDialect: kiro, Elicit: elicit}, os.Stdin, os.Stdout)
}

// remoteACP serves ACP for sessions on t's Temporal workers
// (acp.ServeRemote): each session/new starts a session workflow whose
// workspace is the client's cwd; session/load continues a session of the
// workers' store in one.
func remoteACP(ctx context.Context, f runFlags, t temporalFlags, kiro bool) error {
	spec, dc, closeClient, err := submitter(ctx, f, t, "")
	if err != nil {
		return err
	}
	defer closeClient()
	mode, _ := approvalMode(f.approve) // validated by submitter
	open := func(ctx context.Context, cwd string, mode agent.Mode) (string, error) {
		sp := spec
		sp.Dir, sp.Mode = cwd, mode // the client shows the mode: it is always sent
		return dc.Start(ctx, sp)
	}
	load := func(ctx context.Context, id, cwd string, mode agent.Mode) error {
		sp := spec
		sp.SessionID, sp.Dir, sp.Mode, sp.Resume = id, cwd, mode, true
		_, err := dc.Start(ctx, sp)
		return err
	}
	fmt.Fprintf(os.Stderr, "strata: ACP sessions run on Temporal %s (task queue %s)\n", t.addr, t.taskQueue)
	return acp.ServeRemote(ctx, acp.RemoteOptions{Service: dc, Open: open, Load: load, Mode: mode, KiroDialect: kiro}, os.Stdin, os.Stdout)
}
