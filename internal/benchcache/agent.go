package benchcache

import (
	"fmt"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/tool"
	"time"
)

// LoadStatic loads the kiro / Amazon Q agent file at path (resolved against
// the project it belongs to, as strata.LoadAgent does) and returns its static
// context: the prompt, the built-in tools it allows (tool.Builtins filtered by
// its tools field) with execute_bash added when missing (the recorded
// conversation calls it), its file:// resources and always-included steering,
// and its skills. MCP servers are not started, so their tools are not
// included (no recorded tools/list of the agents' servers exists), and hooks
// do not run. Errors are strata.LoadAgent's (*strata.ConfigError).
func LoadStatic(path string) (*Static, error) {
	a, err := strata.LoadAgent(path, "")
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
