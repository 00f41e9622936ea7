package workflow_test

import (
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/workflow"
)

// BenchmarkStageVsPrompt compares a one-stage workflow whose model answers
// with the completion call (Setup, Init, a fork, Act, Assert, Exit with its
// stored state, the audit events) with a plain session prompt answered with
// text, in the same run: the SM's overhead as a ratio.
//
//	go test ./workflow -run '^$' -bench StageVsPrompt -benchtime 50x
func BenchmarkStageVsPrompt(b *testing.B) {
	d, err := workflow.Parse("one.yaml", []byte("name: one\nstages:\n  - name: only\n    body: ONLY stage.\n"))
	if err != nil {
		b.Fatal(err)
	}
	m := &model{t: b, markers: map[string]string{"only": "ONLY stage"}}
	m.next = func(stage, body string) replay.Reply {
		if stage == "only" {
			return complete("c", `{"result":"done"}`)
		}
		return replay.Reply{Blocks: []llm.Block{llm.TextBlock("done")}}
	}
	ws, _ := openWith(b, strata.Options{Dir: fixture(b), Store: session.NewMemory()}, m)
	b.Run("stage", func(b *testing.B) {
		for b.Loop() {
			s := newSession(b, ws)
			if _, err := workflow.Run(b.Context(), ws, s, d, nil, workflow.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("prompt", func(b *testing.B) {
		for b.Loop() {
			s := newSession(b, ws)
			if _, err := s.Prompt(b.Context(), "hi"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func newSession(b *testing.B, ws *strata.Workspace) *strata.Session {
	s, err := ws.NewSession(b.Context(), strata.SessionOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}
