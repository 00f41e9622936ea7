package workflow

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
)

// Authority is a stage's approval of its loop's tool calls, in place of
// the mode gate (agent.Overrides.Authority; docs/workflows.md,
// "authority"): a call inside the stage's allowedTools, of the completion
// tool, or one a grantStageTool token covers is approved; any other call
// asks the interactor, and without a grant it is blocked as GrantDenied.
// The agent's own tools still bound what a stage may use, and guard hooks
// still judge approved calls. It is pure — plain data, no I/O — so a
// driver can keep it in workflow code (package durable); the interactor
// stays with the driver (Decide says when to ask it). Its methods are safe
// for concurrent use.
type Authority struct {
	Stage        string   `json:"stage"`
	AllowedTools []string `json:"allowed_tools,omitempty"`
	// Tokens are the calls left per tool (the stage's grants); Granted the
	// tools granted for the rest of the stage execution.
	Tokens  map[string]int  `json:"tokens,omitempty"`
	Granted map[string]bool `json:"granted,omitempty"`

	mu sync.Mutex
}

// NewAuthority returns the authority of one execution of stage s: its
// allowedTools and its grants' tokens.
func NewAuthority(s *Stage) *Authority {
	a := &Authority{Stage: s.Name, AllowedTools: s.AllowedTools, Tokens: map[string]int{}, Granted: map[string]bool{}}
	for _, g := range s.Grants {
		a.Tokens[g.Tool] += g.Uses
	}
	return a
}

// inEnvelope reports whether name is among the stage's allowedTools.
func (a *Authority) inEnvelope(name string) bool {
	return name == CompletionTool || slices.Contains(a.AllowedTools, "*") || slices.Contains(a.AllowedTools, name)
}

// Offered reports whether the model is offered tool name: the envelope,
// tools granted for the stage, and tools a token still covers.
func (a *Authority) Offered(name string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.inEnvelope(name) || a.Granted[name] || a.Tokens[name] > 0
}

// ManifestHook narrows the tool manifest of each request to what the
// stage offers (a transform at compose_request pre; no I/O).
func (a *Authority) ManifestHook() agent.Hook {
	return agent.Hook{Name: "workflow stage " + a.Stage + " tools", Stage: agent.StageComposeRequest, Phase: agent.PhasePre, Kind: agent.HookTransform,
		Func: func(ctx context.Context, p *agent.Payload) (agent.Verdict, error) {
			if p.Context != nil {
				p.Context.Tools = slices.DeleteFunc(slices.Clone(p.Context.Tools), func(t llm.ToolSpec) bool { return !a.Offered(t.Name) })
			}
			return agent.Verdict{}, nil
		}}
}

// Decide is the authority's decision for call without the interactor: by
// names what approved it (allowedTools, a grant for the stage, a token,
// which it uses up: then ev is the StageGranted event to emit), or ask
// says the call is outside the envelope with nothing covering it: the
// driver asks its interactor and answers with Grant, or with Deny.
func (a *Authority) Decide(call llm.Block) (by string, ask bool, ev *Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.inEnvelope(call.Name):
		return "workflow stage " + a.Stage + ": allowedTools", false, nil
	case a.Granted[call.Name]:
		return "workflow stage " + a.Stage + ": granted for the stage", false, nil
	case a.Tokens[call.Name] > 0:
		a.Tokens[call.Name]--
		return "workflow stage " + a.Stage + ": grantStageTool token", false,
			&Event{Kind: StageGranted, Stage: a.Stage, Tool: call.Name, Outcome: Granted, Reason: "grantStageTool token"}
	}
	return "", true, nil
}

// Grant records an interactor's grant of call (GrantOnce or GrantStage:
// the tool is granted for the rest of the stage) and returns who approved
// it and the StageGranted event.
func (a *Authority) Grant(call llm.Block, ans GrantAnswer) (by string, ev Event) {
	if ans == GrantStage {
		a.mu.Lock()
		a.Granted[call.Name] = true
		a.mu.Unlock()
	}
	return "workflow stage " + a.Stage + ": grantStageTool (" + string(ans) + ")",
		Event{Kind: StageGranted, Stage: a.Stage, Tool: call.Name, Outcome: Granted, Reason: "interactor: " + string(ans)}
}

// Deny returns the reason call is blocked (GrantDenied, why) and the
// StageGranted event saying so.
func (a *Authority) Deny(call llm.Block, why string) (reason string, ev Event) {
	return fmt.Sprintf("GrantDenied: tool %q is outside stage %q's allowedTools (%s)", call.Name, a.Stage, why),
		Event{Kind: StageGranted, Stage: a.Stage, Tool: call.Name, Outcome: GrantDenied, Reason: why}
}

// Answer takes the interactor's answer to call (err: the interaction
// failed): GrantOnce and GrantStage approve it (Grant); GrantDeferred, a
// denial or a failure block it (Deny). It returns who approved it or the
// reason it is blocked, and the StageGranted event.
func (a *Authority) Answer(call llm.Block, ans GrantAnswer, err error) (by, reason string, ev Event) {
	switch {
	case err != nil:
		reason, ev = a.Deny(call, "the grant interaction failed: "+err.Error())
	case ans == GrantOnce || ans == GrantStage:
		by, ev = a.Grant(call, ans)
	case ans == GrantDeferred:
		reason, ev = a.Deny(call, "the grant was deferred")
	default:
		reason, ev = a.Deny(call, "the grant was denied")
	}
	return by, reason, ev
}

// decider is the in-process authority of a stage's loop
// (agent.Config.Authority): a's decision, the interactor asked when a
// says so, the StageGranted events emitted.
func (r *runner) decider(ctx context.Context, a *Authority) func(llm.Block) (by, reason string) {
	return func(call llm.Block) (string, string) {
		by, ask, ev := a.Decide(call)
		if ev != nil {
			r.emit(ctx, *ev)
		}
		if !ask {
			return by, ""
		}
		if r.opts.Interactor == nil {
			reason, dev := a.Deny(call, "no interactor is active")
			r.emit(ctx, dev)
			return "", reason
		}
		ans, err := r.opts.Interactor.GrantStageTool(ctx, GrantRequest{Workflow: r.def.Name, Stage: a.Stage, Call: call})
		by, reason, aev := a.Answer(call, ans, err)
		r.emit(ctx, aev)
		return by, reason
	}
}
