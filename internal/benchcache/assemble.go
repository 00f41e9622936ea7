package benchcache

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/anthropic"
	"github.com/strata-agent/strata/prompt"
)

// AssembleTiming is the cost of laying out every request of the sessions
// with one layout, against the baseline of one json.Marshal of each
// request's final Anthropic body, measured in the same loop (machines here
// are noisy: only the ratio is meaningful).
type AssembleTiming struct {
	Layout    string        `json:"layout"`
	Requests  int           `json:"requests"`
	BodyBytes int64         `json:"body_bytes"`  // total of the encoded bodies
	Assemble  time.Duration `json:"assemble_ns"` // Layout.Assemble + anthropic.NewBody + json.Marshal
	Marshal   time.Duration `json:"marshal_ns"`  // json.Marshal of the same body again
	Ratio     float64       `json:"x_marshal"`   // Assemble / Marshal
	PerReqMS  float64       `json:"ms_per_request"`
}

// TimeAssemble lays out every call of every session with each layout (a
// fresh layout per session, as in a real loop), encodes it for Anthropic and
// times that against marshalling the same body, rounds times over. Errors
// name the session, layout and call.
func TimeAssemble(sessions []*Session, layouts []string, rounds int, progress func(done, total int)) ([]AssembleTiming, error) {
	out := make([]AssembleTiming, len(layouts))
	total := len(layouts) * rounds
	for li, name := range layouts {
		t := AssembleTiming{Layout: name}
		for round := 0; round < rounds; round++ {
			for _, s := range sessions {
				layout, err := prompt.Lookup(name)
				if err != nil {
					return nil, err
				}
				for i, c := range s.Calls {
					pc := c.Context
					pc.Model, pc.API = "claude-sonnet-4-5", llm.APIAnthropic
					t0 := time.Now()
					req, _, err := layout.Assemble(&pc)
					if err != nil {
						return nil, fmt.Errorf("%s: layout %s, call %d: %w", s.Name, name, i, err)
					}
					body, err := anthropic.NewBody(req)
					if err != nil {
						return nil, fmt.Errorf("%s: layout %s, call %d: %w", s.Name, name, i, err)
					}
					enc, err := json.Marshal(body)
					if err != nil {
						return nil, err
					}
					t1 := time.Now()
					if _, err := json.Marshal(body); err != nil {
						return nil, err
					}
					t.Assemble += t1.Sub(t0)
					t.Marshal += time.Since(t1)
					if round == 0 {
						t.Requests++
						t.BodyBytes += int64(len(enc))
					}
				}
			}
			if progress != nil {
				progress(li*rounds+round+1, total)
			}
		}
		if t.Marshal > 0 {
			t.Ratio = float64(t.Assemble) / float64(t.Marshal)
		}
		if t.Requests > 0 {
			t.PerReqMS = float64(t.Assemble) / float64(rounds*t.Requests) / 1e6
		}
		out[li] = t
	}
	return out, nil
}
