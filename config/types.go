package config

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"time"

	"github.com/strata-agent/strata/internal/jsonpos"
)

// Hook events, the keys of an agent's "hooks" object (hooks.md "Hook Types").
const (
	// HookAgentSpawn runs when the agent is activated; stdout joins the context.
	HookAgentSpawn = "agentSpawn"
	// HookUserPromptSubmit runs when the user submits a prompt; stdout joins the context.
	HookUserPromptSubmit = "userPromptSubmit"
	// HookPreToolUse runs before a tool call; exit code 2 blocks it.
	HookPreToolUse = "preToolUse"
	// HookPostToolUse runs after a tool call.
	HookPostToolUse = "postToolUse"
	// HookStop runs when the assistant finishes responding.
	HookStop = "stop"
)

// HookEvents lists the hook events in lifecycle order.
var HookEvents = []string{HookAgentSpawn, HookUserPromptSubmit, HookPreToolUse, HookPostToolUse, HookStop}

// DefaultHookTimeout is a hook's timeout when timeout_ms is absent (hooks.md
// "Timeout": 30 000 ms).
const DefaultHookTimeout = 30 * time.Second

// DefaultMCPTimeout is an MCP request's timeout when "timeout" is absent
// (agent-v1.json mcpServers.timeout default 120 000 ms).
const DefaultMCPTimeout = 120 * time.Second

// Hooks maps a hook event (HookAgentSpawn, …) to its commands in file order.
// Events strata does not know are kept as they are.
type Hooks map[string][]Hook

// Hook is one command of a hook event (agent-format.md "Hooks Field",
// hooks.md). Unknown fields are kept in Extra.
type Hook struct {
	// Command is the shell command to run (required); it gets the hook event
	// as JSON on stdin.
	Command string `json:"command"`
	// Matcher selects tools for preToolUse/postToolUse: a tool name, a
	// pattern ("fs_*"), "@server", "@server/tool", "*" or "@builtin"; empty
	// means all tools.
	Matcher string `json:"matcher,omitempty"`
	// TimeoutMS is the timeout in milliseconds; nil means 30 000.
	TimeoutMS *int64 `json:"timeout_ms,omitempty"`
	// CacheTTLSeconds caches successful output for that many seconds; nil or
	// 0 means no caching; agentSpawn hooks are never cached.
	CacheTTLSeconds *int64 `json:"cache_ttl_seconds,omitempty"`
	// MaxOutputSize caps the captured output, in bytes; nil means the
	// runtime's default.
	MaxOutputSize *int64 `json:"max_output_size,omitempty"`
	// Extra holds fields strata does not know, re-encoded unchanged.
	Extra map[string]json.RawMessage `json:"-"`
}

// Timeout returns the hook's timeout: timeout_ms, or DefaultHookTimeout.
func (h Hook) Timeout() time.Duration {
	if h.TimeoutMS == nil || *h.TimeoutMS <= 0 {
		return DefaultHookTimeout
	}
	return time.Duration(*h.TimeoutMS) * time.Millisecond
}

// CacheTTL returns how long a successful result may be reused (0: never).
func (h Hook) CacheTTL() time.Duration {
	if h.CacheTTLSeconds == nil || *h.CacheTTLSeconds <= 0 {
		return 0
	}
	return time.Duration(*h.CacheTTLSeconds) * time.Second
}

// UnmarshalJSON decodes a hook and keeps unknown fields.
func (h *Hook) UnmarshalJSON(b []byte) error {
	type plain Hook
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*h = Hook(p)
	h.Extra = extraFields(b, reflect.TypeOf(p))
	return nil
}

// MarshalJSON encodes a hook with its unknown fields.
func (h Hook) MarshalJSON() ([]byte, error) {
	type plain Hook
	return withExtra(plain(h), h.Extra)
}

