// Package hooks runs the hooks of a kiro / Amazon Q agent config exactly as
// the agent docs specify (amazon-q-developer-cli docs/hooks.md): each hook is
// a shell command that gets the hook event as JSON on stdin, in the working
// directory, within its timeout (default 30 s):
//
//   - agentSpawn: when the agent starts; stdout of a successful hook is
//     added to the agent's context (kiro layout layer 4). Never cached.
//   - userPromptSubmit: for each prompt ({"prompt": …} in the event); stdout
//     of a successful hook goes with the user's prompt, as kiro puts it: one
//     context entry (kiro.PromptHookEntry) before the prompt's text in the
//     user message, so the context message (layer 4: agentSpawn output only)
//     stays the same from prompt to prompt.
//   - preToolUse: before a matching tool call; exit code 2 blocks the call
//     and its stderr goes to the model; other non-zero codes warn and allow.
//     A guard that does not answer blocks the call (fail closed, strata's
//     choice: kiro's docs do not say): a hook killed at its timeout, or one
//     that cannot be started, denies the call with a reason naming the hook
//     and the timeout (or the start error), which the model reads as the
//     call's tool_result.
//   - postToolUse: after a matching tool call, with tool_response.
//   - stop: when the assistant finishes responding.
//
// Successful output is cached for cache_ttl_seconds (same event and input);
// output is capped at max_output_size bytes (default 10 KiB). Other non-zero
// exit codes, and timeouts of the hooks that are not guards, are warnings
// (Options.Warn), never failures of the loop.
//
// Each hook runs as `bash -c COMMAND` in a process group of its own; at its
// timeout (or when the loop's context is cancelled) the whole group is
// killed with SIGKILL, so the background jobs a hook started die with it. A
// process that leaves the group (setsid) is beyond reach; a hook that ends
// normally keeps its background jobs (a hook may start a daemon on purpose).
package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/config"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt/kiro"
)

// DefaultMaxOutput caps a hook's captured stdout/stderr when the config sets
// no max_output_size, in bytes.
const DefaultMaxOutput = 10 << 10

// Options configure a Runner.
type Options struct {
	// Cwd is the working directory hooks run in and report.
	Cwd string
	// ToolName maps a model-facing tool name to the name hooks see and match
	// ("@server/tool" for MCP tools); nil = unchanged.
	ToolName func(string) string
	// Warn receives warnings (hook failures, timeouts); nil = dropped.
	Warn func(string)
}

// Runner runs one agent's hooks. Safe for concurrent use.
type Runner struct {
	a     *config.Agent
	o     Options
	mu    sync.Mutex
	cache map[string]cached
	now   func() time.Time
}

type cached struct {
	out     string
	expires time.Time
}

// New returns a Runner for a's hooks.
func New(a *config.Agent, o Options) *Runner {
	if o.ToolName == nil {
		o.ToolName = func(s string) string { return s }
	}
	return &Runner{a: a, o: o, cache: map[string]cached{}, now: time.Now}
}

