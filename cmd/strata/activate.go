package main

import (
	"context"
	"fmt"
	"os"

	"github.com/strata-agent/strata/config"
	"github.com/strata-agent/strata/hooks"
	"github.com/strata-agent/strata/internal/agentctx"
	"github.com/strata-agent/strata/mcp"
	"github.com/strata-agent/strata/tool"
)

// activate does what kiro does when an agent starts: it launches the agent's
// MCP servers (a server that fails to launch is a warning, as in kiro) and
// adds their tools the agent allows, then runs the agentSpawn hooks into the
// context and prepares the loop hooks. The returned function terminates the
// servers. Without an agent config it does nothing.
func (l *loaded) activate(ctx context.Context, wd string) func() {
	if l.cfg == nil {
		return func() {}
	}
	m := launchMCP(ctx, l.servers, wd)
	l.mcp = m
	l.mcpNames = map[string]string{}
	for _, t := range m.Tools() {
		l.mcpNames[t.Spec().Name] = t.ConfigName()
		if l.cfg.ToolAllowed(t.ConfigName()) {
			l.tools = append(l.tools, t)
		}
	}
	r := hooks.New(l.cfg, hooks.Options{Cwd: wd, ToolName: l.configName, Warn: warn})
	l.context.HookOutputs = append(l.context.HookOutputs, r.AgentSpawn(ctx)...)
	l.hooks = r.Hooks()
	return m.Terminate
}

// warn prints a warning on stderr and goes on (kiro reports missing
// resources, hook scripts and MCP commands the same way).
func warn(s string) { fmt.Fprintf(os.Stderr, "strata: warning: %s\n", s) }

// launchMCP starts servers (a failed launch is a warning) and freezes the
// manager. The caller terminates it.
func launchMCP(ctx context.Context, servers []config.NamedMCPServer, wd string) *mcp.Manager {
	m := mcp.NewManager(mcp.Options{Stderr: os.Stderr, Roots: []string{wd}})
	for _, s := range servers {
		if err := m.LaunchServer(ctx, s.Name, agentctx.MCPServer(s.Server)); err != nil {
			warn(fmt.Sprintf("MCP server %q (%s): %v", s.Name, s.Source, err))
		}
	}
	m.Freeze()
	return m
}

// configName maps a model-facing tool name to the name agent configs use:
// "@server/tool" for MCP tools, the name itself for built-ins.
func (l *loaded) configName(name string) string {
	if n, ok := l.mcpNames[name]; ok {
		return n
	}
	return name
}

var _ tool.Tool = (*mcp.Tool)(nil)
