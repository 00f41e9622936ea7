package strata

import (
	"context"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/wsrt"
	"github.com/strata-agent/strata/llm"
)

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
type Fork struct{ rt *wsrt.Fork }

// Fork returns a fork of the session's conversation as it stands, with
// the session's configuration changed by o.Overrides (a fresh layout
// instance, started from the session's layout state). It fails when a
// prompt is running (ErrPromptRunning), after Close (ErrClosed), or when
// o.Overrides is invalid.
func (s *Session) Fork(ctx context.Context, o ForkOptions) (*Fork, error) {
	f, err := s.rt.Fork(ctx, wsrt.ForkOptions(o))
	if err != nil {
		return nil, err
	}
	return &Fork{rt: f}, nil
}

// Prompt runs one prompt on the fork (agent.Agent.PromptWith).
func (f *Fork) Prompt(ctx context.Context, text string, attachments ...llm.Block) (*agent.Result, error) {
	return f.rt.Prompt(ctx, text, attachments...)
}

// History returns the fork's conversation: the session's at the fork, then
// the fork's own turns (shared; do not modify).
func (f *Fork) History() []llm.Message { return f.rt.History() }

// LoopID returns the fork's current loop id.
func (f *Fork) LoopID() string { return f.rt.LoopID() }

// Usage returns the tokens of every model call of the fork's conversation,
// the session's before the fork included.
func (f *Fork) Usage() llm.Usage { return f.rt.Usage() }

// Close delivers the fork's pending events and releases its bus.
func (f *Fork) Close() error {
	return f.rt.Close()
}