// MCPServer is one entry of "mcpServers" in an agent file or an mcp.json
// (agent-v1.json; kiro MCP configuration adds autoApprove, disabledTools).
// A local server has Command; a remote one has URL (and Type "http").
type MCPServer struct {
	// Type is the transport: "stdio" (default) or "http".
	Type string `json:"type,omitempty"`
	// URL is the endpoint of an HTTP server.
	URL string `json:"url,omitempty"`
	// Headers are sent with every HTTP request.
	Headers map[string]string `json:"headers,omitempty"`
	// OAuthScopes are the OAuth scopes (default openid, email, profile,
	// offline_access).
	OAuthScopes []string `json:"oauthScopes,omitempty"`
	// OAuth is the OAuth configuration, if any.
	OAuth *MCPOAuth `json:"oauth,omitempty"`
	// Command starts a stdio server.
	Command string `json:"command,omitempty"`
	// Args are the command's arguments.
	Args []string `json:"args,omitempty"`
	// Env is added to the command's environment.
	Env map[string]string `json:"env,omitempty"`
	// TimeoutMS is the per-request timeout in milliseconds; nil means 120 000.
	TimeoutMS *uint64 `json:"timeout,omitempty"`
	// Disabled servers are configured but not started.
	Disabled bool `json:"disabled,omitempty"`
	// AutoApprove lists tool names run without prompting (kiro mcp.json).
	AutoApprove []string `json:"autoApprove,omitempty"`
	// DisabledTools lists tool names hidden from the model (kiro mcp.json).
	DisabledTools []string `json:"disabledTools,omitempty"`
	// Extra holds fields strata does not know, re-encoded unchanged.
	Extra map[string]json.RawMessage `json:"-"`
}

