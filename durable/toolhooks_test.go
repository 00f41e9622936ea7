package durable

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/session"
)

// toolHooks are a guard refusing commands that mention "secret" and a
// post transform marking every result as audited.
func toolHooks() []agent.Hook {
	return []agent.Hook{
		{Name: "no-secrets", Stage: agent.StageToolCall, Phase: agent.PhasePre, Kind: agent.HookGuard,
			Func: func(_ context.Context, p *agent.Payload) (agent.Verdict, error) {
				if strings.Contains(string(p.ToolCall.Input), "secret") {
					return agent.Verdict{Deny: true, Reason: "mentions a secret"}, nil
				}
				return agent.Verdict{}, nil
			}},
		{Name: "audit", Stage: agent.StageToolCall, Phase: agent.PhasePost, Kind: agent.HookTransform,
			Func: func(_ context.Context, p *agent.Payload) (agent.Verdict, error) {
				p.ToolResult.Content = append(p.ToolResult.Content, llm.TextBlock("[audited]"))
				return agent.Verdict{}, nil
			}},
	}
}

func hookScript(t *testing.T) *model {
	return script(t,
		[]llm.Block{use("toolu_k1", "execute_bash", `{"command":"cat secret.txt"}`),
			use("toolu_k2", "execute_bash", `{"command":"echo fine >> log.txt"}`)},
		[]llm.Block{llm.TextBlock("Done.")},
	)
}

// TestToolCallHooksRunOnTheWorker: the workspace's tool_call guard and
// post transform (as kiro preToolUse/postToolUse hooks are) run with each
// call on the worker: the denied call does not run, the allowed one's
// result is transformed, and the requests equal an in-process run's.
func TestToolCallHooksRunOnTheWorker(t *testing.T) {
	dir := t.TempDir()
	inProc := hookScript(t)
	o := options(dir, inProc, session.NewMemory())
	o.Hooks = toolHooks()
	runInProcess(t, o, strata.SessionOptions{}, "Go.")
	os.Remove(filepath.Join(dir, "log.txt"))

	dur := hookScript(t)
	o = options(dir, dur, session.NewMemory())
	o.Hooks = toolHooks()
	h := newHarness(t, WorkerOptions{Options: o})
	h.prompt("Go.")
	h.run(Spec{SessionID: "s-hooks"})
	a, b := inProc.seen(), dur.seen()
	sameRequests(t, a, b)
	if len(b) != 2 || !strings.Contains(b[1], "denied by hook no-secrets: mentions a secret") || !strings.Contains(b[1], "[audited]") {
		t.Errorf("the model did not read the hooks' verdicts: %s", tail(b[len(b)-1]))
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "log.txt")); string(got) != "fine\n" {
		t.Errorf("log.txt = %q, want the allowed call's line once", got)
	}
}
