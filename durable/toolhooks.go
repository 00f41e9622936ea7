package durable

import (
	"context"
	"fmt"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
)

// runToolHooked runs one call on the worker as the in-process loop runs it
// (docs/loop.md, rule 9): the workspace's tool_call pre hooks (transforms
// and observers first, then guards: any deny wins and the call does not
// run), the tool, then the tool_call post transforms and observers, which
// may rewrite the result. These are the agent file's preToolUse and
// postToolUse hooks and the program's own; they run here, on the worker,
// because they read files and run commands (docs/durable.md).
func runToolHooked(ctx context.Context, eng *agent.Engine, hooks []agent.Hook, in ToolCallInput) agent.ToolOutput {
	call := in.Call
	pay := func(ph agent.Phase, res *llm.Block) *agent.Payload {
		return &agent.Payload{Stage: agent.StageToolCall, Phase: ph, CorrelationID: in.CorrelationID, Turn: &in.Turn, ToolCall: &call, ToolResult: res}
	}
	for _, guards := range []bool{false, true} {
		for _, h := range hooks {
			if h.Stage != agent.StageToolCall || h.Phase != agent.PhasePre || (h.Kind == agent.HookGuard) != guards {
				continue
			}
			v, err := h.Func(ctx, pay(agent.PhasePre, nil))
			if !guards {
				continue // a failed transform or observer leaves the call as it was
			}
			if err != nil && v.Reason == "" {
				v.Reason = err.Error()
			}
			if v.Deny || err != nil {
				return agent.ToolOutput{Result: llm.ToolResultBlock(call.ID, fmt.Sprintf("tool call denied: denied by hook %s: %s", h.Name, v.Reason), true)}
			}
		}
	}
	call.ID = in.Call.ID // a transform may not change which call this is
	out := eng.RunTool(ctx, agent.Step{Kind: agent.StepRunTool, CorrelationID: in.CorrelationID, Turn: in.Turn, Call: &call})
	for _, h := range hooks {
		if h.Stage == agent.StageToolCall && h.Phase == agent.PhasePost && h.Kind != agent.HookGuard {
			_, _ = h.Func(ctx, pay(agent.PhasePost, &out.Result)) // as in process: a failing post hook changes nothing
		}
	}
	out.Result.ID = in.Call.ID
	return out
}
