package strata

import "context"

// startTrust maps each agent file of a workspace (absolute path; "" for
// strata's default agent) to the TrustRequest.Hash it had when the
// workspace opened: its commands and permissions as the person who
// started strata saw them (docs/security.md, "Who is trusted for what").
type startTrust map[string]string

// snapshotAgents records the trust hash of the opened agent top (hash) and
// of every agent file FindAgents lists for dir, as they are now. A file
// that does not load is left out: if it loads later, it is new.
func snapshotAgents(dir string, top *Agent, hash string, o Options) startTrust {
	s := startTrust{agentPath(top): hash}
	for _, f := range FindAgents(dir) {
		if _, ok := s[f.Path]; ok {
			continue
		}
		if a, err := LoadAgent(f.Path, dir); err == nil {
			s[agentPath(a)] = agentTrustRequest(dir, a, o).Hash
		}
	}
	return s
}

// agentPath is the agent file a loaded agent came from ("" for the default
// agent).
func agentPath(a *Agent) string {
	if a == nil || a.Config == nil {
		return ""
	}
	return a.Config.Path
}

// checkTrust asks Options.Trust about the loaded agent's commands (and,
// when it changed since the workspace opened, its permissions) and records
// the agent's trust hash. After Open, a request whose hash is not the one
// the file had at Open is Changed: --trust does not cover it.
func (w *Workspace) checkTrust(ctx context.Context) error {
	r := agentTrustRequest(w.dir, w.agent, w.opts)
	if w.started != nil {
		r.Changed = w.started[agentPath(w.agent)] != r.Hash
	}
	if err := CheckTrust(ctx, w.opts.Trust, r); err != nil {
		return err
	}
	w.agentHash = r.Hash
	return nil
}
