package strata

import (
	"github.com/strata-agent/strata/config"
	"github.com/strata-agent/strata/mcp"
)

// MCPServerConfig converts an agent config's MCP server entry (an agent file's or
// an mcp.json's "mcpServers" value) to the neutral mcp.ServerConfig the MCP
// manager launches: command, args, env, url, headers, disabled, and the
// "timeout" milliseconds as a duration (config.MCPServer.Timeout, so an
// absent timeout is config.DefaultMCPTimeout).
//
// The conversion lives in the runtime, not in either package, so that config stays a
// leaf that parses agent files without the MCP SDK, and mcp depends on no
// config format. Fields the manager does not use are not carried: type
// (the manager takes a URL as streamable HTTP, a command as stdio), oauth and
// oauthScopes (strata has no OAuth flow), and the kiro mcp.json fields
// autoApprove and disabledTools (strata does not apply them yet; the agent's
// allowedTools and tools fields do approve and filter MCP tools).
func MCPServerConfig(s config.MCPServer) mcp.ServerConfig {
	return mcp.ServerConfig{
		Command:  s.Command,
		Args:     s.Args,
		Env:      s.Env,
		URL:      s.URL,
		Headers:  s.Headers,
		Timeout:  s.Timeout(),
		Disabled: s.Disabled,
	}
}