// killGroup sends SIGKILL to the process group led by p; a group that is
// already gone (ESRCH) is not an error.
func killGroup(p *os.Process) error {
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// result is one hook run.
type result struct {
	code           int
	stdout, stderr string
	err            error // could not run, or timed out
}

// run executes h with the event on stdin.
func (r *Runner) run(ctx context.Context, h config.Hook, ev map[string]any, cacheable bool) result {
	ev["cwd"] = r.o.Cwd
	in, _ := json.Marshal(ev)
	key := h.Command + "\x00" + string(in)
	if ttl := h.CacheTTL(); cacheable && ttl > 0 {
		r.mu.Lock()
		c, ok := r.cache[key]
		r.mu.Unlock()
		if ok && r.now().Before(c.expires) {
			return result{stdout: c.out}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, h.Timeout())
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", h.Command)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process) }
	cmd.Dir = r.o.Cwd
	cmd.Stdin = bytes.NewReader(in)
	limit := DefaultMaxOutput
	if h.MaxOutputSize != nil && *h.MaxOutputSize > 0 {
		limit = int(*h.MaxOutputSize)
	}
	var so, se capped
	so.limit, se.limit = limit, limit
	cmd.Stdout, cmd.Stderr = &so, &se
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	res := result{stdout: so.String(), stderr: se.String()}
	var ee *exec.ExitError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.err = fmt.Errorf("timed out after %s", h.Timeout())
	case ctx.Err() != nil:
		res.err = fmt.Errorf("cancelled: %w", ctx.Err())
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	case err != nil:
		res.err = err
	}
	if res.err == nil && res.code == 0 && cacheable && h.CacheTTL() > 0 {
		r.mu.Lock()
		r.cache[key] = cached{out: res.stdout, expires: r.now().Add(h.CacheTTL())}
		r.mu.Unlock()
	}
	return res
}

func (r *Runner) warn(event string, h config.Hook, res result) {
	if r.o.Warn == nil {
		return
	}
	msg := res.stderr
	if res.err != nil {
		msg = res.err.Error()
	}
	r.o.Warn(fmt.Sprintf("%s hook %q failed (exit %d): %s", event, h.Command, res.code, strings.TrimSpace(msg)))
}

// outputs runs every hook of event and returns the stdout of the successful
// ones (non-empty), warning about the rest.
func (r *Runner) outputs(ctx context.Context, event string, ev func() map[string]any, cacheable bool) []string {
	var out []string
	for _, h := range r.a.Hooks[event] {
		res := r.run(ctx, h, ev(), cacheable)
		if res.err != nil || res.code != 0 {
			r.warn(event, h, res)
			continue
		}
		if s := strings.TrimSpace(res.stdout); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// AgentSpawn runs the agentSpawn hooks once and returns their outputs, for
// prompt.Context.HookOutputs.
func (r *Runner) AgentSpawn(ctx context.Context) []string {
	return r.outputs(ctx, "agentSpawn", func() map[string]any { return map[string]any{"hook_event_name": "agentSpawn"} }, false)
}

// Hooks returns the loop hooks for the agent's userPromptSubmit (a
// transform at receive_input pre: their output is put before the prompt in
// the user message), preToolUse (a guard at tool_call pre), postToolUse (an
// observer at tool_call post) and stop (an observer at render post) hooks.
func (r *Runner) Hooks() []agent.Hook {
	var out []agent.Hook
	if len(r.a.Hooks["userPromptSubmit"]) > 0 {
		out = append(out,
			agent.Hook{Name: "userPromptSubmit", Stage: agent.StageReceiveInput, Phase: agent.PhasePre, Kind: agent.HookTransform,
				Func: func(ctx context.Context, p *agent.Payload) (agent.Verdict, error) {
					outs := r.outputs(ctx, "userPromptSubmit", func() map[string]any {
						return map[string]any{"hook_event_name": "userPromptSubmit", "prompt": *p.Input}
					}, true)
					if entry := kiro.PromptHookEntry(outs); entry != "" {
						*p.Input = entry + *p.Input
					}
					return agent.Verdict{}, nil
				}})
	}
	if len(r.a.Hooks["preToolUse"]) > 0 {
		out = append(out, agent.Hook{Name: "preToolUse", Stage: agent.StageToolCall, Phase: agent.PhasePre, Kind: agent.HookGuard,
			Func: func(ctx context.Context, p *agent.Payload) (agent.Verdict, error) {
				return r.preToolUse(ctx, *p.ToolCall), nil
			}})
	}
	if len(r.a.Hooks["postToolUse"]) > 0 {
		out = append(out, agent.Hook{Name: "postToolUse", Stage: agent.StageToolCall, Phase: agent.PhasePost, Kind: agent.HookObserver,
			Func: func(ctx context.Context, p *agent.Payload) (agent.Verdict, error) {
				r.postToolUse(ctx, *p.ToolCall, *p.ToolResult)
				return agent.Verdict{}, nil
			}})
	}
	if len(r.a.Hooks["stop"]) > 0 {
		out = append(out, agent.Hook{Name: "stop", Stage: agent.StageRender, Phase: agent.PhasePost, Kind: agent.HookObserver,
			Func: func(ctx context.Context, _ *agent.Payload) (agent.Verdict, error) {
				r.outputs(ctx, "stop", func() map[string]any { return map[string]any{"hook_event_name": "stop"} }, true)
				return agent.Verdict{}, nil
			}})
	}
	return out
}

func (r *Runner) toolEvent(event string, call llm.Block) map[string]any {
	var input any = map[string]any{}
	_ = json.Unmarshal(call.Input, &input)
	return map[string]any{"hook_event_name": event, "tool_name": r.o.ToolName(call.Name), "tool_input": input}
}

// preToolUse runs the matching preToolUse hooks in order: the first exit
// code 2 denies the call with the hook's stderr as the reason, and so does
// the first hook that did not answer (timed out, cancelled, or could not
// start), with a reason naming it.
func (r *Runner) preToolUse(ctx context.Context, call llm.Block) agent.Verdict {
	name := r.o.ToolName(call.Name)
	for _, h := range r.a.Hooks["preToolUse"] {
		if !r.a.HookMatches(h, name) {
			continue
		}
		res := r.run(ctx, h, r.toolEvent("preToolUse", call), true)
		switch {
		case res.err == nil && res.code == 2:
			reason := strings.TrimSpace(res.stderr)
			if reason == "" {
				reason = "blocked by a preToolUse hook"
			}
			return agent.Verdict{Deny: true, Reason: reason}
		case res.err != nil:
			return agent.Verdict{Deny: true, Reason: fmt.Sprintf(
				"the preToolUse hook %q did not answer: %v (a guard that does not answer blocks the call)", h.Command, res.err)}
		case res.code != 0:
			r.warn("preToolUse", h, res)
		}
	}
	return agent.Verdict{}
}

// postToolUse runs the matching postToolUse hooks with the tool's response.
func (r *Runner) postToolUse(ctx context.Context, call, result llm.Block) {
	name := r.o.ToolName(call.Name)
	var texts []string
	for _, b := range result.Content {
		texts = append(texts, b.Text)
	}
	for _, h := range r.a.Hooks["postToolUse"] {
		if !r.a.HookMatches(h, name) {
			continue
		}
		ev := r.toolEvent("postToolUse", call)
		ev["tool_response"] = map[string]any{"success": !result.IsError, "result": texts}
		if res := r.run(ctx, h, ev, true); res.err != nil || res.code != 0 {
			r.warn("postToolUse", h, res)
		}
	}
}

// capped keeps the first limit bytes written and notes the truncation.
type capped struct {
	buf   bytes.Buffer
	limit int
	cut   bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.limit - c.buf.Len(); room < len(p) {
		c.cut = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *capped) String() string {
	if c.cut {
		return c.buf.String() + fmt.Sprintf("\n[output truncated at %d bytes]", c.limit)
	}
	return c.buf.String()
}
