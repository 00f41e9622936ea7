package strata

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/strata-agent/strata/agentfile"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/strata-agent/strata/config"
)

// ErrUntrusted is matched (errors.Is) by the error Open returns when
// Options.Trust refuses the workspace's commands: its hooks and MCP servers
// did not run.
var ErrUntrusted = errors.New("workspace commands not trusted")

// TrustCommand is one command a workspace's files would make strata run: a
// hook of the agent file, or an MCP server of the agent file or of an
// mcp.json (.kiro/settings/mcp.json, .amazonq/mcp.json, .mcp.json, the
// user's global ones).
type TrustCommand struct {
	// Kind is "hook" or "mcp".
	Kind string `json:"kind"`
	// Name is the hook's event and matcher ("preToolUse fs_write",
	// "agentSpawn") or the MCP server's name.
	Name string `json:"name"`
	// Source is the file the command comes from (not part of the hash).
	Source string `json:"source,omitempty"`
	// Command is the hook's shell command (run with `bash -c`) or the stdio
	// server's program; "" for a server reached by URL.
	Command string `json:"command,omitempty"`
	// Args are the server's arguments.
	Args []string `json:"args,omitempty"`
	// Env are the names (not the values) of the variables the server
	// sets, sorted.
	Env []string `json:"env,omitempty"`
	// URL is the endpoint of an HTTP MCP server.
	URL string `json:"url,omitempty"`
	// values are the server's env values and HTTP headers, as
	// "ENV k=v" / "HEADER k=v" lines sorted: hashed (a changed token or
	// LD_PRELOAD value asks again) but never shown or stored, as they may
	// be secrets.
	values []string
}

// String returns the command as a shell would show it: the program, its
// arguments and env names, or the URL. Text holding a character that is
// not printable (a terminal escape sequence that could hide part of the
// command from the person asked, a newline) is shown Go-quoted ("\x1b[2K").
func (c TrustCommand) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: ", c.Kind, visible(c.Name))
	if c.URL != "" {
		b.WriteString(visible(c.URL))
	}
	if len(c.Env) > 0 {
		fmt.Fprintf(&b, "[env %s] ", visible(strings.Join(c.Env, ",")))
	}
	b.WriteString(visible(c.Command))
	for _, a := range c.Args {
		b.WriteString(" " + shellQuote(a))
	}
	return b.String()
}

