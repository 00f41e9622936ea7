package telemetry_test

import (
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/session/storetest"
	"github.com/strata-agent/strata/telemetry"
)

// Spans take their times from the events (the script's events are one
// second apart), not from when the observer saw them; a run cut off mid
// tool call (Ctrl-C: no end events) has its open spans ended by Close,
// with an error status saying so.
func TestSpansUseEventTimesAndCloseEndsOpenSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	o := telemetry.NewObserver(telemetry.Config{TracerProvider: tp, SessionID: "s1"})
	a := storetest.MainScript("loop")
	cut := 0
	for i, e := range a.Events {
		if e.Kind == event.ToolExecutionStart && e.ToolCall.ID == "t1-0" {
			cut = i + 1
		}
	}
	start := map[string]event.Event{}
	for _, e := range a.Events[:cut] {
		switch e.Kind {
		case event.SessionTurnStart, event.ProviderRequest, event.ToolExecutionStart:
			if _, seen := start[string(e.Kind)]; !seen {
				start[string(e.Kind)] = e
			}
		}
		o.Observe(e)
	}
	if n := len(rec.Ended()); n != 5 {
		t.Fatalf("%d spans ended before the cut; want 5 (two chats, three tools)", n)
	}
	o.Close()
	ended := rec.Ended()
	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range ended {
		byName[s.Name()] = append(byName[s.Name()], s)
	}
	agent, tool := byName["invoke_agent"], byName["execute_tool fs_read"]
	if len(agent) != 1 || len(tool) != 2 || len(byName["chat"]) != 2 {
		t.Fatalf("spans after Close: %v", byName)
	}
	if !agent[0].StartTime().Equal(start[string(event.SessionTurnStart)].Time) {
		t.Errorf("invoke_agent starts %s; want the event's time %s", agent[0].StartTime(), start[string(event.SessionTurnStart)].Time)
	}
	if first := byName["chat"][0]; !first.StartTime().Equal(start[string(event.ProviderRequest)].Time) {
		t.Errorf("chat starts %s; want the event's time %s", first.StartTime(), start[string(event.ProviderRequest)].Time)
	}
	for _, s := range []sdktrace.ReadOnlySpan{agent[0], tool[1]} {
		if s.Status().Code != codes.Error || s.Status().Description == "" {
			t.Errorf("span %s left open: status %v; want an error saying it was interrupted", s.Name(), s.Status())
		}
	}
	if tool[0].Status().Code == codes.Error {
		t.Errorf("the finished fs_read call has status %v", tool[0].Status())
	}
}
