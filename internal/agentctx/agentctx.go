// Package agentctx turns a resolved kiro / Amazon Q agent configuration into
// the prompt.Context template the layouts read, and into the tool filter the
// agent's `tools` field implies, and converts its MCP server entries to the
// MCP manager's ServerConfig. It is the one place where config meets prompt
// and mcp, so none of them depends on another.
package agentctx

import (
	"path/filepath"

	"github.com/strata-agent/strata/config"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// Loaded is an agent ready to run: its resolved configuration and the
// context template built from it.
type Loaded struct {
	Agent    *config.Agent
	Resolved *config.Resolved
	Context  prompt.Context
	// Warnings collects the agent's and the resolution's warnings (missing
	// resources, hook scripts, MCP commands…), each once, to show the user.
	Warnings []config.Warning
}

// Load reads the agent file at path and resolves it against projectRoot
// ("" = the project the agent file belongs to). Errors name the file and
// field (see config.LoadAgent).
func Load(path, projectRoot string) (*Loaded, error) {
	a, err := config.LoadAgent(path)
	if err != nil {
		return nil, err
	}
	if projectRoot != "" {
		if projectRoot, err = filepath.Abs(projectRoot); err != nil {
			return nil, err
		}
	}
	r, err := config.Resolve(a, projectRoot)
	if err != nil {
		return nil, err
	}
	l := &Loaded{Agent: a, Resolved: r, Context: FromResolved(r)}
	seen := map[[2]string]bool{} // loading and resolving may report the same missing resource
	for _, w := range append(append([]config.Warning(nil), a.Warnings...), r.Warnings...) {
		if k := [2]string{w.Field, w.Message}; !seen[k] {
			seen[k] = true
			l.Warnings = append(l.Warnings, w)
		}
	}
	return l, nil
}

// FromResolved builds the context template: the agent prompt as system
// instructions, the file:// resources followed by the always-included
// steering files as context files (kiro loads steering as resources), and the
// skill:// resources as skill metadata. Order follows the resolution, which
// follows the agent file.
func FromResolved(r *config.Resolved) prompt.Context {
	c := prompt.Context{System: r.Agent.Prompt}
	seen := map[string]bool{}
	for _, f := range r.Files {
		if !seen[f.AbsPath] {
			seen[f.AbsPath] = true
			c.Files = append(c.Files, prompt.File{Path: f.Path, Content: f.Content})
		}
	}
	for _, s := range r.Steering {
		if s.Always() && !seen[s.AbsPath] {
			seen[s.AbsPath] = true
			c.Files = append(c.Files, prompt.File{Path: rel(r.ProjectRoot, s.AbsPath), Content: s.Body})
		}
	}
	for _, s := range r.Skills {
		c.Skills = append(c.Skills, prompt.Skill{Name: s.Name, Description: s.Description, Path: s.Path})
	}
	return c
}

// FilterTools keeps the specs the agent's `tools` field allows (through the
// alias table, see config.Agent.ToolAllowed). A nil agent keeps all.
func FilterTools(a *config.Agent, specs []llm.ToolSpec) []llm.ToolSpec {
	if a == nil {
		return specs
	}
	var out []llm.ToolSpec
	for _, s := range specs {
		if a.ToolAllowed(s.Name) {
			out = append(out, s)
		}
	}
	return out
}

func rel(root, abs string) string {
	if root != "" {
		if r, err := filepath.Rel(root, abs); err == nil && !filepath.IsAbs(r) && r != ".." && !startsDotDot(r) {
			return filepath.ToSlash(r)
		}
	}
	return filepath.ToSlash(abs)
}

func startsDotDot(p string) bool { return len(p) >= 3 && p[:3] == ".."+string(filepath.Separator) }
