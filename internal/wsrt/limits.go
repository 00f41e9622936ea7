package wsrt

import (
	"github.com/strata-agent/strata/agent"
)

// The defaults of the limits Options sets (strata.DefaultMaxSubAgentDepth
// and its siblings document them).
const (
	DefaultMaxSubAgentDepth        = 3
	DefaultMaxSubAgentsPerResponse = 8
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

// limitResponses sets the per-response caps of o on cfg (a negative
// Options value: no cap, the Config's 0).
func limitResponses(cfg *agent.Config, o Options) {
	cfg.MaxCallsPerResponse = max(limit(o.MaxToolCallsPerResponse, DefaultMaxToolCallsPerResponse), 0)
	cfg.MaxSubAgentsPerResponse = max(limit(o.MaxSubAgentsPerResponse, DefaultMaxSubAgentsPerResponse), 0)
}
