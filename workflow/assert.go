package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/tool"
)

// checkGate runs a stage's check gate: the if template must render to
// "true" and the command must exit 0. It returns whether it passed and
// why not (or what the command printed).
func (r *runner) checkGate(ctx context.Context, s *Stage, sc *StageContext) (bool, string, error) {
	if s.check != nil {
		out, err := render(s.check, sc)
		if err != nil {
			return false, err.Error(), nil
		}
		if strings.TrimSpace(out) != "true" {
			return false, fmt.Sprintf("if rendered %q, not \"true\"", strings.TrimSpace(out)), nil
		}
	}
	if s.Check.Command != "" {
		ok, out, err := r.shell(ctx, s.Check.Command)
		if err != nil || !ok {
			return false, out, err
		}
		return true, out, nil
	}
	return true, "", nil
}

// shell runs command in the workspace directory through the execute_bash
// tool's runner (its process group, kill on cancel, output capture). The
// command is the definition's, not the model's, so the agent's command
// policy for the model does not apply. It reports whether the command
// exited 0, and its output.
func (r *runner) shell(ctx context.Context, command string) (bool, string, error) {
	in, _ := json.Marshal(map[string]string{"command": command})
	res, err := (&tool.ExecuteBash{}).Run(ctx, &tool.Env{Workdir: r.ws.Dir()}, in)
	if err != nil {
		return false, "", fmt.Errorf("command %q: %w", command, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(c.Text)
	}
	out := b.String()
	return strings.HasPrefix(out, "exit status: 0\n") || out == "exit status: 0", out, nil
}

// assert is Assert: on the finalized stage-local transcript and the
// completion it decides ok, retry or fail. Without a completion (the turn
// cap hit, or the model stopped without calling the completion tool), or
// when a command or the judge does not pass, the outcome is retry while
// the stage's retry budget lasts, then fail.
func (r *runner) assert(ctx context.Context, s *Stage, sc *StageContext, a *Acted) (string, string, error) {
	var why string
	switch {
	case a.Completion == nil && a.CapHit:
		why = fmt.Sprintf("the turn cap was hit (capHit) before %s was called", CompletionTool)
	case a.Completion == nil:
		why = fmt.Sprintf("the stage ended without calling %s", CompletionTool)
	}
	if why == "" && s.Assert != nil && s.Assert.Command != "" {
		ok, out, err := r.shell(ctx, s.Assert.Command)
		if err != nil {
			return "", "", err
		}
		if !ok {
			why = fmt.Sprintf("assert command %q failed:\n%s", s.Assert.Command, out)
		}
	}
	if why == "" && s.judge != nil {
		ok, reason, err := r.judge(ctx, s, sc, a)
		if err != nil {
			return "", "", err
		}
		if !ok {
			why = "the judge: " + reason
		}
	}
	if why == "" {
		return OK, "", nil
	}
	r.stMu.Lock()
	defer r.stMu.Unlock()
	if r.st.RetriesUsed[s.Name] < s.Retries {
		r.st.RetriesUsed[s.Name]++
		return Retry, why, nil
	}
	return Fail, why, nil
}

// verdict is the judge's completion.
type verdict struct {
	OK     bool   `json:"ok" jsonschema:"whether the stage's result meets the instructions"`
	Reason string `json:"reason" jsonschema:"why, in a sentence"`
}

// judge asks the model, on a fork of its own with only the verdict tool,
// whether the stage's result passes.
func (r *runner) judge(ctx context.Context, s *Stage, sc *StageContext, a *Acted) (bool, string, error) {
	instr, err := render(s.judge, sc)
	if err != nil {
		return false, "", err
	}
	var mu sync.Mutex
	var got *verdict
	vt := tool.Typed("verdict", "Give your verdict on the stage's result.", tool.Traits{Effect: tool.Idempotent, EndsTurn: true, PreApproved: true},
		func(ctx context.Context, c tool.Call, in verdict) (string, error) {
			mu.Lock()
			got = &in
			mu.Unlock()
			return "verdict recorded", nil
		})
	system := "You judge the result of a workflow stage. " + instr + "\nAnswer only by calling the verdict tool."
	only := func(name string) bool { return name == "verdict" }
	if r.sess == nil {
		return false, "", fmt.Errorf("stage %s has a judge, which runs on a fork of the session, and no session was given", s.Name)
	}
	r.forkMu.Lock()
	fork, err := r.sess.Fork(ctx, strata.ForkOptions{Overrides: agent.Overrides{System: &system, Tools: only, Extra: []tool.Tool{vt}, MaxTurns: 2,
		Authority: func(llm.Block) (string, string) { return "workflow judge", "" }}})
	r.forkMu.Unlock()
	if err != nil {
		return false, "", err
	}
	defer fork.Close()
	msg := fmt.Sprintf("Stage %q handed back:\n%s\n\nIts last message:\n%s", s.Name, a.Completion, lastText(a.Transcript))
	if _, err := fork.Prompt(ctx, msg); err != nil && !errors.Is(err, agent.ErrMaxTurns) {
		return false, "", err
	}
	mu.Lock()
	defer mu.Unlock()
	if got == nil {
		return false, "the judge gave no verdict", nil
	}
	return got.OK, got.Reason, nil
}
