package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/strata-agent/strata/agentfile"
	"github.com/strata-agent/strata/internal/wsrt"
	"github.com/strata-agent/strata/trust"

	"github.com/spf13/cobra"

	"github.com/strata-agent/strata/config"
	"github.com/strata-agent/strata/mcp"
)

func init() { register(newMCPCmd) }

func newMCPCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "mcp", Short: "Inspect MCP servers"}
	var agentFile, mcpFile, format, record string
	var trustFlag bool
	list := &cobra.Command{
		Use:   "list",
		Short: "Launch the MCP servers of an agent (or an mcp.json) and show their state and tools",
		Long: `Launch the MCP servers run would start here — those of the agent (--agent NAME or FILE:
its mcpServers plus, when it includes them, the workspace's mcp.json files) or, without
--agent, those of strata's default agent (.kiro/settings/mcp.json, .amazonq/mcp.json, the
user's global mcp.json files, .mcp.json) — or those of --mcp-config FILE; list each
server's state and tools with the names the model sees, then stop them.

Commands never trusted in this workspace are shown and asked about on a terminal, else
need --trust. Without --mcp-config the commands asked about are exactly run's (an agent's
hooks included), so trusting them here or in run covers both. --record FILE also writes the
running servers' tools/list answers (each tool's spec as the model is sent it) to FILE, for
'strata bench cache --agent A --mcp-tools FILE'.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return mcpList(cmd.Context(), os.Stdout, agentFile, mcpFile, format, record, trustFlag)
		},
	}
	list.Flags().StringVar(&agentFile, "agent", "", agentHelp)
	list.Flags().StringVar(&mcpFile, "mcp-config", "", "a Claude-Desktop-style mcp.json (without --agent)")
	list.Flags().StringVar(&format, "format", "table", "table or json")
	list.Flags().BoolVar(&trustFlag, "trust", false, trustHelp)
	list.Flags().StringVar(&record, "record", "", "also write the servers' tools/list answers to this JSON file (for bench cache --mcp-tools)")
	cmd.AddCommand(list, newMCPAuthCmd(), newMCPLogoutCmd())
	return cmd
}

func mcpList(ctx context.Context, w io.Writer, agentFile, mcpFile, format, record string, trustFlag bool) error {
	if format != "table" && format != "json" {
		return usagef("unknown --format %q (valid: table, json)", format)
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	servers, req, err := mcpServers(wd, agentFile, mcpFile)
	if err != nil {
		return err
	}
	if err := trust.Check(ctx, cliTrust(trustFlag), req); err != nil {
		return cliError(err)
	}
	oa, err := mcpOAuthOptions(isTerminal(os.Stdin))
	if err != nil {
		return err
	}
	m := mcp.NewManager(mcp.Options{Roots: []string{wd}, Stderr: logs.fileWriter(), // stderr tails are shown below
		OAuth: oa, Elicit: cliElicitor(listElicit())})
	defer m.Terminate()
	for _, s := range servers {
		_ = m.LaunchServer(ctx, s.Name, agentfile.MCPServerConfig(s.Server)) // the failure is in the status
	}
	m.Freeze()
	st := m.Statuses()
	if record != "" {
		if err := mcp.WriteRecord(record, m.Record()); err != nil {
			return err
		}
	}
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(st); err != nil {
			return err
		}
		return allFailed(st)
	}
	if len(st) == 0 {
		_, err := fmt.Fprintln(w, "no MCP servers configured")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSTATE\tTOOLS\tCOMMAND / URL\tDETAIL")
	for _, s := range st {
		detail := s.Server
		if s.Error != "" {
			detail = s.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", s.Name, s.State, len(s.Tools), clip(s.Command, 50), clip(detail, 70))
	}
	tw.Flush()
	for _, s := range st {
		if len(s.Tools) == 0 {
			continue
		}
		names := make([]string, len(s.Tools))
		for i, t := range s.Tools {
			names[i] = mcp.ToolName(s.Name, t)
		}
		fmt.Fprintf(w, "\n@%s tools (as the model sees them):\n  %s\n", s.Name, strings.Join(names, "\n  "))
	}
	for _, s := range st {
		if s.StderrTail != "" {
			fmt.Fprintf(w, "\n@%s stderr (last lines):\n  %s\n", s.Name, strings.ReplaceAll(s.StderrTail, "\n", "\n  "))
		}
	}
	return allFailed(st)
}

// mcpServers returns the MCP servers run would start in wd (those of the
// agent, or of strata's default agent) or those of mcpFile, and the trust
// request for them.
func mcpServers(wd, agentFile, mcpFile string) ([]config.NamedMCPServer, trust.Request, error) {
	var servers []config.NamedMCPServer
	var req trust.Request
	if mcpFile == "" {
		// The agent run would load, and the same trust request: trusting
		// here or in run covers both.
		a, r, err := wsrt.WorkspaceCommands(wd, agentFile)
		if err != nil {
			return nil, req, cliError(err)
		}
		for _, w := range a.Warnings {
			warn(w.String())
		}
		if a.Resolved != nil {
			servers = a.Resolved.MCPServers
		}
		return servers, r, nil
	}
	c, err := config.LoadMCPConfig(mcpFile)
	if err != nil {
		return nil, req, usageError{fmt.Errorf("%w (pass --agent FILE or --mcp-config FILE)", err)}
	}
	home, _ := os.UserHomeDir()
	for _, w := range c.Check(wd, home) {
		warn(w.String())
	}
	for name, s := range c.Servers {
		servers = append(servers, config.NamedMCPServer{Name: name, Server: s, Source: c.Path})
	}
	sort.Slice(servers, func(i, j int) bool { return servers[i].Name < servers[j].Name })
	return servers, trust.NewRequest(wd, "", nil, servers), nil
}

// allFailed is an error when at least one server was started and none is
// running, so that scripts see the failure in the exit status (1).
func allFailed(st []mcp.Status) error {
	started, failed := 0, 0
	for _, s := range st {
		if s.State == mcp.Disabled {
			continue
		}
		started++
		if s.State != mcp.Running {
			failed++
		}
	}
	if started > 0 && failed == started {
		return fmt.Errorf("all %d MCP server(s) failed to start (see DETAIL and stderr above; --verbose logs more)", started)
	}
	return nil
}

// listElicit is why `mcp list` cannot ask MCP forms ("" = it can: stdin is
// a terminal).
func listElicit() string {
	if isTerminal(os.Stdin) {
		return ""
	}
	return "no terminal to ask on"
}
