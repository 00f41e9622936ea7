package panels

import "encoding/json"

// state is the layout's per-loop state as JSON (prompt.Stateful): dynamic
// panel ids, when each panel's content last changed, message times and the
// cache-cost bookkeeping.
type state struct {
	IDs   map[string]string    `json:"ids"`
	Next  int                  `json:"next"`
	Since map[string]seenState `json:"since"`
	MsgAt []int64              `json:"msg_at,omitempty"`
	Prev  []string             `json:"cost_prev,omitempty"`
	Total map[string]float64   `json:"cost_total,omitempty"`
}

type seenState struct {
	Hash string `json:"hash"`
	At   int64  `json:"at"`
}

// State returns the layout's state as JSON (prompt.Stateful).
func (l *Layout) State() ([]byte, error) {
	s := state{IDs: l.ids, Next: l.next, MsgAt: l.msgAt, Prev: l.costs.prev, Total: l.costs.total}
	if l.since != nil {
		s.Since = make(map[string]seenState, len(l.since))
		for k, v := range l.since {
			s.Since[k] = seenState{v.hash, v.at}
		}
	}
	return json.Marshal(s)
}

// SetState restores what State returned (prompt.Stateful).
func (l *Layout) SetState(data []byte) error {
	var s state
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	l.ids, l.next, l.msgAt, l.costs.prev, l.costs.total = s.IDs, s.Next, s.MsgAt, s.Prev, s.Total
	l.since = nil
	if s.Since != nil {
		l.since = make(map[string]seen, len(s.Since))
		for k, v := range s.Since {
			l.since[k] = seen{v.Hash, v.At}
		}
	}
	return nil
}
