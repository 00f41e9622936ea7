package benchcache

import (
	"fmt"
	"github.com/strata-agent/strata/agentfile"
	"time"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/mcp"
	"github.com/strata-agent/strata/tool"
)

// LoadStatic is LoadStaticWith without options: no MCP tool specs.
func LoadStatic(path string) (*Static, error) { return LoadStaticWith(path, StaticOptions{}) }

// StaticOptions tune LoadStaticWith.
type StaticOptions struct {
	// MCPTools is a file of recorded tools/list answers (mcp.Record, written
	// by `strata mcp list --agent FILE --record OUT`); "" = no MCP tools.
	MCPTools string
}

// LoadStaticWith loads the kiro / Amazon Q agent file at path (resolved
// against the project it belongs to, as agentfile.Load does) and returns
// its static context: the prompt, the built-in tools it allows (tool.Builtins
// filtered by its tools field) with execute_bash added when missing (the
// recorded conversation calls it), then, with o.MCPTools, the recorded tools
// of its enabled MCP servers that its tools field allows ("@server",
// "@server/tool", "*"; the same filter as a live session), its file://
// resources and always-included steering, and its skills. Servers are not
// started and hooks do not run. Errors are agentfile.Load's
// (agentfile.Load), mcp.LoadRecord's, or name an enabled server of the
// agent the record does not hold.
func LoadStaticWith(path string, o StaticOptions) (*Static, error) {
	a, err := agentfile.Load(path, "")
	if err != nil {
		return nil, fmt.Errorf("--agent %s: %w", path, err)
	}
	s := &Static{Name: a.Config.Name, System: a.Context.System, Files: a.Context.Files, Skills: a.Context.Skills}
	if s.Name == "" {
		s.Name = path
	}
	hasBash := false
	for _, t := range tool.Builtins() {
		spec := t.Spec()
		if a.Config.ToolAllowed(spec.Name) {
			s.Tools = append(s.Tools, spec)
			hasBash = hasBash || spec.Name == bashSpec.Name
		}
	}
	if !hasBash {
		s.Tools = append(s.Tools, bashSpec)
	}
	if o.MCPTools == "" {
		return s, nil
	}
	rec, err := mcp.LoadRecord(o.MCPTools)
	if err != nil {
		return nil, fmt.Errorf("--mcp-tools: %w", err)
	}
	for _, srv := range a.Resolved.MCPServers {
		if srv.Server.Disabled {
			continue
		}
		r := rec.Server(srv.Name)
		if r == nil {
			return nil, fmt.Errorf("--mcp-tools %s: no tools/list answer of the MCP server %q of %s (from %s); record it with `strata mcp list --agent %s --trust --record %s`",
				o.MCPTools, srv.Name, path, srv.Source, path, o.MCPTools)
		}
		for _, t := range r.Tools {
			if a.Config.ToolAllowed("@" + srv.Name + "/" + t.Name) {
				s.Tools = append(s.Tools, t.Spec)
				s.MCPTools++
			}
		}
	}
	return s, nil
}

// StaticTokens returns the tokens of s's system prompt, tool specs, files and
// skills as counted by the estimator (for reports).
func (s *Static) StaticTokens() int {
	if s == nil {
		return 0
	}
	pc := s.context("", "", []llm.Message{llm.UserText("")}, time.Time{})
	n := pc.Tokens(pc.System) + pc.ToolTokens(pc.Tools)
	for _, f := range pc.Files {
		n += pc.Tokens(f.Content)
	}
	for _, k := range pc.Skills {
		n += pc.Tokens(k.Name + k.Description + k.Path)
	}
	return n
}
