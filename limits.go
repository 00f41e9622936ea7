package strata

import (
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/internal/permission"
)

// Defaults of the limits Options sets (docs/security.md, "Limits you can
// set"; config keys subAgentDepth, subAgentsPerResponse and
// toolCallsPerResponse).
const (
	// DefaultMaxSubAgentDepth is how many use_subagent levels may nest
	// below the session's agent: a ping ↔ pong pair of agents delegating
	// to each other stops there.
	DefaultMaxSubAgentDepth = 3
	// DefaultMaxSubAgentsPerResponse is how many use_subagent calls of one
	// model response run.
	DefaultMaxSubAgentsPerResponse = 8
	// DefaultMaxToolCallsPerResponse is how many tool calls of one model
	// response run.
	DefaultMaxToolCallsPerResponse = 64
)

// limit returns v, def for 0, and -1 (no limit) for a negative v.
func limit(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return -1
	}
	return v
}

// maxSubAgentDepth is Options.MaxSubAgentDepth with its default; 0 for a
// negative value (no named sub-agent may run).
func (o Options) maxSubAgentDepth() int {
	if o.MaxSubAgentDepth < 0 {
		return 0
	}
	return limit(o.MaxSubAgentDepth, DefaultMaxSubAgentDepth)
}

// limitResponses installs the per-response caps of o on cfg
// (permission.CapResponses).
func limitResponses(cfg *agent.Config, o Options) {
	permission.CapResponses(cfg, limit(o.MaxToolCallsPerResponse, DefaultMaxToolCallsPerResponse),
		limit(o.MaxSubAgentsPerResponse, DefaultMaxSubAgentsPerResponse))
}
