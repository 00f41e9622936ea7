package wsrt

import (
	"context"

	"github.com/strata-agent/strata/agentfile"
	"github.com/strata-agent/strata/config"
	"github.com/strata-agent/strata/trust"
)

// trustRequest is trust.NewRequest without what o disables.
func trustRequest(dir, agentPath string, hooks config.Hooks, servers []config.NamedMCPServer, o Options) trust.Request {
	if o.DisableAgentHooks {
		hooks = nil
	}
	if o.DisableMCP {
		servers = nil
	}
	return trust.NewRequest(dir, agentPath, hooks, servers)
}

// agentTrustRequest is the trust.Request of agent a in the workspace dir:
// its agent file's hooks (none for the default agent) and its resolved MCP
// servers, without what o disables. Open and WorkspaceCommands both use it,
// so one decision covers every command that loads the same agent.
func agentTrustRequest(dir string, a *agentfile.File, o Options) trust.Request {
	var hooks config.Hooks
	path := ""
	if a.Config != nil {
		hooks, path = a.Config.Hooks, a.Config.Path
	}
	var servers []config.NamedMCPServer
	if a.Resolved != nil {
		servers = a.Resolved.MCPServers
	}
	return trustRequest(dir, path, hooks, servers, o).WithPermissions(trust.Permissions(a.Config))
}

// WorkspaceCommands loads the agent Open would load for the workspace dir —
// the agent agentName resolves to (agentfile.Resolve), or strata's default agent
// with the project's files (AGENTS.md, steering, the mcp.json files and
// .mcp.json) when agentName is "" — and returns it with the trust.Request
// Open would ask Options.Trust about: the same commands in the same order,
// hence the same Hash, so a decision taken by a tool that only lists the
// servers (`strata mcp list`, its one caller) covers the run that starts them, and back.
// Nothing is started. Errors are *ConfigError.
func WorkspaceCommands(dir, agentName string) (*agentfile.File, trust.Request, error) {
	a, err := workspaceAgent(dir, agentName, agentfile.DefaultInstructions, false)
	if err != nil {
		return nil, trust.Request{}, err
	}
	return a, agentTrustRequest(dir, a, Options{}), nil
}

// workspaceAgent loads the agent Open loads for the workspace dir: the
// agent name resolves to (loadAgentFile), or, when name is "", strata's
// default agent with instructions sys (and the project's files unless
// noProjectFiles). Nothing is started. Errors are *ConfigError.
func workspaceAgent(dir, name, sys string, noProjectFiles bool) (*agentfile.File, error) {
	if name != "" {
		return loadAgentFile(dir, name)
	}
	a, err := agentfile.Default(dir, sys, noProjectFiles)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	return a, nil
}

// loadAgentFile resolves the agent ref in the workspace dir
// (agentfile.Resolve) and loads it (agentfile.Load); errors are
// *ConfigError.
func loadAgentFile(dir, ref string) (*agentfile.File, error) {
	path, err := agentfile.Resolve(dir, ref)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	a, err := agentfile.Load(path, dir)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	return a, nil
}

// checkTrust is trust.Check with a refusal as a *ConfigError (matching
// trust.ErrUntrusted): the caller must change its input or its trust.
func checkTrust(ctx context.Context, f trust.Func, r trust.Request) error {
	if err := trust.Check(ctx, f, r); err != nil {
		return &ConfigError{Err: err}
	}
	return nil
}
