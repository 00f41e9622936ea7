package wsrt

import (
	"context"
	"errors"
	"fmt"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/mcp"
	"github.com/strata-agent/strata/tool"
)

// ErrPromptRunning is strata.ErrPromptRunning (documented there).
var ErrPromptRunning = errors.New("strata: a prompt is running")

// loopParts are what a session's loop is built from besides the
// workspace's agent: kept so an agent swap can build the new agent's loop
// on the same tool environment, approval mode, approver and session MCP
// servers.
type loopParts struct {
	env      *tool.Env
	mode     agent.Mode
	approver agent.Approver
	extra    []tool.Tool  // the session's own MCP tools
	own      *mcp.Manager // the session's own MCP servers (nil = none)
	over     agent.Overrides
}

// SwapAgent implements strata.Session.SwapAgent (documented there).
func (s *Session) SwapAgent(ctx context.Context, ref string) error {
	parts, err := s.idle(fmt.Sprintf("swap to agent %q", ref))
	if err != nil {
		return err
	}
	w := s.ws
	if err := w.swapAgent(ctx, ref); err != nil {
		return err
	}
	cfg, err := s.ownLoopConfig(parts)
	if err != nil {
		return err
	}
	// The conversation goes on from the loop in memory, not from the store:
	// a prompt that stopped before its first turn left its user message in
	// the history and no loop (or no turn of it) stored.
	a, err := s.agent.Continue(cfg)
	if err != nil {
		return fmt.Errorf("swap to agent %q: continue loop %s: %w", ref, s.agent.LoopID(), err)
	}
	s.agent = a
	s.mcp = nil
	if w.mcp != nil {
		s.mcp = append(s.mcp, w.mcp)
	}
	if parts.own != nil {
		s.mcp = append(s.mcp, parts.own)
	}
	return nil
}

// swapAgent replaces the workspace's agent with ref: load and check it,
// release everything of the old agent (agentClosers: MCP servers,
// knowledge index, sub-agent workspaces), then activate the new one.
func (w *Workspace) swapAgent(ctx context.Context, ref string) error {
	next, err := loadAgentFile(w.dir, ref)
	if err != nil {
		return err
	}
	path := next.Config.Path
	// Trust is decided before anything of the old agent stops: a refused
	// agent leaves the workspace as it was (its permissions never apply).
	r := agentTrustRequest(w.dir, next, w.opts)
	r.Changed = w.started != nil && w.started[agentPath(next)] != r.Hash
	if err := checkTrust(ctx, w.opts.Trust, r); err != nil {
		return fmt.Errorf("swap to agent %s: %w", path, err)
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	old := w.agentClosers
	w.agentClosers, w.children = nil, nil
	w.mu.Unlock()
	for i := len(old) - 1; i >= 0; i-- {
		old[i]()
	}
	w.opts.Agent = path
	w.agent, w.tools, w.mcp, w.mcpNames, w.hooks = nil, nil, nil, nil, nil
	w.preTrusted = r.Hash // asked just above: not asked twice
	defer func() { w.preTrusted = "" }()
	if err := w.loadAgent(ctx); err != nil {
		return fmt.Errorf("swap to agent %s: %w", path, err)
	}
	if m := w.agent.Config.Model; m != "" && w.opts.Model == "" && w.opts.Provider == nil {
		w.prov.SetAgentModel(m)
	}
	return nil
}

// Workspace implements strata.Session.Workspace (documented there).
func (s *Session) Workspace() *Workspace { return s.ws }

// idle returns the session's loop parts when no prompt runs: ErrClosed
// after Close; while a prompt runs, an error naming what was asked and
// wrapping ErrPromptRunning.
func (s *Session) idle(what string) (loopParts, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return loopParts{}, ErrClosed
	case s.stop != nil:
		return loopParts{}, fmt.Errorf("%s: %w; wait for it to end or cancel it", what, ErrPromptRunning)
	}
	return s.parts, nil
}

// loopConfigOn is the configuration of a new loop of the session on bus:
// the workspace's loop configuration with the session's environment,
// approvals, own MCP tools and overrides (parts).
func (s *Session) loopConfigOn(parts loopParts, bus *event.Bus) (agent.Config, error) {
	prov, err := s.ws.client()
	if err != nil {
		return agent.Config{}, err
	}
	cfg, err := s.ws.loopConfig(prov, parts.env, bus, parts.mode, parts.approver, parts.extra)
	if err != nil {
		return cfg, err
	}
	return cfg.With(parts.over)
}

// ownLoopConfig is loopConfigOn for the session's own loop (an agent swap,
// /clear): on the session's bus, its provider watched for keep-alive pings
// and its tl;drs stored.
func (s *Session) ownLoopConfig(parts loopParts) (agent.Config, error) {
	cfg, err := s.loopConfigOn(parts, s.bus)
	if err != nil {
		return cfg, err
	}
	cfg.Provider = s.keepAlive(cfg.Provider, cfg.Model, cfg.Layout)
	s.storeTLDRs(&cfg)
	return cfg, nil
}
