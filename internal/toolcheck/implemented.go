package toolcheck

import (
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/tool"
)

// KiroTools are the kiro built-ins strata implements beyond tool.Builtins;
// an agent file gets each one its tools allow (the runtime builds them).
var KiroTools = []string{"thinking", "web_fetch", "introspect", "knowledge"}

// Implemented returns the canonical names of the built-in tools strata can
// offer: tool.Builtins, KiroTools and use_subagent (what Warnings checks an
// agent file against).
func Implemented() map[string]bool {
	m := map[string]bool{agent.SubAgentToolName: true}
	for _, t := range tool.Builtins() {
		m[t.Spec().Name] = true
	}
	for _, n := range KiroTools {
		m[n] = true
	}
	return m
}
