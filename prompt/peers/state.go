package peers

import "encoding/json"

// codexState is the codex layout's placements as JSON (prompt.Stateful).
type codexState struct {
	Msg   int              `json:"msg"`
	Items []codexItemState `json:"items"`
}

type codexItemState struct {
	Key   string   `json:"key"`
	Kind  itemKind `json:"kind"`
	Title string   `json:"title"`
	Body  string   `json:"body"`
}

// State returns what the layout placed where, as JSON (prompt.Stateful).
func (l *codex) State() ([]byte, error) {
	out := make([]codexState, len(l.placed))
	for i, p := range l.placed {
		out[i].Msg = p.msg
		for _, it := range p.items {
			out[i].Items = append(out[i].Items, codexItemState{it.key, it.kind, it.title, it.body})
		}
	}
	return json.Marshal(out)
}

// SetState restores what State returned (prompt.Stateful).
func (l *codex) SetState(data []byte) error {
	var in []codexState
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	l.placed = make([]codexPlacement, len(in))
	for i, p := range in {
		l.placed[i].msg = p.Msg
		for _, it := range p.Items {
			l.placed[i].items = append(l.placed[i].items, codexItem{it.Key, item{it.Kind, it.Title, it.Body}})
		}
	}
	return nil
}
