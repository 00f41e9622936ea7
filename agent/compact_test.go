package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-agent/strata/compact"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// With a compaction policy, old turns leave the messages and reach the
// layout as frozen conversation-history text (flat: the system prompt's
// summary section): a Compaction event comes after the turn's input
// messages and before the provider request, each later request's system
// prompt starts with the earlier one's (frozen chunks, stable prefix), and
// the stored history keeps every message.
func TestCompactionDetachesFrozenChunks(t *testing.T) {
	var script []replay.Response
	for i := 0; i < 4; i++ {
		r, err := replay.AnthropicStream(fmt.Sprintf("m%d", i), llm.Usage{Input: 10, Output: 5}, llm.StopEndTurn, llm.TextBlock(fmt.Sprintf("answer %d", i)))
		if err != nil {
			t.Fatal(err)
		}
		script = append(script, r)
	}
	a, rec, bus, _ := newAgent(t, 5, script...)
	a.eng.cfg.Compaction = &compact.Policy{ChunkMinMessages: 2, ChunkMinTokens: 1, KeepMinMessages: 2, KeepMinTokens: 1}
	for i := 0; i < 4; i++ {
		if _, err := a.Prompt(context.Background(), fmt.Sprintf("prompt %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	bus.Close()
	var bodies []struct {
		System   []struct{ Text string }
		Messages []json.RawMessage
	}
	for _, r := range lastServer.Received() {
		var b struct {
			System   []struct{ Text string }
			Messages []json.RawMessage
		}
		if err := json.Unmarshal(r.Body, &b); err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, b)
	}
	if n := []int{len(bodies[0].Messages), len(bodies[1].Messages), len(bodies[2].Messages), len(bodies[3].Messages)}; fmt.Sprint(n) != "[1 3 3 3]" {
		t.Fatalf("messages per request %v", n)
	}
	sys2, sys3 := bodies[2].System[0].Text, bodies[3].System[0].Text
	if !strings.Contains(sys2, "## Conversation summary\n\nConversation history, messages 1–2") || !strings.Contains(sys2, "[user] prompt 0") ||
		!strings.HasPrefix(sys3, sys2) || !strings.Contains(sys3, "messages 3–4") {
		t.Errorf("system prompts:\n%s\n---\n%s", sys2, sys3)
	}
	if len(a.st.History) != 8 {
		t.Errorf("history %d messages; compaction must not drop any", len(a.st.History))
	}
	// Order within the compacting turn.
	var order []string
	third := nthTurn(rec.ev, 2) // the third prompt's loop, turn 0
	for _, e := range rec.ev {
		if e.Turn != nil && *e.Turn == third && e.Kind != event.StagePreFired && e.Kind != event.StagePostFired {
			order = append(order, string(e.Kind))
		}
		if e.Kind == event.Compaction && !strings.Contains(e.Text, "detached messages") {
			t.Errorf("compaction text %q", e.Text)
		}
	}
	got := strings.Join(order, " ")
	if !strings.HasPrefix(got, "turn_start message_start message_end compaction provider_request") {
		t.Errorf("turn 2 events: %s", got)
	}
}

// nthTurn returns the id of the n-th (0-based) turn_start in evs.
func nthTurn(evs []event.Event, n int) event.TurnID {
	for _, e := range evs {
		if e.Kind == event.TurnStart {
			if n == 0 {
				return *e.Turn
			}
			n--
		}
	}
	return event.TurnID{}
}
