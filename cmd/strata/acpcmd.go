package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/acp"
)

func init() { register(newACPCmd) }

func newACPCmd() *cobra.Command {
	var f runFlags
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
session/update, tool_call_chunk on _kiro.dev/session/update).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return acpMain(cmd.Context(), f, kiro) },
	}
	addRunFlags(cmd, &f)
	addKeepAliveFlag(cmd, &f)
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
