package strata

import (
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// LoopConfig returns the agent.Config a new loop of this workspace runs
// with in approval mode mode ("" = Options.Mode), approvals answered by
// approver (nil = none: calls the mode leaves open are refused), its
// events on bus (nil = discarded): for drivers that run the step engine's
// steps elsewhere and need the workspace's provider, tools, environment,
// hooks and permission checks on the machine that runs them (package
// durable, docs/durable.md). Each call builds a fresh layout instance and
// tool registry. It fails as NewSession does (an unknown layout, a closed
// workspace).
func (w *Workspace) LoopConfig(mode agent.Mode, approver agent.Approver, bus *event.Bus) (agent.Config, error) {
	return w.rt.LoopConfig(mode, approver, bus)
}

// PersonOnly reports whether call needs a person's approval of its own in
// this workspace (tool.Verdict.Person: a path outside the workspace, a
// write to strata's configuration, a shell configuration file): an "allow
// always" answer never covers it, and the tool runs only when its
// tool.Env.PersonApproved says a person approved that call. For drivers
// that answer approvals away from the workspace (package durable).
func (w *Workspace) PersonOnly(call llm.Block) bool { return w.rt.PersonOnly(call) }

// LoopState returns a copy of the session's loop state between prompts
// (history, loop ids, turn counter, usage, the layout's state): what a
// driver continuing the conversation elsewhere starts from. Call it while
// no prompt runs.
func (s *Session) LoopState() agent.State { return s.rt.LoopState() }

// ForkLoop returns what Fork(o) would run, without running it: the fork's
// agent.Config (the session's with o.Overrides applied; o.OnEvent is not
// used and the Config has no bus) and its starting loop state (a new loop
// continuing the session's conversation, its history, usage and layout
// state): for drivers that run a fork's steps elsewhere (package durable
// runs a workflow stage's loop in a Temporal workflow, docs/durable.md).
// It fails as Fork does.
func (s *Session) ForkLoop(o ForkOptions) (agent.Config, agent.State, error) {
	return s.rt.ForkLoop(o.Overrides)
}

// Offline reports whether the workspace's provider serves scripted
// answers on 127.0.0.1 (Options.Replay, Options.Respond, the CLI's offline
// demo) rather than a model: keep-alive pings are then off unless both
// keepalive.Options.MaxPings and Interval are given (keepalive.Resolve),
// for drivers that ping away from the workspace (package durable).
func (w *Workspace) Offline() bool { return w.rt.Offline() }
