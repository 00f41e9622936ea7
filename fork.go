package strata

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// Per-prompt settings, forks and a front end's own events: what a front end
// or a workflow stage sets for itself on top of the session
// (docs/architecture.md, "drivers").

// PromptWithOverrides is Prompt with o applied to this prompt only (its
// system prompt, a narrowed tool filter, extra tools, hooks, continuation
// limit: agent.Overrides); the session's next prompt runs with its own
// settings again. The prompt is recorded like any other.
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

// Emit publishes a front end's own event on the session's bus, to the
// session's observers (OnEvent, OnEventSync, Subscribe, Stream), in order
// with the loop's events. Its Kind must be namespaced with a dot
// ("acme.note"): the loop's own kinds have none, so a front end cannot
// forge a turn or a tool result; it is not stored in the session. ErrClosed
// after Close.
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

// ForkOptions configure Session.Fork.
type ForkOptions struct {
	// Overrides are the fork's own settings (its system prompt, narrowed
	// tools, extra tools such as a completion tool, hooks, continuation
	// limit).
	Overrides agent.Overrides
	// OnEvent observes the fork's events, inline (nil = none). They are not
	// the session's: its observers and its store never see them.
	OnEvent event.Observer
}

// Fork is a copy of a session's conversation that runs on its own: its
// prompts, tool calls and events are not recorded in the session (what a
// workflow stage runs), though its tools run in the session's workspace
// with its approvals. Close it when done.
type Fork struct {
	agent *agent.Agent
	bus   *event.Bus
}

// Fork returns a fork of the session's conversation as it stands, with
// the session's configuration changed by o.Overrides (a fresh layout
// instance, started from the session's layout state). It fails when a
// prompt is running (ErrPromptRunning), after Close (ErrClosed), or when
// o.Overrides is invalid.
func (s *Session) Fork(ctx context.Context, o ForkOptions) (*Fork, error) {
	parts, err := s.idle("fork session " + s.id)
	if err != nil {
		return nil, err
	}
	bus := event.NewBus()
	if o.OnEvent != nil {
		bus.SubscribeSync(o.OnEvent)
	}
	cfg, err := s.loopConfigOn(parts, bus)
	if err == nil {
		cfg, err = cfg.With(o.Overrides)
	}
	var a *agent.Agent
	if err == nil {
		a, err = s.agent.Fork(cfg)
	}
	if err != nil {
		bus.Close()
		return nil, fmt.Errorf("fork session %s: %w", s.id, err)
	}
	return &Fork{agent: a, bus: bus}, nil
}

// Prompt runs one prompt on the fork (agent.Agent.PromptWith).
func (f *Fork) Prompt(ctx context.Context, text string, attachments ...llm.Block) (*agent.Result, error) {
	return f.agent.PromptWith(ctx, text, attachments)
}

// History returns the fork's conversation: the session's at the fork, then
// the fork's own turns (shared; do not modify).
func (f *Fork) History() []llm.Message { return f.agent.History() }

// LoopID returns the fork's current loop id.
func (f *Fork) LoopID() string { return f.agent.LoopID() }

// Usage returns the tokens of every model call of the fork's conversation,
// the session's before the fork included.
func (f *Fork) Usage() llm.Usage { return f.agent.Usage() }

// Close delivers the fork's pending events and releases its bus.
func (f *Fork) Close() error {
	f.bus.Close()
	return nil
}

// Clear starts a new conversation in the same session (the chat's
// /clear): the next prompt is a loop of its own that continues no earlier
// loop, so its requests carry no earlier message, with a fresh layout
// instance and conversation id. The earlier loops stay stored in the
// session; its usage keeps counting. It fails while a prompt runs
// (ErrPromptRunning) and after Close (ErrClosed).
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

// Compact detaches every prompt of the conversation but the last into
// frozen history chunks now (the chat's /compact; agent.Agent.Compact): the
// next request is shorter and starts a new cached prefix. It stores the
// loop's checkpoint, so a resume keeps the chunks. It returns how many
// messages were detached; ErrPromptRunning while a prompt runs, ErrClosed
// after Close.
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
