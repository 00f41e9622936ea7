package tool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/strata-agent/strata/llm"
)

// Effect says what running a tool call does to the world, for the loop's
// delivery rules: what may run again after a crash (agent.Resume) and, for
// durable drivers, what may be retried.
type Effect string

// Tool effects.
const (
	// ReadOnly tools change nothing: running a call twice is harmless
	// (fs_read, grep, glob, web_fetch, thinking, introspect, knowledge).
	ReadOnly Effect = "read_only"
	// Idempotent tools change something, but running the same call again
	// leaves the same result (writing a given content to a given file).
	Idempotent Effect = "idempotent"
	// SideEffecting tools may do something new each time they run
	// (execute_bash, use_subagent, MCP tools). The default.
	SideEffecting Effect = "side_effecting"
)

// Traits are the optional properties of a tool the loop acts on. The zero
// value is a side-effecting tool that asks like any other and lets the loop
// go on.
type Traits struct {
	// Effect is the tool's effect ("" = SideEffecting).
	Effect Effect
	// EndsTurn makes the loop stop after the round in which a call of the
	// tool ran successfully, and return its result (agent.Result.ToolResult):
	// a completion tool handing a result back to the program.
	EndsTurn bool
	// PreApproved runs the tool's calls without asking in allowlist mode,
	// like the agent file's allowedTools: for a tool the embedding program
	// trusts. Without it a program's own tool is approved like a built-in.
	PreApproved bool
}

// Retryable reports whether a call that may have run may run again: true
// for ReadOnly and Idempotent tools.
func (t Traits) Retryable() bool { return t.Effect == ReadOnly || t.Effect == Idempotent }

// TraitsReporter is implemented by tools that declare Traits.
type TraitsReporter interface {
	Traits() Traits
}

// TraitsOf returns t's Traits (the zero Traits when t declares none).
func TraitsOf(t Tool) Traits {
	if r, ok := t.(TraitsReporter); ok {
		return r.Traits()
	}
	return Traits{}
}

// WithTraits returns t declaring tr instead of its own Traits.
func WithTraits(t Tool, tr Traits) Tool { return traited{Tool: t, traits: tr} }

type traited struct {
	Tool
	traits Traits
}

func (t traited) Traits() Traits { return t.traits }

// specErr passes the wrapped tool's registration error on (see Func).
func (t traited) specErr() error {
	if s, ok := t.Tool.(interface{ specErr() error }); ok {
		return s.specErr()
	}
	return nil
}

// Traits returns the Traits of the tool registered as name (the zero
// Traits for an unknown name).
func (r *Registry) Traits(name string) Traits {
	if e, ok := r.lookup(name); ok {
		return TraitsOf(e.tool)
	}
	return Traits{}
}

// Call is what a Typed tool's function knows of the call it runs: the
// session, the tool_use id, and a way to report progress (shown to the
// person and observers as tool_execution_update events).
type Call struct {
	SessionID string
	CallID    string
	// Emit reports progress of the running call (no-op outside a loop).
	Emit func(text string)
}

// Typed returns a tool named name whose input is the Go type In and whose
// output is the Go type Out: In's JSON Schema is derived and checked as
// Func does; Out is returned to the model as its JSON encoding (a text
// tool_result); fn receives the Call it runs for. An error is returned to
// the model as an is_error tool_result. tr are the tool's Traits.
func Typed[In, Out any](name, description string, tr Traits, fn func(ctx context.Context, c Call, in In) (Out, error)) Tool {
	spec, err := inputSpec[In](name, description)
	return &typedTool[In, Out]{spec: spec, fn: fn, traits: tr, err: err}
}

type typedTool[In, Out any] struct {
	spec   llm.ToolSpec
	fn     func(context.Context, Call, In) (Out, error)
	traits Traits
	err    error
}

func (t *typedTool[In, Out]) Spec() llm.ToolSpec { return t.spec }
func (t *typedTool[In, Out]) Traits() Traits     { return t.traits }
func (t *typedTool[In, Out]) specErr() error     { return t.err }

func (t *typedTool[In, Out]) Run(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
	if t.err != nil {
		return Result{}, t.err
	}
	var in In
	if len(input) > 0 {
		if err := json.Unmarshal(input, &in); err != nil {
			return Result{}, fmt.Errorf("%s input: %w", t.spec.Name, err)
		}
	}
	c := Call{Emit: func(string) {}}
	if env != nil {
		c.SessionID, c.CallID = env.SessionID, env.CallID
		if env.Progress != nil {
			c.Emit = env.Progress
		}
	}
	out, err := t.fn(ctx, c, in)
	if err != nil {
		return Result{}, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return Result{}, fmt.Errorf("%s output: encode %T as JSON: %w", t.spec.Name, out, err)
	}
	return TextResult(string(b)), nil
}

// The built-ins that only read: a call of theirs runs again when a session
// is resumed after a crash (agent.Resume).

// Traits implements TraitsReporter: fs_read only reads.
func (*FSRead) Traits() Traits { return Traits{Effect: ReadOnly} }

// Traits implements TraitsReporter: grep only reads.
func (*Grep) Traits() Traits { return Traits{Effect: ReadOnly} }

// Traits implements TraitsReporter: glob only reads.
func (*Glob) Traits() Traits { return Traits{Effect: ReadOnly} }

// Traits implements TraitsReporter: thinking changes nothing.
func (Thinking) Traits() Traits { return Traits{Effect: ReadOnly} }

// Traits implements TraitsReporter: introspect only reads.
func (*Introspect) Traits() Traits { return Traits{Effect: ReadOnly} }

// Traits implements TraitsReporter: the knowledge tool's searches and
// listings only read; adding a source re-indexes the same files, so a
// repeated call leaves the same index.
func (*Knowledge) Traits() Traits { return Traits{Effect: Idempotent} }

// With returns a new registry holding r's tools and tools, which replace
// r's tools of the same name (a prompt's or a fork's own tools; r is not
// changed). It fails, registering nothing, when one of tools cannot be
// registered (see Register).
func (r *Registry) With(tools ...Tool) (*Registry, error) {
	out := &Registry{tools: map[string]*entry{}}
	r.mu.RLock()
	for name, e := range r.tools {
		out.tools[name] = e
	}
	r.mu.RUnlock()
	for _, t := range tools {
		if t != nil {
			delete(out.tools, t.Spec().Name)
		}
		if err := out.Register(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}
