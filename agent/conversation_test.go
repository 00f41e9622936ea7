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

// The loop gives the layout the conversation's id on every turn: the first
// loop's, kept by the loops of later prompts (a loop per user prompt), and by
// a restored agent given it as Config.ConversationID (layouts send it as
// OpenAI's prompt_cache_key, so a resumed session keeps its cache key); a
// restored agent without one uses the restored loop's id.
func TestContextCarriesTheConversationID(t *testing.T) {
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
	first := a.LoopID()
	for _, p := range []string{"one", "two"} {
		if _, err := a.Prompt(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	if a.LoopID() == first || a.ConversationID() != first {
		t.Fatalf("after two prompts: loop %s, conversation %s; want a new loop in conversation %s", a.LoopID(), a.ConversationID(), first)
	}
	kept := cfg
	kept.ConversationID = a.ConversationID()
	b, err := Restore(kept, "loop-7", a.History(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Prompt(context.Background(), "three"); err != nil {
		t.Fatal(err)
	}
	c, err := Restore(cfg, "loop-8", b.History(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Prompt(context.Background(), "four"); err != nil {
		t.Fatal(err)
	}
	// two turns, b's replay of the two stored requests, one turn; c's replay
	// of three, one turn
	want := []string{first, first, first, first, first, "loop-8", "loop-8", "loop-8", "loop-8"}
	if len(layout.ids) != len(want) {
		t.Fatalf("layout saw ids %q; want %q", layout.ids, want)
	}
	for i := range want {
		if layout.ids[i] != want[i] {
			t.Errorf("context %d: conversation id %q; want %q", i, layout.ids[i], want[i])
		}
	}
}