// MCPOAuth is an MCP server's "oauth" object (agent-v1.json).
type MCPOAuth struct {
	// RedirectURI is the OAuth redirect address, e.g. "127.0.0.1:7778".
	RedirectURI string `json:"redirectUri,omitempty"`
	// Extra holds fields strata does not know.
	Extra map[string]json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the oauth object and keeps unknown fields.
func (o *MCPOAuth) UnmarshalJSON(b []byte) error {
	type plain MCPOAuth
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*o = MCPOAuth(p)
	o.Extra = extraFields(b, reflect.TypeOf(p))
	return nil
}

// MarshalJSON encodes the oauth object with its unknown fields.
func (o MCPOAuth) MarshalJSON() ([]byte, error) {
	type plain MCPOAuth
	return withExtra(plain(o), o.Extra)
}

// Transport returns "http" for remote servers (Type "http", or a URL and no
// command), the draft v2 "transport" field when Type is absent
// (the-agent-format-2.md: "stdio", "streamable-http"), and "stdio" otherwise.
func (s MCPServer) Transport() string {
	if s.Type == "http" || (s.Type == "" && s.URL != "" && s.Command == "") {
		return "http"
	}
	if s.Type != "" {
		return s.Type
	}
	var tr string
	if raw, ok := s.Extra["transport"]; ok && json.Unmarshal(raw, &tr) == nil && tr != "" {
		return tr
	}
	return "stdio"
}

// Timeout returns the per-request timeout: "timeout" ms, or DefaultMCPTimeout.
func (s MCPServer) Timeout() time.Duration {
	if s.TimeoutMS == nil || *s.TimeoutMS == 0 {
		return DefaultMCPTimeout
	}
	return time.Duration(*s.TimeoutMS) * time.Millisecond
}

// UnmarshalJSON decodes a server and keeps unknown fields.
func (s *MCPServer) UnmarshalJSON(b []byte) error {
	type plain MCPServer
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*s = MCPServer(p)
	s.Extra = extraFields(b, reflect.TypeOf(p))
	return nil
}

// MarshalJSON encodes a server with its unknown fields.
func (s MCPServer) MarshalJSON() ([]byte, error) {
	type plain MCPServer
	return withExtra(plain(s), s.Extra)
}

// MCPConfig is a Claude-Desktop-style MCP file, {"mcpServers": {NAME: server}},
// as kiro reads from .kiro/settings/mcp.json and ~/.kiro/settings/mcp.json
// and Amazon Q from .amazonq/mcp.json and ~/.aws/amazonq/mcp.json.
type MCPConfig struct {
	// Servers maps server names to their configuration.
	Servers map[string]MCPServer `json:"mcpServers"`
	// Path is the absolute path the file was read from.
	Path string `json:"-"`
	// Extra holds top-level fields other than mcpServers.
	Extra map[string]json.RawMessage `json:"-"`
}

// Names returns the server names, sorted.
func (c *MCPConfig) Names() []string {
	names := make([]string, 0, len(c.Servers))
	for n := range c.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LoadMCPConfig reads an mcp.json file. Errors name the file; a file that is
// not a JSON object, or whose mcpServers is not an object of objects, is an
// error. A missing "mcpServers" gives an empty config.
func LoadMCPConfig(path string) (*MCPConfig, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("mcp config %s: %w", path, err)
	}
	raw, err := readConfigFile(abs)
	if err != nil {
		return nil, fmt.Errorf("mcp config: %w", err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("mcp config %s: %w", abs, jsonpos.Wrap(raw, err))
	}
	c := &MCPConfig{Path: abs, Servers: map[string]MCPServer{}}
	for k, v := range top {
		if k != "mcpServers" {
			if c.Extra == nil {
				c.Extra = map[string]json.RawMessage{}
			}
			c.Extra[k] = v
		}
	}
	if s, ok := top["mcpServers"]; ok && !isJSONNull(s) {
		if err := json.Unmarshal(s, &c.Servers); err != nil {
			return nil, fmt.Errorf("mcp config %s: /mcpServers: %w", abs, err)
		}
	}
	return c, nil
}

// MarshalJSON encodes the config with its unknown top-level fields.
func (c MCPConfig) MarshalJSON() ([]byte, error) {
	type plain MCPConfig
	return withExtra(plain(c), c.Extra)
}

// ToolSettings is the typed view of one tool's "toolsSettings" entry
// (built-in-tools.md; kiro adds subagent's availableAgents/trustedAgents).
// Fields a tool does not use stay empty.
type ToolSettings struct {
	// AllowedPaths are glob patterns the tool these settings belong to
	// (fs_read or fs_write) may use without prompting (gitignore-like:
	// "~/temp" covers its subtree). They apply to that tool only: the
	// runtime makes fs_read's the read policy and fs_write's the write
	// policy (tool.Env ReadPaths, WritePaths), so a path allowed for
	// reading is not writable.
	AllowedPaths []string `json:"allowedPaths,omitempty"`
	// DeniedPaths are refused to the tool these settings belong to; deny
	// rules are evaluated before allow rules. fs_read's also keep fs_write
	// away (its result shows the file it edits).
	DeniedPaths []string `json:"deniedPaths,omitempty"`
	// AllowedCommands are regexes (anchored \A…\z) execute_bash may run
	// without prompting.
	AllowedCommands []string `json:"allowedCommands,omitempty"`
	// DeniedCommands are regexes (anchored) that are refused; evaluated first.
	DeniedCommands []string `json:"deniedCommands,omitempty"`
	// AutoAllowReadonly runs read-only commands / AWS operations without
	// prompting.
	AutoAllowReadonly bool `json:"autoAllowReadonly,omitempty"`
	// DenyByDefault refuses commands not allowed, instead of prompting.
	DenyByDefault bool `json:"denyByDefault,omitempty"`
	// AllowedServices are AWS services use_aws may call without prompting.
	AllowedServices []string `json:"allowedServices,omitempty"`
	// DeniedServices are AWS services use_aws refuses.
	DeniedServices []string `json:"deniedServices,omitempty"`
	// AvailableAgents are the agents the subagent tool may start.
	AvailableAgents []string `json:"availableAgents,omitempty"`
	// TrustedAgents are the subagents started without prompting.
	TrustedAgents []string `json:"trustedAgents,omitempty"`
	// Keys are the toolsSettings keys merged into this view, sorted.
	Keys []string `json:"-"`
}

// merge adds o's settings to t: lists are appended, booleans ORed.
func (t *ToolSettings) merge(o ToolSettings) {
	t.AllowedPaths = append(t.AllowedPaths, o.AllowedPaths...)
	t.DeniedPaths = append(t.DeniedPaths, o.DeniedPaths...)
	t.AllowedCommands = append(t.AllowedCommands, o.AllowedCommands...)
	t.DeniedCommands = append(t.DeniedCommands, o.DeniedCommands...)
	t.AllowedServices = append(t.AllowedServices, o.AllowedServices...)
	t.DeniedServices = append(t.DeniedServices, o.DeniedServices...)
	t.AvailableAgents = append(t.AvailableAgents, o.AvailableAgents...)
	t.TrustedAgents = append(t.TrustedAgents, o.TrustedAgents...)
	t.AutoAllowReadonly = t.AutoAllowReadonly || o.AutoAllowReadonly
	t.DenyByDefault = t.DenyByDefault || o.DenyByDefault
}

// Warning is a problem LoadAgent or Resolve found and went on from, as kiro
// does (a missing resource, hook script or MCP command; an ignored value).
type Warning struct {
	// File is the file concerned: the agent file, or the missing or bad file.
	File string
	// Field is the JSON pointer of the agent field concerned, e.g.
	// "/resources/2" or "/hooks/preToolUse/0/command".
	Field string
	// Message says what is wrong and what was done about it.
	Message string
}

// String renders the warning as "FILE: FIELD: MESSAGE".
func (w Warning) String() string {
	if w.Field == "" {
		return w.File + ": " + w.Message
	}
	return w.File + ": " + w.Field + ": " + w.Message
}
