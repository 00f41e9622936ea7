package tiered

// State returns the stability tracker's counts as JSON (prompt.Stateful).
func (l *Layout) State() ([]byte, error) { return l.tracker.MarshalJSON() }

// SetState restores what State returned (prompt.Stateful).
func (l *Layout) SetState(data []byte) error { return l.tracker.UnmarshalJSON(data) }
