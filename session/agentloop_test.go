package session_test

// The recorder driven by the real agent loop (agent.Agent, the Anthropic
// provider against the replay server playing the demo script, the built-in
// tools). It depends on llm/anthropic and tool compiling.

import (
	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/session/storetest"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/demo"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/anthropic"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/prompt/flat"
	"github.com/strata-agent/strata/tool"
)

func TestRealAgentLoopRecordsItsHistory(t *testing.T) {
	eachStore(t, testRealAgentLoopRecordsItsHistory)
}

func testRealAgentLoopRecordsItsHistory(t *testing.T, s session.Store) {
	ctx := t.Context()
	script, err := demo.Script()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := replay.NewServer(script...)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "README.md"), []byte("# hello from the workspace\nsecond line\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n"), 0o644)

	sess, err := s.CreateSession(ctx, session.SessionMeta{Cwd: ws, Provider: "anthropic", Model: demo.Model, Layout: "flat"})
	if err != nil {
		t.Fatal(err)
	}
	bus := event.NewBus()
	rec := session.NewRecorder(s, sess.ID)
	bus.SubscribeSync(rec.Observer())
	var evs []event.Event
	// Runs after the recorder, inside Emit: each tool result is already on
	// disk when the loop goes on.
	bus.SubscribeSync(func(e event.Event) {
		evs = append(evs, e)
		if e.Kind != event.ToolExecutionEnd {
			return
		}
		h, err := s.History(ctx, e.Turn.LoopID)
		if err != nil {
			t.Errorf("history inside emit: %v", err)
			return
		}
		last := h[len(h)-1].Content
		if got := last[len(last)-1]; got.ID != e.ToolResult.ID || got.Type != llm.BlockToolResult {
			t.Errorf("tool result %s not stored before Emit returned: %+v", e.ToolResult.ID, got)
		}
	})
	a, err := agent.New(agent.Config{
		Provider: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL()}),
		Layout:   flat.Layout{},
		Tools:    tool.NewRegistry(tool.Builtins()...),
		Env:      &tool.Env{Workdir: ws},
		Model:    "test-model",
		Bus:      bus,
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Prompt(ctx, "what is in this directory?")
	bus.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Err(); err != nil {
		t.Fatal(err)
	}

	h, err := s.History(ctx, a.LoopID())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(h, a.History()) {
		storetest.JSONEq(t, "stored history vs agent.History()", h, a.History())
		t.Fatalf("stored history equals agent.History() as JSON but not as Go values:\n%#v\n%#v", h, a.History())
	}
	if len(h) != 6 {
		t.Errorf("history has %d messages, want 6", len(h))
	}

	d, err := s.LoadSession(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "what is in this directory?" || len(d.Loops) != 1 || d.Loops[0].ID != a.LoopID() {
		t.Errorf("session %+v loops %+v", d.Session, d.Loops)
	}
	if len(d.Turns) != res.Turns {
		t.Fatalf("%d turns recorded, agent made %d", len(d.Turns), res.Turns)
	}
	var sum llm.Usage
	for _, e := range evs {
		if e.Turn == nil || (e.Kind != event.TurnStart && e.Kind != event.TurnEnd) {
			continue
		}
		tr := d.Turns[e.Turn.Index]
		if e.Kind == event.TurnStart {
			if tr.TriggeredBy != e.Trigger || tr.CorrelationID != e.CorrelationID || tr.StartedAt.UnixMilli() != e.Time.UnixMilli() {
				t.Errorf("turn %d header %+v vs turn_start %+v", tr.Index, tr, e)
			}
			continue
		}
		if tr.Status != session.TurnCompleted || tr.Usage != *e.Usage || tr.StopReason != e.StopReason || tr.EndedAt.UnixMilli() != e.Time.UnixMilli() {
			t.Errorf("turn %d %+v vs turn_end %+v", tr.Index, tr, e)
		}
		sum = sum.Add(tr.Usage)
	}
	if sum != a.Usage() {
		t.Errorf("recorded usage %+v, agent usage %+v", sum, a.Usage())
	}
	list, _ := s.ListSessions(ctx, session.ListOptions{})
	if len(list) != 1 || list[0].Usage != a.Usage() || list[0].Turns != 3 {
		t.Errorf("summary %+v", list)
	}
	if p, _ := s.Pending(ctx, a.LoopID()); p != nil {
		t.Errorf("pending after a finished loop: %+v", p)
	}
}
