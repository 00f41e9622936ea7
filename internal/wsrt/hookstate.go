package wsrt

import (
	"encoding/json"

	"github.com/strata-agent/strata/event"
)

// funcState is an agent.HookState over a hook's own save and load
// functions (docs/durable.md, "stateful hooks").
type funcState struct {
	save func() (json.RawMessage, error)
	load func(json.RawMessage) error
}

// SaveState implements agent.HookState.
func (s funcState) SaveState() (json.RawMessage, error) { return s.save() }

// LoadState implements agent.HookState.
func (s funcState) LoadState(b json.RawMessage) error { return s.load(b) }

// eventState is a funcState fed the loop's events (agent.EventState).
type eventState struct {
	funcState
	observe func(event.Event)
}

// Observe implements agent.EventState.
func (s eventState) Observe(e event.Event) { s.observe(e) }
