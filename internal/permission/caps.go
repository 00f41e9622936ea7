package permission

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// responseCaps enforces MaxToolCallsPerResponse and MaxSubAgentsPerResponse
// for one loop. The loop authorizes the calls of a response one at a time,
// in call order, each after the tool_call pre transforms (docs/loop.md,
// rule 9): count, a transform registered first, numbers the calls of each
// turn and records those over a limit; guard, registered first among the
// guards, refuses them before any other guard (an agent's preToolUse
// command) runs; and the loop's PreApproved and Approver are wrapped so that
// no person is asked about a call that will not run.
type responseCaps struct {
	maxCalls, maxSub int // -1 = no limit
	mu               sync.Mutex
	turn             event.TurnID
	calls, subs      int
	over             map[string]string // call id → why it does not run, this turn
}

// CapResponses installs on cfg the per-response caps: at most maxCalls
// tool calls and maxSub use_subagent calls of one model response run (-1 =
// no limit; a no-op when both are unlimited). A call over a cap gets an
// is_error tool_result saying why and what to do, and no person is asked
// about it (docs/security.md, "Limits you can set").
func CapResponses(cfg *agent.Config, maxCalls, maxSub int) {
	c := &responseCaps{maxCalls: maxCalls, maxSub: maxSub}
	if c.maxCalls < 0 && c.maxSub < 0 {
		return
	}
	count := agent.Hook{Name: "response limits", Stage: agent.StageToolCall, Phase: agent.PhasePre, Kind: agent.HookObserver,
		Func: func(_ context.Context, p *agent.Payload) (agent.Verdict, error) {
			c.count(p.Turn, p.ToolCall)
			return agent.Verdict{}, nil
		}}
	guard := agent.Hook{Name: "response limits", Stage: agent.StageToolCall, Phase: agent.PhasePre, Kind: agent.HookGuard,
		Func: func(_ context.Context, p *agent.Payload) (agent.Verdict, error) {
			if r := c.reason(p.ToolCall); r != "" {
				return agent.Verdict{Deny: true, Reason: r}, nil
			}
			return agent.Verdict{}, nil
		}}
	cfg.Hooks = append([]agent.Hook{count, guard}, cfg.Hooks...)
	pre := cfg.PreApproved
	cfg.PreApproved = func(b llm.Block) bool {
		// Pre-approved so that nobody is asked: the guard refuses it.
		return c.reason(&b) != "" || pre != nil && pre(b)
	}
	if cfg.Approver != nil {
		cfg.Approver = capApprover{c, cfg.Approver}
	}
}

// count numbers one call of turn and records it when it is over a limit.
func (c *responseCaps) count(turn *event.TurnID, call *llm.Block) {
	if turn == nil || call == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if *turn != c.turn || c.over == nil {
		c.turn, c.calls, c.subs, c.over = *turn, 0, 0, map[string]string{}
	}
	c.calls++
	if call.Name == agent.SubAgentToolName {
		c.subs++
	}
	switch {
	case c.maxCalls >= 0 && c.calls > c.maxCalls:
		c.over[call.ID] = fmt.Sprintf("tool call not run: this response has more than %d tool calls, the limit per response "+
			"(Options.MaxToolCallsPerResponse, config key toolCallsPerResponse); make the remaining calls in your next response", c.maxCalls)
	case c.maxSub >= 0 && call.Name == agent.SubAgentToolName && c.subs > c.maxSub:
		c.over[call.ID] = fmt.Sprintf("sub-agent not started: this response has more than %d use_subagent calls, the limit per response "+
			"(Options.MaxSubAgentsPerResponse, config key subAgentsPerResponse); start the others in your next response", c.maxSub)
	}
}

// reason is why call does not run ("" when it may).
func (c *responseCaps) reason(call *llm.Block) string {
	if call == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.over[call.ID]
}

// capApprover answers calls over a limit itself (rejected, with the
// reason) and asks inner about the others.
type capApprover struct {
	c     *responseCaps
	inner agent.Approver
}

// Approve implements agent.Approver.
func (a capApprover) Approve(ctx context.Context, r agent.ApprovalRequest) (agent.Decision, error) {
	if why := a.c.reason(&r.Call); why != "" {
		return agent.RejectOnce, errors.New(why)
	}
	return a.inner.Approve(ctx, r)
}
