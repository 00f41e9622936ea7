package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// The message-loop design: "Provider streaming emits ProviderRequestStarted,
// ProviderTokensStreamed, ProviderRequestCompleted, ProviderRequestFailed.
// Tool lifecycle emits ToolInvocationProposed, ToolInvocationStarted,
// ToolInvocationSucceeded, ToolInvocationFailed, ToolInvocationCancelled.
// Tool-approval decisions are audited separately as ToolCallApproved /
// ToolCallDenied / ToolCallModeInvoked". strata's kinds map onto those names
// (event.DesignName); the Rust agent-loop Turn: "TurnEnd.tool_results — All
// tool result messages for this turn."
func TestDesignEventsOfToolCalls(t *testing.T) {
	ap := &scripted{answers: []Decision{AllowOnce, RejectOnce, AllowAlways}}
	a, rec, bus, _, _ := parallelAgent(t, Config{Mode: ModeAsk, Approver: ap})
	if _, err := a.Prompt(context.Background(), "Who is the youngest?"); err != nil {
		t.Fatal(err)
	}
	bus.Close()
	var names []string
	var turnEnds []event.Event
	for _, e := range rec.ev {
		if e.Turn == nil || e.Turn.Index != 0 {
			continue
		}
		if e.Kind == event.TurnEnd {
			turnEnds = append(turnEnds, e)
		}
		n := event.DesignName(e)
		if n == "" || n == "ProviderTokensStreamed" || strings.HasPrefix(n, "Stage") {
			continue
		}
		var v struct{ Name string }
		if e.ToolCall != nil {
			json.Unmarshal(e.ToolCall.Input, &v)
			n += ":" + v.Name
		}
		names = append(names, n)
	}
	want := "ProviderRequestStarted ProviderRequestCompleted " +
		"ToolInvocationProposed:Alice ToolInvocationProposed:Bob ToolInvocationProposed:Charlie ToolInvocationProposed:Daisy " +
		"ToolCallModeInvoked:Alice ToolCallApproved:Alice ToolCallModeInvoked:Bob ToolCallDenied:Bob " +
		"ToolCallModeInvoked:Charlie ToolCallApproved:Charlie ToolCallModeInvoked:Daisy ToolCallApproved:Daisy " +
		"ToolInvocationStarted:Alice ToolInvocationSucceeded:Alice ToolInvocationCancelled:Bob " +
		"ToolInvocationStarted:Charlie ToolInvocationSucceeded:Charlie ToolInvocationStarted:Daisy ToolInvocationSucceeded:Daisy"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("design events of turn 0:\n got  %s\n want %s", got, want)
	}
	var modes []string
	for _, e := range rec.ev {
		if e.Kind == event.ToolCallModeInvoked {
			modes = append(modes, e.Text)
		}
	}
	if got := strings.Join(modes, ", "); got != "ask: ask the approver, ask: ask the approver, ask: ask the approver, ask: allowed always" {
		t.Errorf("mode gate answers: %s", got)
	}
	if len(turnEnds) != 1 || len(turnEnds[0].ToolResults) != 4 {
		t.Fatalf("turn_end of turn 0: %+v; want its 4 tool_results", turnEnds)
	}
	h := a.History()
	for i, r := range turnEnds[0].ToolResults {
		if r.Type != llm.BlockToolResult || r.ID != h[2].Content[i].ID || (i == 1) != r.IsError {
			t.Errorf("turn_end tool_results[%d] = %+v; want the history's result %+v", i, r, h[2].Content[i])
		}
	}
	// The last turn asked for no tool: its TurnEnd has none, and the JSON
	// form omits the field.
	last := rec.ev[len(rec.ev)-1]
	for i := len(rec.ev) - 1; i >= 0; i-- {
		if rec.ev[i].Kind == event.TurnEnd {
			last = rec.ev[i]
			break
		}
	}
	raw, _ := json.Marshal(last)
	if len(last.ToolResults) != 0 || strings.Contains(string(raw), "tool_results") {
		t.Errorf("final turn_end %s; want no tool_results", raw)
	}
	raw, _ = json.Marshal(turnEnds[0])
	if !strings.Contains(string(raw), `"tool_results":[{"type":"tool_result"`) {
		t.Errorf("turn_end JSON lacks tool_results: %s", raw)
	}
}

// StagePreFired/StagePostFired carry the stage, the turn id (nil at
// receive_input and render, which belong to the user turn) and the
// correlation id; a guard's deny ends its stage with outcome denied.
func TestStageEventsCarryIDsAndOutcome(t *testing.T) {
	guard := Hook{Name: "budget", Stage: StageSendRequest, Phase: PhasePre, Kind: HookGuard,
		Func: func(context.Context, *Payload) (Verdict, error) {
			return Verdict{Deny: true, Reason: "over budget"}, nil
		}}
	a, rec, bus, _, _ := parallelAgent(t, Config{Hooks: []Hook{guard}})
	if _, err := a.Prompt(context.Background(), "hi"); err == nil {
		t.Fatal("want the guard's denial")
	}
	bus.Close()
	var got []string
	for _, e := range rec.ev {
		if e.Kind != event.StagePreFired && e.Kind != event.StagePostFired {
			continue
		}
		if e.CorrelationID != rec.ev[0].CorrelationID {
			t.Errorf("%s %s: correlation id %q", e.Kind, e.Stage, e.CorrelationID)
		}
		turn := "-"
		if e.Turn != nil {
			turn = e.Turn.LoopID[:4] + "/" + string(rune('0'+e.Turn.Index))
			if e.Turn.LoopID != a.LoopID() {
				t.Errorf("stage event turn %+v; want loop %s", e.Turn, a.LoopID())
			}
		}
		got = append(got, e.Stage+"@"+strings.TrimPrefix(turn, a.LoopID()[:4])+":"+e.Outcome)
	}
	// receive_input's events carry the turn the input starts (docs/loop.md,
	// rule 12; the second audit of the designs found them without one).
	want := "receive_input@/0: receive_input@/0:ok compose_request@/0: compose_request@/0:ok send_request@/0: send_request@/0:denied"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("stage events:\n got  %s\n want %s", s, want)
	}
}
