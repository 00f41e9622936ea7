package strata

import (
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/tool"
)

// implementedTools returns the canonical names of the built-in tools strata
// can offer: tool.Builtins, the kiro tools of kiroTools and use_subagent (what
// toolcheck.Warnings checks an agent file against).
func implementedTools() map[string]bool {
	m := map[string]bool{agent.SubAgentToolName: true}
	for _, t := range tool.Builtins() {
		m[t.Spec().Name] = true
	}
	for _, n := range kiroToolNames {
		m[n] = true
	}
	return m
}
