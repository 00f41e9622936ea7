package strata

import (
	"slices"

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
	w.mu.Lock()
	closed := w.closed
	w.mu.Unlock()
	if closed {
		return agent.Config{}, ErrClosed
	}
	prov, err := w.prov.client()
	if err != nil {
		return agent.Config{}, err
	}
	if mode == "" {
		mode = w.opts.Mode
	}
	return w.loopConfig(prov, w.env(w.dir), bus, mode, approver, nil)
}

// PersonOnly reports whether call needs a person's approval of its own in
// this workspace (tool.Verdict.Person: a path outside the workspace, a
// write to strata's configuration, a shell configuration file): an "allow
// always" answer never covers it, and the tool runs only when its
// tool.Env.PersonApproved says a person approved that call. For drivers
// that answer approvals away from the workspace (package durable).
func (w *Workspace) PersonOnly(call llm.Block) bool {
	return w.permissions(w.env(w.dir), w.opts.Mode, nil).verdict(call).Person
}

// LoopState returns a copy of the session's loop state between prompts
// (history, loop ids, turn counter, usage, the layout's state): what a
// driver continuing the conversation elsewhere starts from. Call it while
// no prompt runs.
func (s *Session) LoopState() agent.State {
	st := s.agent.Checkpoint()
	st.History, st.HistoryDigest = slices.Clone(s.agent.History()), ""
	return st
}
