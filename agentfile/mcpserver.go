package agentfile

import (
	"encoding/json"
	"strings"

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
// config format. oauthScopes and the oauth object's redirectUri, clientId
// and clientSecret become mcp.OAuthConfig (docs/mcp-auth.md). Fields the
// manager does not use are not carried: type (the manager takes a URL as
// streamable HTTP, a command as stdio), and the kiro mcp.json fields
// autoApprove and disabledTools (strata does not apply them yet; the agent's
// allowedTools and tools fields do approve and filter MCP tools).
func MCPServerConfig(s config.MCPServer) mcp.ServerConfig {
	o := mcp.OAuthConfig{Scopes: s.OAuthScopes}
	if s.OAuth != nil {
		o.RedirectAddr = strings.TrimPrefix(strings.TrimPrefix(s.OAuth.RedirectURI, "http://"), "https://")
		o.RedirectAddr, _, _ = strings.Cut(o.RedirectAddr, "/") // a full URI's path: the listener serves /callback
		o.ClientID = extraString(s.OAuth.Extra, "clientId")
		o.ClientSecret = extraString(s.OAuth.Extra, "clientSecret")
	}
	return mcp.ServerConfig{
		OAuth:    o,
		Command:  s.Command,
		Args:     s.Args,
		Env:      s.Env,
		URL:      s.URL,
		Headers:  s.Headers,
		Timeout:  s.Timeout(),
		Disabled: s.Disabled,
	}
}

// extraString is the string value of an unknown field, "" when absent or
// not a string.
func extraString(extra map[string]json.RawMessage, key string) string {
	var v string
	_ = json.Unmarshal(extra[key], &v)
	return v
}
