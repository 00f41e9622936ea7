// Package trust decides whether the commands a workspace's files would make
// strata run — the agent file's hooks and the MCP servers of the agent file
// and the mcp.json files — may run, before any of them does: a Request
// lists and hashes them (with the agent's permission fields), a Func
// decides, Check applies the rule for files changed during a run, and a
// Store remembers a person's decisions per workspace and hash
// (docs/security.md, "Who is trusted for what").
package trust

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/strata-agent/strata/config"
)

// ErrUntrusted is matched (errors.Is) by the error Open returns when
// strata.Options.Trust refuses the workspace's commands: its hooks and MCP servers
// did not run.
var ErrUntrusted = errors.New("workspace commands not trusted")

// Command is one command a workspace's files would make strata run: a
// hook of the agent file, or an MCP server of the agent file or of an
// mcp.json (.kiro/settings/mcp.json, .amazonq/mcp.json, .mcp.json, the
// user's global ones).
type Command struct {
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
func (c Command) String() string {
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

// Request is what strata.Options.Trust decides on: the commands a workspace's
// files would run, before any of them runs.
type Request struct {
	// Dir is the workspace root (absolute).
	Dir string
	// Agent is the agent file's path ("" for strata's default agent).
	Agent string
	// Commands are the hooks (events sorted by name, each event's hooks in
	// file order) and the enabled MCP servers (in the order given).
	Commands []Command
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
	// the model. A Func that trusts by a flag given at start (the
	// CLI's --trust: "the commands present when I started") must not trust
	// such a request without asking a person. Not part of the hash.
	Changed bool
}

// Func decides whether the workspace's commands may run: nil trusts
// them; an error refuses them and Open returns it wrapped with ErrUntrusted
// (as a *strata.ConfigError). It is called at most once per agent load — Open,
// each spawn of a sub-agent whose file changed or was not loaded before,
// an agent swap — before any of that agent's hooks or MCP servers start,
// and only when there is at least one command (or, for a Changed request,
// a permission); it may block (to ask a person) until ctx is done. It may
// be called from a tool call's goroutine (use_subagent).
type Func func(ctx context.Context, r Request) error

// NewRequest lists the commands of hooks (events sorted by name, each
// event's hooks in file order) and of the enabled servers (in the given
// order) for the workspace dir and agent file agentPath ("" for none), and
// hashes them. dir is made absolute.
func NewRequest(dir, agentPath string, hooks config.Hooks, servers []config.NamedMCPServer) Request {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	r := Request{Dir: dir, Agent: agentPath}
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
			r.Commands = append(r.Commands, Command{Kind: "hook", Name: name, Source: agentPath, Command: h.Command})
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
		r.Commands = append(r.Commands, Command{Kind: "mcp", Name: s.Name, Source: s.Source,
			Command: s.Server.Command, Args: s.Server.Args, Env: env, URL: s.Server.URL, values: values})
	}
	r.Hash = hash(r.Commands, "")
	return r
}

// WithPermissions returns r with Permissions p (Permissions of the agent
// file) and its Hash recomputed over the commands and p.
func (r Request) WithPermissions(p string) Request {
	r.Permissions = p
	r.Hash = hash(r.Commands, p)
	return r
}

// Permissions returns the permission fields of an agent file as
// canonical JSON (object keys sorted, no spaces), "" for nil or a file
// that sets none (Request.Permissions).
func Permissions(a *config.Agent) string {
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

// hash hashes the commands without their Source, with their env and
// header values, and the permissions (when not "").
func hash(cmds []Command, permissions string) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, c := range cmds {
		c.Source = ""
		_ = enc.Encode(struct {
			Command
			Values []string `json:"values,omitempty"`
		}{c, c.values}) // a struct of strings always encodes
	}
	if permissions != "" {
		_ = enc.Encode(map[string]string{"permissions": permissions})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Check asks trust about the commands r lists, when there are any (or,
// for a Changed request, commands or permissions): nil when they may run,
// else an error matching ErrUntrusted and wrapping trust's reason. A
// nil trust trusts what the workspace held when it opened and refuses a
// Changed request: the program chose the files it opened, not what was
// written during the run.
func Check(ctx context.Context, trust Func, r Request) error {
	if len(r.Commands) == 0 && (!r.Changed || r.Permissions == "") {
		return nil
	}
	if trust == nil {
		if !r.Changed {
			return nil
		}
		return fmt.Errorf("%w: the agent file %s is new or its commands or permissions changed since the workspace opened "+
			"(written during the run), and strata.Options.Trust is nil, which trusts only what the workspace held when it opened", ErrUntrusted, r.Agent)
	}
	if err := trust(ctx, r); err != nil {
		if !errors.Is(err, ErrUntrusted) {
			err = fmt.Errorf("%w: %w", ErrUntrusted, err)
		}
		return err
	}
	return nil
}
