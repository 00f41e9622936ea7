package agent

import (
	"context"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/anthropic"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/prompt/flat"
	"github.com/strata-agent/strata/tool"
)

// seenIDs is a flat layout that records the conversation id of every
// context it is given.
type seenIDs struct {
	flat.Layout
	ids []string
}

func (s *seenIDs) Assemble(c *prompt.Context) (*llm.Request, *prompt.Breakdown, error) {
	s.ids = append(s.ids, c.ConversationID)
	return s.Layout.Assemble(c)
}

// The loop gives the layout its loop id as the conversation id on every
// turn, and a restored loop keeps its id (layouts send it as OpenAI's
// prompt_cache_key, so a resumed session keeps its cache key).
func TestContextCarriesTheLoopID(t *testing.T) {
	srv, err := replay.NewResponder(func(replay.Request) replay.Response {
		r, _ := replay.Text(llm.APIAnthropic, "ok")
		return r
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	layout := &seenIDs{}
	cfg := Config{Provider: anthropic.New(anthropic.Config{APIKey: "k", BaseURL: srv.URL()}), Layout: layout,
		Tools: tool.NewRegistry(), Model: "m", Context: prompt.Context{ConversationID: "from-the-template"}}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"one", "two"} {
		if _, err := a.Prompt(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	b, err := Restore(cfg, "loop-7", a.History(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Prompt(context.Background(), "three"); err != nil {
		t.Fatal(err)
	}
	// two turns, the restore's replay of the two stored requests, one turn
	want := []string{a.LoopID(), a.LoopID(), "loop-7", "loop-7", "loop-7"}
	if len(layout.ids) != len(want) {
		t.Fatalf("layout saw ids %q; want %q", layout.ids, want)
	}
	for i := range want {
		if layout.ids[i] != want[i] {
			t.Errorf("context %d: conversation id %q; want %q", i, layout.ids[i], want[i])
		}
	}
}
