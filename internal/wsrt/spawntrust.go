package wsrt

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/strata-agent/strata/agentfile"

	"github.com/strata-agent/strata/config"
)

// startTrust maps each agent file of a workspace (absolute path; "" for
// strata's default agent) to the trust.Request.Hash it had when the
// workspace opened: its commands and permissions as the person who
// started strata saw them (docs/security.md, "Who is trusted for what").
type startTrust map[string]string

// snapshotAgents records the trust hash of the opened agent top (hash) and
// of every agent file FindAgents lists for dir, as they are now. A file
// that does not load is left out: if it loads later, it is new.
func snapshotAgents(dir string, top *agentfile.File, hash string, o Options) startTrust {
	s := startTrust{agentPath(top): hash}
	for _, f := range agentfile.Find(dir) {
		if _, ok := s[f.Path]; ok {
			continue
		}
		if path, hash, err := agentTrustHash(f.Path, dir, o); err == nil {
			s[path] = hash
		}
	}
	return s
}

// errNotRead is what noRead returns.
var errNotRead = errors.New("not read: only the agent's commands and permissions are looked at")

// noRead reads no file: loading an agent only for its trust hash needs its
// hooks, permissions and MCP servers, none of the text it puts in context.
func noRead(string) ([]byte, error) { return nil, errNotRead }

// agentTrustHash loads and validates the agent file at path for the
// workspace dir without reading its prompt, resources, skills or steering,
// and returns its absolute path and trust.Request.Hash (the hash loadAgent
// computes for the same file). Errors are LoadAgent's.
func agentTrustHash(path, dir string, o Options) (string, string, error) {
	a, err := config.LoadAgentWith(path, config.LoadOptions{ReadFile: noRead})
	if err != nil {
		return "", "", &ConfigError{Err: err}
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	r, err := config.ResolveWith(a, root, config.ResolveOptions{ReadFile: noRead, NoDefaultSkills: true})
	if err != nil {
		return "", "", &ConfigError{Err: err}
	}
	return a.Path, agentTrustRequest(dir, &agentfile.File{Config: a, Resolved: r}, o).Hash, nil
}

// agentPath is the agent file a loaded agent came from ("" for the default
// agent).
func agentPath(a *agentfile.File) string {
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
	if w.preTrusted == "" || w.preTrusted != r.Hash { // a swap asked already (the file did not change since)
		if err := checkTrust(ctx, w.opts.Trust, r); err != nil {
			return err
		}
	}
	w.agentHash = r.Hash
	return nil
}
