package strata_test

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session"
)

// A loop per user prompt through the runtime (docs/turn.md, rule 2: the Rust
// agent-loop Turn's "turn_index — Zero-based index within the current loop
// (0 = first turn after AgentStart)"): each Session.Prompt is a new loop
// chained to the previous one; a resumed session's next prompt is a new loop
// at index 0 whose request carries the whole conversation; a branch's first
// turn is index 0 with trigger branch ("Branch — First turn of a Branch
// continuation"), and `--turn N` numbers turns across the conversation.
func TestEachPromptIsALoop(t *testing.T) {
	var mu sync.Mutex
	var sent []int // messages per request
	respond := func(req replay.Request) replay.Response {
		var b struct{ Messages []json.RawMessage }
		_ = json.Unmarshal(req.Body, &b)
		mu.Lock()
		sent = append(sent, len(b.Messages))
		mu.Unlock()
		r, _ := replay.Text(llm.APIAnthropic, "ok")
		return r
	}
	ctx := t.Context()
	store := session.NewMemory()
	ws, a := openReplay(t, strata.Options{Store: store, Respond: respond})
	var starts []event.Event
	a.Subscribe(func(e event.Event) {
		if e.Kind == event.TurnStart {
			starts = append(starts, e)
		}
	})
	var loops []string
	for _, p := range []string{"one", "two"} {
		if _, err := a.Prompt(ctx, p); err != nil {
			t.Fatal(err)
		}
		loops = append(loops, a.LoopID())
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if loops[0] == loops[1] || len(starts) != 2 || starts[1].Turn.Index != 0 || starts[1].PreviousLoopID != loops[0] {
		t.Fatalf("two prompts: loops %q, turn starts %+v; want two loops, the second at index 0 after the first", loops, starts)
	}

	b, err := ws.ResumeSession(ctx, a.ID(), strata.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Prompt(ctx, "three"); err != nil {
		t.Fatal(err)
	}
	third := b.LoopID()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := store.ReadLoop(ctx, third)
	if err != nil {
		t.Fatal(err)
	}
	if third == loops[1] || r.PreviousLoopID != loops[1] || len(r.Turns) != 1 || r.Turns[0].Index != 0 || r.Turns[0].TriggeredBy != event.TriggerUser {
		t.Errorf("resumed prompt's loop %+v; want a new loop after %s, turn 0 by user", r, loops[1])
	}
	if h, _ := store.History(ctx, third); len(h) != 6 || sent[2] != 5 {
		t.Errorf("resumed prompt: history %d messages, request %d; want 6 and 5 (the whole conversation)", len(h), sent[2])
	}

	// Turn 1 of the conversation is the second prompt's turn 0.
	c, err := ws.BranchSession(ctx, a.ID(), 1, strata.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Prompt(ctx, "other way"); err != nil {
		t.Fatal(err)
	}
	branch := c.LoopID()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	r, err = store.ReadLoop(ctx, branch)
	if err != nil {
		t.Fatal(err)
	}
	if r.BranchedFromLoop != loops[1] || r.BranchedFromTurn != 0 || len(r.Turns) != 1 || r.Turns[0].Index != 0 || r.Turns[0].TriggeredBy != event.TriggerBranch {
		t.Errorf("branch loop %+v; want turn 0 by branch, from %s turn 0", r, loops[1])
	}
	if sent[3] != 5 {
		t.Errorf("branch request: %d messages; want the 4 up to the branch turn and the prompt", sent[3])
	}
	if _, err := ws.BranchSession(ctx, a.ID(), 9, strata.SessionOptions{}); err == nil {
		t.Error("branch at turn 9 of a 3-turn conversation accepted")
	}
}