// visible returns s, or s Go-quoted when it holds a non-printable
// character.
func visible(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// shellQuote quotes s for display when it holds shell-special characters
// (Go-quoted when it holds non-printable ones).
func shellQuote(s string) string {
	if v := visible(s); v != s {
		return v
	}
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`;&|<>()*?[]{}!#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// TrustRequest is what Options.Trust decides on: the commands a workspace's
// files would run, before any of them runs.
type TrustRequest struct {
	// Dir is the workspace root (absolute).
	Dir string
	// Agent is the agent file's path ("" for strata's default agent).
	Agent string
	// Commands are the hooks (events sorted by name, each event's hooks in
	// file order) and the enabled MCP servers (in the order given).
	Commands []TrustCommand
	// Permissions are the agent file's permission fields — tools,
	// allowedTools, toolAliases, toolsSettings (allowedCommands,
	// allowedPaths, deniedPaths, availableAgents, trustedAgents…),
	// useLegacyMcpJson and includeMcpJson — as canonical JSON; "" for the
	// default agent or a file that sets none. Hashed: widening them asks
	// again.
	Permissions string
	// Hash is the hex SHA-256 of the commands' kind, name, command, args,
	// env names and values, header values and URL (not Source), and of
	// Permissions: a decision remembered for one hash does not cover a
	// changed command or a widened permission.
	Hash string
	// Changed is set when the agent file is loaded after the workspace
	// opened (a sub-agent spawned by use_subagent, an agent swap) and its
	// commands or permissions are not those it had when the workspace
	// opened: the file is new or was rewritten during the run, possibly by
	// the model. A TrustFunc that trusts by a flag given at start (the
	// CLI's --trust: "the commands present when I started") must not trust
	// such a request without asking a person. Not part of the hash.
	Changed bool
}

// TrustFunc decides whether the workspace's commands may run: nil trusts
// them; an error refuses them and Open returns it wrapped with ErrUntrusted
// (as a *ConfigError). It is called at most once per agent load — Open,
// each spawn of a sub-agent whose file changed or was not loaded before,
// an agent swap — before any of that agent's hooks or MCP servers start,
// and only when there is at least one command (or, for a Changed request,
// a permission); it may block (to ask a person) until ctx is done. It may
// be called from a tool call's goroutine (use_subagent).
type TrustFunc func(ctx context.Context, r TrustRequest) error

// NewTrustRequest lists the commands of hooks (events sorted by name, each
// event's hooks in file order) and of the enabled servers (in the given
// order) for the workspace dir and agent file agentPath ("" for none), and
// hashes them. dir is made absolute.
func NewTrustRequest(dir, agentPath string, hooks config.Hooks, servers []config.NamedMCPServer) TrustRequest {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	r := TrustRequest{Dir: dir, Agent: agentPath}
	events := make([]string, 0, len(hooks))
	for ev := range hooks {
		events = append(events, ev)
	}
	sort.Strings(events)
	for _, ev := range events {
		for _, h := range hooks[ev] {
			name := ev
			if h.Matcher != "" {
				name += " " + h.Matcher
			}
			r.Commands = append(r.Commands, TrustCommand{Kind: "hook", Name: name, Source: agentPath, Command: h.Command})
		}
	}
	for _, s := range servers {
		if s.Server.Disabled {
			continue
		}
		env := make([]string, 0, len(s.Server.Env))
		for k := range s.Server.Env {
			env = append(env, k)
		}
		sort.Strings(env)
		var values []string
		for k, v := range s.Server.Env {
			values = append(values, "ENV "+k+"="+v)
		}
		for k, v := range s.Server.Headers {
			values = append(values, "HEADER "+k+"="+v)
		}
		sort.Strings(values)
		r.Commands = append(r.Commands, TrustCommand{Kind: "mcp", Name: s.Name, Source: s.Source,
			Command: s.Server.Command, Args: s.Server.Args, Env: env, URL: s.Server.URL, values: values})
	}
	r.Hash = trustHash(r.Commands, "")
	return r
}

// permissionsOf returns the permission fields of an agent file as
// canonical JSON (object keys sorted, no spaces), "" for nil or a file
// that sets none (TrustRequest.Permissions).
func permissionsOf(a *config.Agent) string {
	if a == nil {
		return ""
	}
	p := map[string]any{}
	if len(a.Tools) > 0 {
		p["tools"] = a.Tools
	}
	if len(a.AllowedTools) > 0 {
		p["allowedTools"] = a.AllowedTools
	}
	if len(a.ToolAliases) > 0 {
		p["toolAliases"] = a.ToolAliases
	}
	if len(a.ToolsSettings) > 0 {
		p["toolsSettings"] = a.ToolsSettings
	}
	if a.UseLegacyMcpJson {
		p["useLegacyMcpJson"] = true
	}
	if a.IncludeMcpJson != nil {
		p["includeMcpJson"] = *a.IncludeMcpJson
	}
	if len(p) == 0 {
		return ""
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return fmt.Sprintf("%v", p) // unreachable: the fields came from JSON
	}
	var canon any // re-encoded: the raw toolsSettings values get sorted keys too
	if json.Unmarshal(raw, &canon) == nil {
		if b, err := json.Marshal(canon); err == nil {
			return string(b)
		}
	}
	return string(raw)
}

// trustRequest is NewTrustRequest without what o disables.
func trustRequest(dir, agentPath string, hooks config.Hooks, servers []config.NamedMCPServer, o Options) TrustRequest {
	if o.DisableAgentHooks {
		hooks = nil
	}
	if o.DisableMCP {
		servers = nil
	}
	return NewTrustRequest(dir, agentPath, hooks, servers)
}

// agentTrustRequest is the TrustRequest of agent a in the workspace dir:
// its agent file's hooks (none for the default agent) and its resolved MCP
// servers, without what o disables. Open and WorkspaceCommands both use it,
// so one decision covers every command that loads the same agent.
func agentTrustRequest(dir string, a *agentfile.File, o Options) TrustRequest {
	var hooks config.Hooks
	path := ""
	if a.Config != nil {
		hooks, path = a.Config.Hooks, a.Config.Path
	}
	var servers []config.NamedMCPServer
	if a.Resolved != nil {
		servers = a.Resolved.MCPServers
	}
	r := trustRequest(dir, path, hooks, servers, o)
	r.Permissions = permissionsOf(a.Config)
	r.Hash = trustHash(r.Commands, r.Permissions)
	return r
}

// WorkspaceCommands loads the agent Open would load for the workspace dir —
// the agent agentName resolves to (agentfile.Resolve), or strata's default agent
// with the project's files (AGENTS.md, steering, the mcp.json files and
// .mcp.json) when agentName is "" — and returns it with the TrustRequest
// Open would ask Options.Trust about: the same commands in the same order,
// hence the same Hash, so a decision taken by a tool that only lists the
// servers (strata mcp list) covers the run that starts them, and back.
// Nothing is started. Errors are *ConfigError.
func WorkspaceCommands(dir, agentName string) (*agentfile.File, TrustRequest, error) {
	a, err := workspaceAgent(dir, agentName, agentfile.DefaultInstructions, false)
	if err != nil {
		return nil, TrustRequest{}, err
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

// trustHash hashes the commands without their Source, with their env and
// header values, and the permissions (when not "").
func trustHash(cmds []TrustCommand, permissions string) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, c := range cmds {
		c.Source = ""
		_ = enc.Encode(struct {
			TrustCommand
			Values []string `json:"values,omitempty"`
		}{c, c.values}) // a struct of strings always encodes
	}
	if permissions != "" {
		_ = enc.Encode(map[string]string{"permissions": permissions})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// CheckTrust asks trust about the commands r lists, when there are any (or,
// for a Changed request, commands or permissions): nil when they may run,
// else a *ConfigError matching ErrUntrusted and wrapping trust's reason. A
// nil trust trusts what the workspace held when it opened and refuses a
// Changed request: the program chose the files it opened, not what was
// written during the run.
func CheckTrust(ctx context.Context, trust TrustFunc, r TrustRequest) error {
	if len(r.Commands) == 0 && (!r.Changed || r.Permissions == "") {
		return nil
	}
	if trust == nil {
		if !r.Changed {
			return nil
		}
		return &ConfigError{Err: fmt.Errorf("%w: the agent file %s is new or its commands or permissions changed since the workspace opened "+
			"(written during the run), and Options.Trust is nil, which trusts only what the workspace held when it opened", ErrUntrusted, r.Agent)}
	}
	if err := trust(ctx, r); err != nil {
		if !errors.Is(err, ErrUntrusted) {
			err = fmt.Errorf("%w: %w", ErrUntrusted, err)
		}
		return &ConfigError{Err: err}
	}
	return nil
}
