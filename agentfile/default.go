package agentfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-agent/strata/config"
	"github.com/strata-agent/strata/prompt"
)

// defaultAgentResources are the workspace's own files strata's default
// agent (no agent file) puts in every request's context when they exist, in
// this order: AGENTS.md and README.md as kiro-cli's default agent does (the
// agent file kiro writes out, default-kiro.json: "resources":
// ["file://AGENTS.md", "file://README.md"]), and CLAUDE.md as Claude Code
// does. Paths are relative to the workspace. The AGENTS.md and CLAUDE.md
// of the directories between the git root and the workspace come before
// them (instructionFiles, projectDocDirs; docs/project-files.md).
var defaultAgentResources = []string{"file://AGENTS.md", "file://CLAUDE.md", "file://README.md"}

// instructionFiles are the file names read in every directory from the git
// root down to the workspace: Codex's AGENTS.md (codex-rs
// core/src/project_doc.rs) and Claude Code's CLAUDE.md.
var instructionFiles = []string{"AGENTS.md", "CLAUDE.md"}

// projectDocDirs returns the directories whose instructionFiles the default
// agent reads for the workspace root (absolute): from the nearest ancestor
// holding a .git entry (a directory, or the file of a worktree or
// submodule) down to root, as paths relative to root ("../..", "..", "."),
// root first; just "." when no ancestor is a git root. As in Codex's
// project_doc.rs, the walk never passes the git root.
func projectDocDirs(root string) []string {
	rels := []string{"."}
	for dir, up := root, ""; ; {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return rels
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return []string{"."} // no git root: the workspace only
		}
		dir, up = parent, filepath.Join(up, "..")
		rels = append([]string{filepath.ToSlash(up)}, rels...)
	}
}

// defaultAgentResourcesFor returns the default agent's resources for the
// workspace root: the instructionFiles of each directory above it up to its
// git root (root first), then defaultAgentResources.
func defaultAgentResourcesFor(root string) []config.Resource {
	var out []config.Resource
	for _, d := range projectDocDirs(root) {
		if d == "." {
			break
		}
		for _, name := range instructionFiles {
			out = append(out, config.Resource{URI: "file://" + d + "/" + name})
		}
	}
	for _, uri := range defaultAgentResources {
		out = append(out, config.Resource{URI: uri})
	}
	return out
}

// ProjectMCPFile is Claude Code's project MCP file, read by the default
// agent besides kiro's mcp.json files.
const ProjectMCPFile = ".mcp.json"

// Default builds strata's default agent for the workspace dir: system
// instructions sys, the defaultAgentResources that exist, the project's and
// the user's always-included steering (.kiro/steering/*.md with
// `inclusion: always`), and — as kiro's default agent has useLegacyMcpJson
// — the MCP servers of .kiro/settings/mcp.json, .amazonq/mcp.json, the
// user's global mcp.json files, then .mcp.json (a name defined earlier
// wins). Config stays nil (the default agent's tools, approvals and path
// settings are strata's defaults); Resolved holds what was found. With
// noFiles only sys is used. An mcp.json that exists but cannot be read is
// an error naming it.
func Default(dir, sys string, noFiles bool) (*File, error) {
	if noFiles {
		return &File{Context: prompt.Context{System: sys}}, nil
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	def := &config.Agent{Name: "default", Tools: []string{"*"}, UseLegacyMcpJson: true, ProjectRoot: root}
	def.Resources = defaultAgentResourcesFor(root)
	// The instruction files above the workspace belong to its repository:
	// they are read with the repository (the git root) as the sandbox root.
	repo := filepath.Join(root, filepath.FromSlash(projectDocDirs(root)[0]))
	read := ContextReader(repo, nil)
	r, err := config.ResolveWith(def, root, config.ResolveOptions{NoDefaultSkills: true, ReadFile: read})
	if err != nil {
		return nil, fmt.Errorf("default agent: %w", err)
	}
	// Files above the workspace are shown by their path relative to it
	// ("../AGENTS.md"), not their absolute path: a request must not depend
	// on where the checkout lives.
	for i, f := range r.Files {
		if loc, ok := strings.CutPrefix(f.URI, "file://"); ok && strings.HasPrefix(loc, "../") {
			r.Files[i].Path = loc
		}
	}
	// Missing resources are the normal case here (a project has AGENTS.md or
	// CLAUDE.md or neither): only steering and mcp.json problems, and files
	// that exist but were not read (refused by the sandbox), are kept.
	var warnings []config.Warning
	for _, wn := range r.Warnings {
		if wn.Field == "" || strings.Contains(wn.Message, "not readable") {
			warnings = append(warnings, wn)
		}
	}
	r.Warnings = warnings
	if p := filepath.Join(root, ProjectMCPFile); exists(p) {
		c, err := config.LoadMCPConfig(p)
		if err != nil {
			return nil, fmt.Errorf("default agent: %w", err)
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
	a := &File{Resolved: r, Context: contextOf(r), Warnings: r.Warnings, read: read}
	a.Context.System = sys
	return a, nil
}
