package mcp

import (
	"fmt"
	"strings"
	"time"
)

// DefaultTimeout is the per-request timeout of a server whose
// ServerConfig.Timeout is zero: 120 s, kiro's default for an mcpServers
// entry without "timeout".
const DefaultTimeout = 120 * time.Second

// ServerConfig is how to start and talk to one MCP server. It is the
// manager's own, neutral form: agent-config formats (kiro / Amazon Q agent
// files, mcp.json, an ACP client's mcpServers) are converted to it by their
// owners (agentfile.MCPServerConfig for package config), so package mcp
// depends on no config format.
//
// A server is remote when URL is set (streamable HTTP; Command, Args and Env
// are then ignored), else local when Command is set (stdio). A config with
// neither fails to launch with an error naming the server.
type ServerConfig struct {
	// Command starts a stdio server; it is resolved on PATH as exec.Command
	// does (the PATH of the manager's process, not of Env).
	Command string
	// Args are the command's arguments.
	Args []string
	// Env is added, as KEY=VALUE in key order, after Options.Env (or
	// os.Environ() when that is nil); a key set here overrides the base.
	Env map[string]string
	// URL is the endpoint of a streamable HTTP server.
	URL string
	// Headers are set on every HTTP request to URL (e.g. Authorization).
	Headers map[string]string
	// Timeout bounds the launch (connect, initialize, tools/list) and each
	// later request (tools/call, prompts/list, prompts/get); zero means
	// DefaultTimeout, a negative value is a launch error.
	Timeout time.Duration
	// Disabled servers are recorded with state Disabled and not started.
	Disabled bool
	// OAuth configures MCP authorization of a URL server (docs/mcp-auth.md).
	// A URL server is authorized when it answers 401 unless Headers set
	// Authorization (a token the config supplies itself).
	OAuth OAuthConfig
}

// OAuthConfig is a server's own OAuth settings (kiro's oauth object and
// oauthScopes; docs/mcp-auth.md).
type OAuthConfig struct {
	// RedirectAddr is the loopback redirect listener's host:port (kiro's
	// oauth.redirectUri); "" = 127.0.0.1 and a free port.
	RedirectAddr string
	// Scopes are requested when the server names none.
	Scopes []string
	// ClientID and ClientSecret are a client registered beforehand with the
	// authorization server ("" = dynamic registration or a client ID
	// metadata document).
	ClientID, ClientSecret string
}

// timeout is the effective per-request timeout.
func (c ServerConfig) timeout() time.Duration {
	if c.Timeout == 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

// check reports a config the manager cannot launch, naming the field.
func (c ServerConfig) check(name string) error {
	switch {
	case c.Timeout < 0:
		return fmt.Errorf("mcp server %q: timeout %s is negative (use 0 for the default %s)", name, c.Timeout, DefaultTimeout)
	case c.URL == "" && c.Command == "":
		return fmt.Errorf("mcp server %q has neither command nor url", name)
	}
	return nil
}

// describe is the command line or URL shown in Status.Command.
func (c ServerConfig) describe() string {
	return strings.TrimSpace(c.Command + " " + strings.Join(c.Args, " ") + c.URL)
}
