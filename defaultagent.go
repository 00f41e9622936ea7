package strata

import (
	"fmt"
	"path/filepath"

	"github.com/strata-agent/strata/config"
	"github.com/strata-agent/strata/prompt"
)

// DefaultAgentResources are the project files strata's default agent (no
// agent file) puts in every request's context when they exist, in this
// order: AGENTS.md and README.md as kiro-cli's default agent does (the
// agent file kiro writes out, default-kiro.json: "resources":
// ["file://AGENTS.md", "file://README.md"]), and CLAUDE.md as Claude Code
// does (Codex reads AGENTS.md). Paths are relative to the workspace root;
// only the root's files are read, not those of parent or sub-directories.
var DefaultAgentResources = []string{"file://AGENTS.md", "file://CLAUDE.md", "file://README.md"}

// ProjectMCPFile is Claude Code's project MCP file, read by the default
// agent besides kiro's mcp.json files.
const ProjectMCPFile = ".mcp.json"

// defaultAgent builds strata's default agent for the workspace dir: system
// instructions sys, the DefaultAgentResources that exist, the project's and
// the user's always-included steering (.kiro/steering/*.md with
// `inclusion: always`), and — as kiro's default agent has useLegacyMcpJson
// — the MCP servers of .kiro/settings/mcp.json, .amazonq/mcp.json, the
// user's global mcp.json files, then .mcp.json (a name defined earlier
// wins). Config stays nil (the default agent's tools, approvals and path
// settings are strata's defaults); Resolved holds what was found. With
// noFiles only sys is used. An mcp.json that exists but cannot be read is
// a *ConfigError naming it.
func defaultAgent(dir, sys string, noFiles bool) (*Agent, error) {
	if noFiles {
		return &Agent{Context: prompt.Context{System: sys}}, nil
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	def := &config.Agent{Name: "default", Tools: []string{"*"}, UseLegacyMcpJson: true, ProjectRoot: root}
	for _, uri := range DefaultAgentResources {
		def.Resources = append(def.Resources, config.Resource{URI: uri})
	}
	r, err := config.ResolveWith(def, root, config.ResolveOptions{NoDefaultSkills: true})
	if err != nil {
		return nil, &ConfigError{Err: fmt.Errorf("default agent: %w", err)}
	}
	// Missing resources are the normal case here (a project has AGENTS.md or
	// CLAUDE.md or neither): only steering and mcp.json problems are kept.
	var warnings []config.Warning
	for _, wn := range r.Warnings {
		if wn.Field == "" {
			warnings = append(warnings, wn)
		}
	}
	r.Warnings = warnings
	if p := filepath.Join(root, ProjectMCPFile); exists(p) {
		c, err := config.LoadMCPConfig(p)
		if err != nil {
			return nil, &ConfigError{Err: fmt.Errorf("default agent: %w", err)}
		}
		have := map[string]bool{}
		for _, s := range r.MCPServers {
			have[s.Name] = true
		}
		for _, name := range c.Names() {
			if !have[name] {
				r.MCPServers = append(r.MCPServers, config.NamedMCPServer{Name: name, Server: c.Servers[name], Source: c.Path})
			}
		}
	}
	a := &Agent{Resolved: r, Context: contextOf(r), Warnings: r.Warnings}
	a.Context.System = sys
	return a, nil
}
