package wsrt

import (
	"slices"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// LoopConfig implements strata.Workspace.LoopConfig (documented there).
func (w *Workspace) LoopConfig(mode agent.Mode, approver agent.Approver, bus *event.Bus) (agent.Config, error) {
	w.mu.Lock()
	closed := w.closed
	w.mu.Unlock()
	if closed {
		return agent.Config{}, ErrClosed
	}
	prov, err := w.client()
	if err != nil {
		return agent.Config{}, err
	}
	if mode == "" {
		mode = w.opts.Mode
	}
	return w.loopConfig(prov, w.env(w.dir), bus, mode, approver, nil)
}

// PersonOnly implements strata.Workspace.PersonOnly (documented there).
func (w *Workspace) PersonOnly(call llm.Block) bool {
	return w.allowlist(w.env(w.dir), w.opts.Mode, nil).Verdict(call).Person
}

// LoopState implements strata.Session.LoopState (documented there).
func (s *Session) LoopState() agent.State {
	st := s.agent.Checkpoint()
	st.History, st.HistoryDigest = slices.Clone(s.agent.History()), ""
	return st
}

// Offline implements strata.Workspace.Offline (documented there).
func (w *Workspace) Offline() bool { return w.prov.ReplayURL() != "" }
