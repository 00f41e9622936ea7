package event

import "testing"

// The message-loop design's event names map onto strata's kinds
// (docs/loop.md, rule 13): "Provider streaming emits ProviderRequestStarted,
// ProviderTokensStreamed, ProviderRequestCompleted, ProviderRequestFailed.
// Tool lifecycle emits ToolInvocationProposed, ToolInvocationStarted,
// ToolInvocationSucceeded, ToolInvocationFailed, ToolInvocationCancelled."
func TestDesignNameMapsKinds(t *testing.T) {
	for _, tc := range []struct {
		e    Event
		want string
	}{
		{Event{Kind: StagePreFired}, "StagePreFired"},
		{Event{Kind: StagePostFired, Outcome: "ok"}, "StagePostFired"},
		{Event{Kind: ProviderRequest}, "ProviderRequestStarted"},
		{Event{Kind: MessageUpdate}, "ProviderTokensStreamed"},
		{Event{Kind: ProviderResponse}, "ProviderRequestCompleted"},
		{Event{Kind: ProviderError}, "ProviderRequestFailed"},
		{Event{Kind: ToolInvocationProposed}, "ToolInvocationProposed"},
		{Event{Kind: ToolExecutionStart}, "ToolInvocationStarted"},
		{Event{Kind: ToolExecutionEnd, Outcome: ToolSucceeded}, "ToolInvocationSucceeded"},
		{Event{Kind: ToolExecutionEnd, Outcome: ToolFailed}, "ToolInvocationFailed"},
		{Event{Kind: ToolExecutionEnd, Outcome: ToolCancelled}, "ToolInvocationCancelled"},
		{Event{Kind: ToolExecutionEnd, Outcome: ToolDenied}, "ToolInvocationCancelled"},
		{Event{Kind: ToolExecutionEnd, Outcome: ToolNotRun}, "ToolInvocationCancelled"},
		{Event{Kind: ToolExecutionEnd}, ""}, // an outcome-less end (decoded old JSON) has no design name
		{Event{Kind: ToolCallApproved}, "ToolCallApproved"},
		{Event{Kind: ToolCallDenied}, "ToolCallDenied"},
		{Event{Kind: ToolCallModeInvoked}, "ToolCallModeInvoked"},
		{Event{Kind: SessionTurnStart}, "SessionTurnStart"},
		{Event{Kind: SessionTurnEnd}, "SessionTurnEnd"},
		{Event{Kind: TurnStart}, ""},
		{Event{Kind: Compaction}, ""},
	} {
		if got := DesignName(tc.e); got != tc.want {
			t.Errorf("DesignName(%s, outcome %q) = %q; want %q", tc.e.Kind, tc.e.Outcome, got, tc.want)
		}
	}
}
