package cachefit

import (
	"encoding/json"

	"github.com/strata-agent/strata/prompt"
)

// state is the layout's per-session state as JSON (prompt.Stateful): the
// placed file versions, the TTL rule's gap statistics and the session's
// static files. The options are configuration, not state.
type state struct {
	Placed []placementState  `json:"placed,omitempty"`
	Seen   map[string]bool   `json:"seen,omitempty"`
	Latest map[string]string `json:"latest,omitempty"`
	Gaps   gapState          `json:"gaps"`
	Static []prompt.File     `json:"static,omitempty"`
	Start  bool              `json:"started,omitempty"`
}

type placementState struct {
	Msg     int    `json:"msg"`
	Key     string `json:"key"`
	Text    string `json:"text"`
	Content string `json:"content"`
}

type gapState struct {
	Last        int64  `json:"last,omitempty"`
	Calls       int    `json:"calls,omitempty"`
	Gaps        int    `json:"gaps,omitempty"`
	Pauses      int    `json:"pauses,omitempty"`
	StateGaps   [2]int `json:"state_gaps"`
	StatePauses [2]int `json:"state_pauses"`
	State       int    `json:"state,omitempty"`
	Kept        bool   `json:"kept,omitempty"`
}

// State returns the layout's session state as JSON (prompt.Stateful).
func (l *Layout) State() ([]byte, error) {
	s := state{Seen: l.seen, Latest: l.latest, Static: l.static, Start: l.started}
	for _, p := range l.placed {
		s.Placed = append(s.Placed, placementState{p.msg, p.key, p.text, p.content})
	}
	g := l.gaps
	s.Gaps = gapState{g.last, g.calls, g.gaps, g.pauses, g.stateGaps, g.statePauses, g.state, g.kept}
	return json.Marshal(s)
}

// SetState restores what State returned (prompt.Stateful), keeping the
// layout's options.
func (l *Layout) SetState(data []byte) error {
	var s state
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	l.placed = nil
	for _, p := range s.Placed {
		l.placed = append(l.placed, placement{p.Msg, p.Key, p.Text, p.Content})
	}
	l.seen, l.latest, l.static, l.started = s.Seen, s.Latest, s.Static, s.Start
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	if l.latest == nil {
		l.latest = map[string]string{}
	}
	g := s.Gaps
	l.gaps.last, l.gaps.calls, l.gaps.gaps, l.gaps.pauses = g.Last, g.Calls, g.Gaps, g.Pauses
	l.gaps.stateGaps, l.gaps.statePauses, l.gaps.state, l.gaps.kept = g.StateGaps, g.StatePauses, g.State, g.Kept
	return nil
}
