package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/demo"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// A loop per user prompt (docs/turn.md, rule 2). The Rust agent-loop
// library's Turn: "turn_index — Zero-based index within the current loop (0
// = first turn after AgentStart)", each agent_loop call (one user prompt)
// being a loop, and "Branch — First turn of a Branch continuation". Two
// prompts give two loops, each indexed from 0, the second naming the first
// as its previous loop on its first turn_start; every event of a prompt
// carries its loop's id. A restored agent's next prompt is a new loop at 0
// whose request carries the whole conversation; a restored loop that has
// run no turn (a new branch) takes the next prompt itself, trigger branch.
func TestLoopPerUserPrompt(t *testing.T) {
	script, err := demo.Script()
	if err != nil {
		t.Fatal(err)
	}
	ok, err := replay.Text(llm.APIAnthropic, "ok")
	if err != nil {
		t.Fatal(err)
	}
	all := append(append(append([]replay.Response{}, script...), script...), ok, ok)
	a, rec, bus, _ := newAgent(t, 0, all...)
	first := a.LoopID()
	for _, p := range []string{"what is in this directory?", "and again?"} {
		if _, err := a.Prompt(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	second := a.LoopID()
	if second == first {
		t.Fatalf("the second prompt ran in the first prompt's loop %s", first)
	}

	// Resume: a restored agent (its loop has 3 turns) starts a new loop.
	b, err := Restore(a.eng.cfg, second, a.History(), 3)
	if err != nil {
		t.Fatal(err)
	}
	before := len(b.History())
	if _, err := b.Prompt(context.Background(), "one more"); err != nil {
		t.Fatal(err)
	}
	third := b.LoopID()
	// Branch: a restored loop without turns takes the next prompt.
	c, err := Restore(a.eng.cfg, "branch-loop", a.History()[:6], 0)
	if err != nil {
		t.Fatal(err)
	}
	c.SetFirstTrigger(event.TriggerBranch)
	if _, err := c.Prompt(context.Background(), "another way"); err != nil {
		t.Fatal(err)
	}
	bus.Close()

	var starts []string
	corrLoop := map[string]string{}
	for _, e := range rec.ev {
		if e.Kind == event.TurnStart {
			starts = append(starts, fmt.Sprintf("%s:%d:%s<%s", e.Turn.LoopID, e.Turn.Index, e.Trigger, e.PreviousLoopID))
		}
		if e.Turn == nil {
			continue
		}
		if l, ok := corrLoop[e.CorrelationID]; ok && l != e.Turn.LoopID {
			t.Errorf("%s of one prompt carries loop %s and %s", e.Kind, l, e.Turn.LoopID)
		}
		corrLoop[e.CorrelationID] = e.Turn.LoopID
	}
	want := []string{
		first + ":0:user<", first + ":1:continuation<", first + ":2:continuation<",
		second + ":0:user<" + first, second + ":1:continuation<", second + ":2:continuation<",
		third + ":0:user<" + second,
		"branch-loop:0:branch<",
	}
	if got := strings.Join(starts, " "); got != strings.Join(want, " ") {
		t.Errorf("turn starts (loop:index:trigger<previous)\n got  %s\n want %s", got, strings.Join(want, " "))
	}
	if third == second || third == first {
		t.Errorf("the resumed prompt reused loop %s", third)
	}
	if a.ConversationID() != first || b.ConversationID() != first {
		t.Errorf("conversation ids %s %s; want the first loop's %s (kept in the config)", a.ConversationID(), b.ConversationID(), first)
	}
	// The resumed prompt's request carries the whole conversation.
	got := lastServer.Received()
	var body struct{ Messages []json.RawMessage }
	if err := json.Unmarshal(got[len(got)-2].Body, &body); err != nil {
		t.Fatal(err)
	}
	if before != 12 || len(body.Messages) != before+1 {
		t.Errorf("the resumed prompt sent %d messages; want the %d of both earlier loops and the new prompt", len(body.Messages), before)
	}
}
