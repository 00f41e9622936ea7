package workflow

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
)

// authority is a stage's approval of its loop's tool calls, in place of the
// mode gate (agent.Overrides.Authority; docs/workflows.md, "authority"):
// a call inside the stage's allowedTools, of the completion tool, or one a
// grantStageTool token covers is approved; any other call asks the
// interactor, and without a grant it is blocked as GrantDenied. The agent's
// own tools still bound what a stage may use, and guard hooks still judge
// approved calls.
type authority struct {
	r     *runner
	ctx   context.Context
	stage *Stage

	mu      sync.Mutex
	tokens  map[string]int  // calls left per tool (grants)
	granted map[string]bool // tools granted for the rest of the stage
}

func (r *runner) newAuthority(ctx context.Context, s *Stage) *authority {
	a := &authority{r: r, ctx: ctx, stage: s, tokens: map[string]int{}, granted: map[string]bool{}}
	for _, g := range s.Grants {
		a.tokens[g.Tool] += g.Uses
	}
	return a
}

// inEnvelope reports whether name is among the stage's allowedTools.
func (a *authority) inEnvelope(name string) bool {
	return name == CompletionTool || slices.Contains(a.stage.AllowedTools, "*") || slices.Contains(a.stage.AllowedTools, name)
}

// offered reports whether the model is offered tool name: the envelope,
// tools granted for the stage, and tools a token still covers.
func (a *authority) offered(name string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.inEnvelope(name) || a.granted[name] || a.tokens[name] > 0
}

// manifestHook narrows the tool manifest of each request to what the
// stage offers (a transform at compose_request pre).
func (a *authority) manifestHook() agent.Hook {
	return agent.Hook{Name: "workflow stage " + a.stage.Name + " tools", Stage: agent.StageComposeRequest, Phase: agent.PhasePre, Kind: agent.HookTransform,
		Func: func(ctx context.Context, p *agent.Payload) (agent.Verdict, error) {
			if p.Context != nil {
				p.Context.Tools = slices.DeleteFunc(slices.Clone(p.Context.Tools), func(t llm.ToolSpec) bool { return !a.offered(t.Name) })
			}
			return agent.Verdict{}, nil
		}}
}

// decide is the SM's decision for one call (agent.Config.Authority).
func (a *authority) decide(call llm.Block) (by, reason string) {
	s := a.stage
	a.mu.Lock()
	switch {
	case a.inEnvelope(call.Name):
		a.mu.Unlock()
		return "workflow stage " + s.Name + ": allowedTools", ""
	case a.granted[call.Name]:
		a.mu.Unlock()
		return "workflow stage " + s.Name + ": granted for the stage", ""
	case a.tokens[call.Name] > 0:
		a.tokens[call.Name]--
		a.mu.Unlock()
		a.r.emit(a.ctx, Event{Kind: StageGranted, Stage: s.Name, Tool: call.Name, Outcome: Granted, Reason: "grantStageTool token"})
		return "workflow stage " + s.Name + ": grantStageTool token", ""
	}
	a.mu.Unlock()
	deny := func(why string) (string, string) {
		a.r.emit(a.ctx, Event{Kind: StageGranted, Stage: s.Name, Tool: call.Name, Outcome: GrantDenied, Reason: why})
		return "", fmt.Sprintf("GrantDenied: tool %q is outside stage %q's allowedTools (%s)", call.Name, s.Name, why)
	}
	if a.r.opts.Interactor == nil {
		return deny("no interactor is active")
	}
	ans, err := a.r.opts.Interactor.GrantStageTool(a.ctx, GrantRequest{Workflow: a.r.def.Name, Stage: s.Name, Call: call})
	switch {
	case err != nil:
		return deny("the grant interaction failed: " + err.Error())
	case ans == GrantOnce || ans == GrantStage:
		if ans == GrantStage {
			a.mu.Lock()
			a.granted[call.Name] = true
			a.mu.Unlock()
		}
		a.r.emit(a.ctx, Event{Kind: StageGranted, Stage: s.Name, Tool: call.Name, Outcome: Granted, Reason: "interactor: " + string(ans)})
		return "workflow stage " + s.Name + ": grantStageTool (" + string(ans) + ")", ""
	case ans == GrantDeferred:
		return deny("the grant was deferred")
	}
	return deny("the grant was denied")
}
