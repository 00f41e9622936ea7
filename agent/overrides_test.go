package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/prompt/flat"
	"github.com/strata-agent/strata/tool"
)

// must returns an authored reply; the replies here are fixed, so an error
// is a bug in the test.
func must(r replay.Response, err error) replay.Response {
	if err != nil {
		panic(err)
	}
	return r
}

// requestOf decodes the i-th request the replay server received.
func requestOf(t *testing.T, i int) (system string, tools []string) {
	t.Helper()
	var req struct {
		System []struct{ Text string } `json:"system"`
		Tools  []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal(lastServer.Received()[i].Body, &req); err != nil {
		t.Fatal(err)
	}
	for _, s := range req.System {
		system += s.Text
	}
	for _, x := range req.Tools {
		tools = append(tools, x.Name)
	}
	return system, tools
}

// A prompt's overrides (a workflow stage's system prompt and narrowed
// tools) apply to that prompt only; the next prompt runs with the agent's
// own configuration again.
func TestPromptWithOverridesAppliesToOnePrompt(t *testing.T) {
	a, _, _, _ := newAgent(t, 5,
		must(replay.Text(llm.APIAnthropic, "planned")),
		must(replay.Text(llm.APIAnthropic, "chatted")))
	a.eng.cfg.Context.System = "You are the session's agent."
	body := "You are the plan stage. Write a plan."
	o := Overrides{System: &body, Tools: func(name string) bool { return name == "fs_read" || name == "glob" }}
	if _, err := a.PromptWithOverrides(context.Background(), "plan it", nil, o); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Prompt(context.Background(), "and chat"); err != nil {
		t.Fatal(err)
	}
	sys, tools := requestOf(t, 0)
	if sys != body || strings.Join(tools, ",") != "fs_read,glob" {
		t.Errorf("overridden prompt sent system %q, tools %v; want the stage body and fs_read, glob", sys, tools)
	}
	sys, tools = requestOf(t, 1)
	if sys != "You are the session's agent." || len(tools) < 5 {
		t.Errorf("next prompt sent system %q, tools %v; want the agent's own", sys, tools)
	}
	if _, err := a.PromptWithOverrides(context.Background(), "x", nil, Overrides{MaxTurns: -1}); err == nil {
		t.Error("a negative MaxTurns override was accepted")
	}
}

// verdict is the completion tool's typed output.
type verdict struct {
	OK     bool   `json:"ok"`
	Reason string `json:"reason"`
}

// A tool whose Traits say it ends the turn (a completion tool) stops the
// loop after the round it ran in, and its typed output is the result
// (Result.ToolResult, EndedBy); the model is not called again. Its Call
// carries the tool_use id and reports progress as an event.
func TestEndsTurnToolStopsTheLoop(t *testing.T) {
	done := tool.Typed("complete", "Hand the stage's result back.", tool.Traits{EndsTurn: true, PreApproved: true},
		func(_ context.Context, c tool.Call, in verdict) (verdict, error) {
			c.Emit("completing " + c.CallID)
			in.Reason = "checked: " + in.Reason
			return in, nil
		})
	a, rec, bus, _ := newAgent(t, 5,
		must(replay.ToolCall(llm.APIAnthropic, "call_1", "complete", json.RawMessage(`{"ok":true,"reason":"tests pass"}`))),
		must(replay.Text(llm.APIAnthropic, "never sent")))
	a.eng.cfg.Mode = ModeAllowlist
	res, err := a.PromptWithOverrides(context.Background(), "finish", nil, Overrides{Extra: []tool.Tool{done}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(lastServer.Received()); n != 1 {
		t.Errorf("%d model calls; a completion tool ends the loop after its round", n)
	}
	if res.EndedBy != "complete" || res.ToolResult == nil || res.ToolResult.Content[0].Text != `{"ok":true,"reason":"checked: tests pass"}` {
		t.Fatalf("result ended by %q with %+v; want the completion tool's typed output", res.EndedBy, res.ToolResult)
	}
	bus.Close() // delivers what is queued
	var progress bool
	for _, e := range rec.ev {
		progress = progress || (e.Kind == event.ToolExecutionUpdate && e.Text == "completing call_1")
	}
	if !progress {
		t.Error("the typed tool's Emit reached no tool_execution_update event")
	}
}

// A program's own tool passes the authority stack like a built-in: in
// allowlist mode it is asked about (denied here: no approver) unless its
// Traits mark it pre-approved.
func TestExtraToolsNeedApprovalUnlessPreApproved(t *testing.T) {
	echo := func(tr tool.Traits) tool.Tool {
		return tool.Typed("echo", "Echo.", tr, func(_ context.Context, _ tool.Call, in verdict) (verdict, error) { return in, nil })
	}
	for _, c := range []struct {
		traits tool.Traits
		denied bool
	}{{tool.Traits{}, true}, {tool.Traits{PreApproved: true}, false}} {
		a, rec, bus, _ := newAgent(t, 5,
			must(replay.ToolCall(llm.APIAnthropic, "call_1", "echo", json.RawMessage(`{"ok":true,"reason":"r"}`))),
			must(replay.Text(llm.APIAnthropic, "ok")))
		a.eng.cfg.Mode = ModeAllowlist
		if _, err := a.PromptWithOverrides(context.Background(), "echo", nil, Overrides{Extra: []tool.Tool{echo(c.traits)}}); err != nil {
			t.Fatal(err)
		}
		bus.Close()
		var denied bool
		for _, e := range rec.ev {
			denied = denied || e.Kind == event.ToolCallDenied
		}
		if denied != c.denied {
			t.Errorf("traits %+v: denied %v; want %v", c.traits, denied, c.denied)
		}
	}
}

// A fork continues a copy of the conversation on its own bus and layout:
// its turns name the parent's loop as the previous one, and nothing it does
// reaches the parent's history or events.
func TestForkIsNotRecordedInTheParent(t *testing.T) {
	a, _, bus, _ := newAgent(t, 5,
		must(replay.Text(llm.APIAnthropic, "parent answer")),
		must(replay.Text(llm.APIAnthropic, "fork answer")))
	if _, err := a.Prompt(context.Background(), "first"); err != nil {
		t.Fatal(err)
	}
	parentHistory, parentEvents := len(a.History()), 0
	bus.SubscribeSync(func(event.Event) { parentEvents++ })
	cfg := a.eng.cfg
	cfg.Layout, cfg.Bus = flat.Layout{}, event.NewBus()
	var starts []event.Event
	cfg.Bus.SubscribeSync(func(e event.Event) {
		if e.Kind == event.TurnStart {
			starts = append(starts, e)
		}
	})
	f, err := a.Fork(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Prompt(context.Background(), "stage work")
	if err != nil || res.Message.Text() != "fork answer" {
		t.Fatalf("fork: %v %v", res, err)
	}
	if parentEvents != 0 || len(a.History()) != parentHistory {
		t.Errorf("the fork reached the parent: %d events, %d→%d messages", parentEvents, parentHistory, len(a.History()))
	}
	if len(f.History()) != parentHistory+2 || f.LoopID() == a.LoopID() {
		t.Errorf("fork history %d messages, loop %s; want the parent's %d plus its turn, in a new loop", len(f.History()), f.LoopID(), parentHistory)
	}
	if len(starts) != 1 || starts[0].PreviousLoopID != a.LoopID() || starts[0].Trigger != event.TriggerBranch {
		t.Errorf("fork turn starts %+v; want one, continuing loop %s, triggered by branch", starts, a.LoopID())
	}
	if _, err := a.Fork(Config{}); err == nil || errors.Is(err, ErrBusy) {
		t.Errorf("fork with an empty config: %v; want a configuration error", err)
	}
}
