package main

import (
	"encoding/json"
	"fmt"
	"github.com/strata-agent/strata/agentfile"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

func init() { register(newAgentsCmd) }

// agentInfo is one agent file as `strata agents list` reports it.
type agentInfo struct {
	Name       string   `json:"name"`
	File       string   `json:"file"`
	Scope      string   `json:"scope"` // workspace or global
	Model      string   `json:"model,omitempty"`
	Tools      []string `json:"tools,omitempty"`
	MCPServers []string `json:"mcp_servers,omitempty"`
	Resources  int      `json:"resources"` // file:// files resolved
	Skills     int      `json:"skills"`
	Steering   int      `json:"steering"`
	Warnings   []string `json:"warnings,omitempty"` // "FILE: FIELD: MESSAGE", FILE absolute (config.Warning.String)
	Error      string   `json:"error,omitempty"`
}

func newAgentsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "agents", Short: "List and check the kiro / Amazon Q agent configs of a workspace"}
	var dir, format string
	list := &cobra.Command{
		Use:   "list",
		Short: "Load and resolve every agent file of the workspace and the user's global agents",
		Long: `Find the agent files kiro and Amazon Q would load (.kiro/agents and .amazonq/cli-agents
in the workspace, ~/.kiro/agents and ~/.aws/amazonq/cli-agents globally), load and
resolve each exactly as 'strata run --agent' does, and list its model, tools, MCP
servers, resources, skills and steering files, with every warning (missing resources,
hook scripts, MCP commands) and, for an invalid file, the error naming the field.
Nothing is launched. Exits 1 when any agent file is invalid.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return agentsList(os.Stdout, os.Stderr, dir, format)
		},
	}
	list.Flags().StringVar(&dir, "dir", ".", "workspace root")
	list.Flags().StringVar(&format, "format", "table", "table or json")
	cmd.AddCommand(list)
	return cmd
}

// agentsList writes the agents of the workspace at dir to w; a hint for a
// directory that is itself a .kiro folder goes to errw in JSON mode.
func agentsList(w, errw io.Writer, dir, format string) error {
	if format != "table" && format != "json" {
		return usagef("unknown --format %q (valid: table, json)", format)
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return usagef("--dir %s: not a directory", dir)
	}
	var infos []agentInfo
	for _, f := range agentfile.Find(root) {
		infos = append(infos, inspectAgent(f.Path, root, f.Scope))
	}
	bad := 0
	for _, a := range infos {
		if a.Error != "" {
			bad++
		}
	}
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if infos == nil {
			infos = []agentInfo{}
		}
		if err := enc.Encode(infos); err != nil {
			return err
		}
		if hint := misplacedHint(infos, root); hint != "" {
			fmt.Fprintln(errw, "strata: "+hint)
		}
	} else {
		printAgents(w, infos, root)
		if hint := misplacedHint(infos, root); hint != "" {
			fmt.Fprintln(w, hint)
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d agent file(s) are invalid", bad, len(infos))
	}
	return nil
}

// misplacedHint is agentfile.MisplacedHint(root) when no workspace agent
// was found, else "".
func misplacedHint(infos []agentInfo, root string) string {
	for _, a := range infos {
		if a.Scope == "workspace" {
			return ""
		}
	}
	return agentfile.MisplacedHint(root)
}

// inspectAgent loads and resolves one agent file against the workspace.
func inspectAgent(file, root, scope string) agentInfo {
	a := agentInfo{File: file, Scope: scope, Name: strings.TrimSuffix(filepath.Base(file), ".json")}
	l, err := agentfile.Load(file, root)
	if err != nil {
		a.Error = err.Error()
		return a
	}
	if l.Config.Name != "" {
		a.Name = l.Config.Name
	}
	a.Model, a.Tools = l.Config.Model, l.Config.Tools
	for _, s := range l.Resolved.MCPServers {
		a.MCPServers = append(a.MCPServers, s.Name)
	}
	a.Resources, a.Skills = len(l.Resolved.Files), len(l.Resolved.Skills)
	a.Steering = len(l.Resolved.Steering) + len(l.Resolved.ConditionalSteering)
	for _, wn := range l.Warnings {
		a.Warnings = append(a.Warnings, wn.String()) // FILE: FIELD: MESSAGE
	}
	return a
}

func printAgents(w io.Writer, infos []agentInfo, root string) {
	if len(infos) == 0 {
		fmt.Fprintf(w, "no agent files in %s (.kiro/agents, .amazonq/cli-agents) or the global agent folders\n", root)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tSCOPE\tMODEL\tTOOLS\tMCP SERVERS\tFILES\tSKILLS\tSTEERING\tWARNINGS")
	for _, a := range infos {
		if a.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\tINVALID\t\t\t\t\t\t\n", a.Name, a.Scope)
			continue
		}
		model := a.Model
		if model == "" {
			model = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\n", a.Name, a.Scope, model, orDash(strings.Join(a.Tools, ",")),
			orDash(strings.Join(a.MCPServers, ",")), a.Resources, a.Skills, a.Steering, len(a.Warnings))
	}
	tw.Flush()
	for _, a := range infos {
		if a.Error != "" {
			fmt.Fprintf(w, "\n%s: invalid: %s\n", a.File, a.Error)
		}
		for _, wn := range a.Warnings {
			fmt.Fprintf(w, "%s: warning: %s\n", a.Name, strings.TrimPrefix(wn, root+string(filepath.Separator)))
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
