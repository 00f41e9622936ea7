package wsrt

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// Per-prompt settings, forks and a front end's own events: what a front end
// or a workflow stage sets for itself on top of the session
// (docs/architecture.md, "drivers").

// PromptWithOverrides implements strata.Session.PromptWithOverrides (documented there).
func (s *Session) PromptWithOverrides(ctx context.Context, text string, o agent.Overrides, attachments ...llm.Block) (*agent.Result, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	return s.run(ctx, func(ctx context.Context) (*agent.Result, error) {
		return s.agent.PromptWithOverrides(ctx, text, attachments, o)
	})
}

// Emit implements strata.Session.Emit (documented there).
func (s *Session) Emit(e event.Event) error {
	if !strings.Contains(string(e.Kind), ".") {
		return fmt.Errorf("session %s: emit event kind %q: a front end's own kinds are namespaced with a dot (e.g. \"acme.note\"); the loop's kinds are its own", s.id, e.Kind)
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return ErrClosed
	}
	s.bus.Emit(e)
	return nil
}

// ForkOptions mirrors strata.ForkOptions field for field (a type conversion turns one into
// the other); strata.ForkOptions documents the fields.
type ForkOptions struct {
	Overrides agent.Overrides
	OnEvent   event.Observer
}

// Fork is strata.Fork (documented there).
type Fork struct {
	agent *agent.Agent
	bus   *event.Bus
}

// Fork implements strata.Session.Fork (documented there).
func (s *Session) Fork(ctx context.Context, o ForkOptions) (*Fork, error) {
	bus := event.NewBus()
	if o.OnEvent != nil {
		bus.SubscribeSync(o.OnEvent)
	}
	a, _, err := s.forkAgent(o.Overrides, bus)
	if err != nil {
		bus.Close()
		return nil, err
	}
	return &Fork{agent: a, bus: bus}, nil
}

// ForkLoop implements strata.Session.ForkLoop (documented there).
func (s *Session) ForkLoop(o agent.Overrides) (agent.Config, agent.State, error) {
	a, cfg, err := s.forkAgent(o, nil)
	if err != nil {
		return agent.Config{}, agent.State{}, err
	}
	st := a.Checkpoint()
	st.History, st.HistoryDigest = slices.Clone(a.History()), ""
	return cfg, st, nil
}

// forkAgent is the agent of a fork of the session with overrides o, its
// events on bus, and its configuration.
func (s *Session) forkAgent(o agent.Overrides, bus *event.Bus) (*agent.Agent, agent.Config, error) {
	parts, err := s.idle("fork session " + s.id)
	if err != nil {
		return nil, agent.Config{}, err
	}
	cfg, err := s.loopConfigOn(parts, bus)
	if err == nil {
		cfg, err = cfg.With(o)
	}
	var a *agent.Agent
	if err == nil {
		a, err = s.agent.Fork(cfg)
	}
	if err != nil {
		return nil, agent.Config{}, fmt.Errorf("fork session %s: %w", s.id, err)
	}
	return a, cfg, nil
}

// Prompt implements strata.Fork.Prompt (documented there).
func (f *Fork) Prompt(ctx context.Context, text string, attachments ...llm.Block) (*agent.Result, error) {
	return f.agent.PromptWith(ctx, text, attachments)
}

// History implements strata.Fork.History (documented there).
func (f *Fork) History() []llm.Message { return f.agent.History() }

// LoopID implements strata.Fork.LoopID (documented there).
func (f *Fork) LoopID() string { return f.agent.LoopID() }

// Usage implements strata.Fork.Usage (documented there).
func (f *Fork) Usage() llm.Usage { return f.agent.Usage() }

// Close implements strata.Fork.Close (documented there).
func (f *Fork) Close() error {
	f.bus.Close()
	return nil
}

// Clear implements strata.Session.Clear (documented there).
func (s *Session) Clear(ctx context.Context) error {
	parts, err := s.idle("clear session " + s.id)
	if err != nil {
		return err
	}
	cfg, err := s.ownLoopConfig(parts)
	if err != nil {
		return fmt.Errorf("clear session %s: %w", s.id, err)
	}
	a, err := agent.New(cfg)
	if err != nil {
		return fmt.Errorf("clear session %s: %w", s.id, err)
	}
	a.RestoreUsage(s.agent.Usage())
	s.agent = a
	return nil
}

// Compact implements strata.Session.Compact (documented there).
func (s *Session) Compact(ctx context.Context) (int, error) {
	if _, err := s.idle("compact session " + s.id); err != nil {
		return 0, err
	}
	n, err := s.agent.Compact(ctx)
	if err != nil {
		return 0, fmt.Errorf("compact session %s: %w", s.id, err)
	}
	s.saveCheckpoint(ctx)
	return n, nil
}
