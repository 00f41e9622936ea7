package storetest

// The Store contract itself (store.go), run against every implementation:
// filters, copies, atomic and validated Steps, Close, cancelled contexts, and
// that SQLite and Memory give the same answers for the same events.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/strata-agent/strata/session"
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// ListOptions.Cwd keeps the sessions of one working directory (exact match),
// still newest first and within Limit.

func testListSessionsFiltersByCwd(t *testing.T, _ Backend, s session.Store) {
	ctx := t.Context()
	for _, m := range []session.SessionMeta{{ID: "a1", Cwd: "/a"}, {ID: "b1", Cwd: "/b"}, {ID: "a2", Cwd: "/a"}, {ID: "a3", Cwd: "/a/"}} {
		if _, err := s.CreateSession(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	// Make a1 the most recently updated.
	f := NewScript("la1")
	f.Prompt("p", event.TriggerUser, Call{Resp: llm.AssistantText("x"), Stop: llm.StopEndTurn})
	Feed(t, s, "a1", f.Events)
	for _, c := range []struct {
		opts session.ListOptions
		want string
	}{
		{session.ListOptions{Cwd: "/a"}, "a1 a2"},
		{session.ListOptions{Cwd: "/a", Limit: 1}, "a1"},
		{session.ListOptions{Cwd: "/b"}, "b1"},
		{session.ListOptions{Cwd: "/c"}, ""},
		{session.ListOptions{Limit: 1}, "a1"},
	} {
		l, err := s.ListSessions(ctx, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, x := range l {
			ids = append(ids, x.ID)
			if c.opts.Cwd != "" && x.Cwd != c.opts.Cwd {
				t.Errorf("%+v: session %s has cwd %q", c.opts, x.ID, x.Cwd)
			}
		}
		if got := strings.Join(ids, " "); got != c.want {
			t.Errorf("%+v: listed %q, want %q", c.opts, got, c.want)
		}
	}
}

// What a store returns, and what a Step hands it, stay the caller's:
// changing them afterwards changes nothing stored.

func testValuesAreCopies(t *testing.T, _ Backend, s session.Store) {
	ctx := t.Context()
	sess, _ := s.CreateSession(ctx, session.SessionMeta{})
	a := MainScript("l")
	Feed(t, s, sess.ID, a.Events)
	last := a.LoopID
	h, _ := s.History(ctx, last)
	h[0].Content[0].Text = "changed"
	h[1].Content = nil
	d, _ := s.LoadSession(ctx, sess.ID)
	d.Messages[0].Content[0].Text = "changed"
	d.Turns[0].Usage.Input = -1
	d.Loops[0].ID = "changed"
	r, _ := s.ReadLoop(ctx, "l")
	r.Messages[0].Content[0].Text = "changed"
	r.Turns[0].Status = session.TurnFailed
	r, _ = s.ReadLoop(ctx, last)
	r.Before[0].Messages[0].Content[0].Text = "changed"
	r.Before[0].Turns[0].Status = session.TurnFailed
	p, _ := s.Pending(ctx, last)
	_ = append(p, llm.TextBlock("changed"))

	h, _ = s.History(ctx, last)
	JSONEq(t, "history after changing returned values", h, a.Hist)
	d2, _ := s.LoadSession(ctx, sess.ID)
	if d2.Messages[0].Content[0].Text == "changed" || d2.Turns[0].Usage.Input == -1 || d2.Loops[0].ID != "l" {
		t.Errorf("LoadSession returned the store's own values: %+v", d2.Turns[0])
	}
	if r, _ := s.ReadLoop(ctx, "l"); r.Turns[0].Status != session.TurnCompleted {
		t.Errorf("ReadLoop returned the store's own turns: %+v", r.Turns[0])
	}

	blocks := []llm.Block{llm.TextBlock("kept")}
	step := session.Step{SessionID: sess.ID, LoopID: "m", Loop: &session.Loop{Trigger: event.TriggerUser},
		InsertTurn: &session.Turn{LoopID: "m", Status: session.TurnInProgress},
		Insert:     []session.Message{{LoopID: "m", Kind: session.KindInput, Role: llm.RoleUser, Content: blocks}}}
	if err := s.WriteStep(ctx, step); err != nil {
		t.Fatal(err)
	}
	blocks[0].Text = "changed"
	if h, _ := s.History(ctx, "m"); h[0].Text() != "kept" {
		t.Errorf("the store kept the Step's own blocks: %+v", h)
	}
}

// A Step that cannot be applied, whole, returns an error and stores nothing
// of itself — not the session's update time or title, not the loop, not the
// turn, not the parts before the failing one.

func testWriteStepIsAtomic(t *testing.T, _ Backend, s session.Store) {
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, session.SessionMeta{ID: "s1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateSession(ctx, session.SessionMeta{ID: "s2"}); err != nil {
		t.Fatal(err)
	}
	a := NewScript("l")
	m, res := ToolCall("x", "glob")
	a.Prompt("hi", event.TriggerUser, Call{Resp: m, Stop: llm.StopToolUse, Usage: Usage(1, 1, 0, 0), Results: res},
		Call{Resp: llm.AssistantText("done"), Stop: llm.StopEndTurn})
	Feed(t, s, "s1", a.Events)
	before := Snapshot(t, s)
	later := a.Clock.Add(time.Hour)
	text := []llm.Block{llm.TextBlock("t")}
	part := func(seq, p int, kind session.MessageKind, role llm.Role) session.Message {
		return session.Message{LoopID: "l", Seq: seq, Part: p, Kind: kind, Role: role, Content: text}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	failed := &session.Turn{LoopID: "l", Index: 0, Status: session.TurnFailed, Error: "boom", EndedAt: later}
	for _, c := range []struct {
		name string
		ctx  context.Context
		step session.Step
		is   error  // the error wraps it, when set
		says string // the error contains it, when set
	}{
		{"unknown session", ctx, session.Step{SessionID: "nosuch", LoopID: "l", Time: later}, session.ErrNotFound, "nosuch"},
		{"loop of another session", ctx, session.Step{SessionID: "s2", LoopID: "l", Time: later, Title: "t", Loop: &session.Loop{Trigger: event.TriggerUser}}, nil, "belongs to session s1"},
		{"turn already recorded", ctx, session.Step{SessionID: "s1", LoopID: "l", Time: later, InsertTurn: &session.Turn{LoopID: "l", Index: 1, Status: session.TurnInProgress}}, nil, "turn 1"},
		{"update of a missing turn", ctx, session.Step{SessionID: "s1", LoopID: "l", Time: later, UpdateTurn: &session.Turn{LoopID: "l", Index: 9, Status: session.TurnCompleted}}, session.ErrNotFound, "turn 9"},
		{"part already stored", ctx, session.Step{SessionID: "s1", LoopID: "l", Time: later, InsertTurn: &session.Turn{LoopID: "l", Index: 2, Status: session.TurnInProgress},
			Insert: []session.Message{part(5, 0, session.KindInput, llm.RoleUser), part(0, 0, session.KindInput, llm.RoleUser)}}, nil, "message 0.0"},
		{"part inserted twice", ctx, session.Step{SessionID: "s1", LoopID: "new", Time: later, Loop: &session.Loop{Trigger: event.TriggerUser},
			Insert: []session.Message{{LoopID: "new", Kind: session.KindInput, Role: llm.RoleUser}, {LoopID: "new", Kind: session.KindInput, Role: llm.RoleUser}}}, nil, "message 0.0"},
		{"replace of a missing part", ctx, session.Step{SessionID: "s1", LoopID: "l", Time: later, UpdateTurn: failed,
			Replace: []session.Message{part(99, 0, session.KindToolResults, llm.RoleUser)}}, session.ErrNotFound, "message 99.0"},
		{"replace of a dropped part", ctx, session.Step{SessionID: "s1", LoopID: "l", Time: later, UpdateTurn: failed, DropOutput: true,
			Replace: []session.Message{part(2, 0, session.KindToolResults, llm.RoleUser)}}, session.ErrNotFound, "message 2.0"},
		{"unknown loop without Loop", ctx, session.Step{SessionID: "s1", LoopID: "nope", Time: later, InsertTurn: &session.Turn{LoopID: "nope", Status: session.TurnInProgress}}, nil, "nope"},
		{"cancelled context", cancelled, session.Step{SessionID: "s1", LoopID: "l", Time: later, Title: "t"}, context.Canceled, ""},
		// Invalid steps.
		{"no session id", ctx, session.Step{LoopID: "l"}, nil, "session id is empty"},
		{"no loop id", ctx, session.Step{SessionID: "s1"}, nil, "loop id is empty"},
		{"insert and update", ctx, session.Step{SessionID: "s1", LoopID: "l", InsertTurn: failed, UpdateTurn: failed}, nil, "at most one"},
		{"drop without a turn", ctx, session.Step{SessionID: "s1", LoopID: "l", DropOutput: true}, nil, "DropOutput"},
		{"turn of another loop", ctx, session.Step{SessionID: "s1", LoopID: "l", UpdateTurn: &session.Turn{LoopID: "k", Status: session.TurnFailed}}, nil, `loop id "k"`},
		{"bad status", ctx, session.Step{SessionID: "s1", LoopID: "l", UpdateTurn: &session.Turn{LoopID: "l", Status: "done"}}, nil, `status "done"`},
		{"part of another loop", ctx, session.Step{SessionID: "s1", LoopID: "l", Insert: []session.Message{{LoopID: "k", Kind: session.KindInput, Role: llm.RoleUser}}}, nil, `loop id "k"`},
		{"bad role", ctx, session.Step{SessionID: "s1", LoopID: "l", Insert: []session.Message{{LoopID: "l", Seq: 7, Kind: session.KindInput, Role: "system"}}}, nil, `role "system"`},
		{"bad kind", ctx, session.Step{SessionID: "s1", LoopID: "l", Insert: []session.Message{{LoopID: "l", Seq: 7, Kind: "extra", Role: llm.RoleUser}}}, nil, `kind "extra"`},
	} {
		err := s.WriteStep(c.ctx, c.step)
		switch {
		case err == nil:
			t.Errorf("%s: step accepted", c.name)
			continue
		case c.is != nil && !errors.Is(err, c.is):
			t.Errorf("%s: %v does not wrap %v", c.name, err, c.is)
		case !strings.Contains(err.Error(), c.says):
			t.Errorf("%s: %q does not say %q", c.name, err, c.says)
		}
		if after := Snapshot(t, s); after != before {
			t.Fatalf("%s: the failed step changed the store:\n before %s\n after  %s", c.name, before, after)
		}
	}
	if _, err := s.ReadLoop(ctx, "new"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("a failed step created loop new: %v", err)
	}
}

// snapshot is everything a store holds, as JSON.
func Snapshot(t *testing.T, s session.Store) string {
	t.Helper()
	ctx := t.Context()
	list, err := s.ListSessions(ctx, session.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var all []any
	for _, x := range list {
		d, err := s.LoadSession(ctx, x.ID)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, x, d)
	}
	b, _ := json.Marshal(all)
	return string(b)
}

// After Close every method fails (and a second Close does not panic).

func testClosedStoreFails(t *testing.T, _ Backend, s session.Store) {
	ctx := t.Context()
	sess, _ := s.CreateSession(ctx, session.SessionMeta{})
	Feed(t, s, sess.ID, MainScript("l").Events)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	calls := map[string]func() error{
		"CreateSession": func() error { _, err := s.CreateSession(ctx, session.SessionMeta{}); return err },
		"ListSessions":  func() error { _, err := s.ListSessions(ctx, session.ListOptions{}); return err },
		"LoadSession":   func() error { _, err := s.LoadSession(ctx, sess.ID); return err },
		"LatestLoop":    func() error { _, err := s.LatestLoop(ctx, sess.ID); return err },
		"History":       func() error { _, err := s.History(ctx, "l"); return err },
		"Pending":       func() error { _, err := s.Pending(ctx, "l"); return err },
		"NextTurnIndex": func() error { _, err := s.NextTurnIndex(ctx, "l"); return err },
		"Branch":        func() error { return s.Branch(ctx, sess.ID, "l", 0, "b") },
		"ReadLoop":      func() error { _, err := s.ReadLoop(ctx, "l"); return err },
		"WriteStep":     func() error { return s.WriteStep(ctx, session.Step{SessionID: sess.ID, LoopID: "l", Title: "t"}) },
		"AddPing":       func() error { return s.AddPing(ctx, sess.ID, session.Ping{}) },
		"SaveTLDR":      func() error { return s.SaveTLDR(ctx, sess.ID, session.TLDRKey("x"), "y") },
		"TLDRs":         func() error { _, err := s.TLDRs(ctx, sess.ID); return err },
	}
	for name, call := range calls {
		if err := call(); err == nil {
			t.Errorf("%s after Close succeeded", name)
		}
	}
	s.Close()
}

// Agree feeds the same events to a new store of each backend (each a full
// session.Store: the events include a branch and a ping) and fails the
// test unless they give the same records: sessions,
// loops, turns, parts, summaries, and every loop's history, pending calls,
// next turn index and the latest loop (times the stores pick themselves —
// creation, a branch — aside).
func Agree(t *testing.T, backends ...Backend) {
	a := MainScript("main")
	c := MainScript("cut")
	cut := 0
	for i, e := range c.Events {
		if e.Kind == event.ToolExecutionEnd && e.ToolCall.ID == "t0-1" {
			cut = i + 1
		}
	}
	var got []string
	for _, b := range backends {
		s := full(b.Open(t))
		ctx := t.Context()
		for _, id := range []string{"s1", "s2"} {
			if _, err := s.CreateSession(ctx, session.SessionMeta{ID: id, Cwd: "/w"}); err != nil {
				t.Fatal(err)
			}
		}
		Feed(t, s, "s1", a.Events)
		Feed(t, s, "s2", c.Events[:cut])
		Feed(t, s, "s1", []event.Event{PingEvent(a.Clock.Add(time.Minute), 1, Usage(3, 1, 2000, 0))})
		if err := s.Branch(ctx, "s1", "main-p3", 0, "b4"); err != nil {
			t.Fatal(err)
		}
		var all []any
		list, _ := s.ListSessions(ctx, session.ListOptions{})
		for i := range list {
			list[i].CreatedAt = time.Time{}
		}
		all = append(all, list)
		for _, id := range []string{"s1", "s2"} {
			d, _ := s.LoadSession(ctx, id)
			d.CreatedAt = time.Time{}
			for i := range d.Loops {
				if d.Loops[i].Trigger == event.TriggerBranch {
					d.Loops[i].CreatedAt = time.Time{}
				}
			}
			latest, err := s.LatestLoop(ctx, id)
			all = append(all, d, latest, errText(err))
		}
		for _, l := range append(a.Loops, "cut", "b4") {
			h, err1 := s.History(ctx, l)
			p, err2 := s.Pending(ctx, l)
			n, err3 := s.NextTurnIndex(ctx, l)
			r, err4 := s.ReadLoop(ctx, l)
			r.CreatedAt = time.Time{}
			all = append(all, h, p, n, r, errText(errors.Join(err1, err2, err3, err4)))
		}
		b, _ := json.Marshal(all)
		got = append(got, string(b))
	}
	for i := 1; i < len(got); i++ {
		if got[i] != got[0] {
			t.Errorf("%s and %s disagree:\n%s\n%s", backends[0].Name, backends[i].Name, got[0], got[i])
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A loop per user prompt (docs/turn.md, rule 2: "turn_index — Zero-based
// index within the current loop (0 = first turn after AgentStart)"): the
// store chains a conversation's loops by PreviousLoopID. Each loop's turns
// are its own, indexed from 0; History, Pending and ReadLoop follow the
// chain; message positions go on across loops; a loop may only continue a
// stored loop of its own session.

func testLoopChain(t *testing.T, _ Backend, s session.Store) {
	ctx := t.Context()
	sess, _ := s.CreateSession(ctx, session.SessionMeta{})
	a := NewScript("one")
	m, res := ToolCall("t", "glob")
	a.Prompt("first", event.TriggerUser, Call{Resp: m, Stop: llm.StopToolUse, Usage: Usage(1, 1, 0, 0), Results: res},
		Call{Resp: llm.AssistantText("done"), Stop: llm.StopEndTurn, Usage: Usage(1, 1, 0, 0)})
	a.Prompt("second", event.TriggerUser, Call{Resp: m, Stop: llm.StopToolUse, Usage: Usage(1, 1, 0, 0), Results: res},
		Call{Resp: llm.AssistantText("again"), Stop: llm.StopEndTurn, Usage: Usage(1, 1, 0, 0)})
	Feed(t, s, sess.ID, a.Events)

	d, err := s.LoadSession(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Loops) != 2 || d.Loops[0].ID != "one" || d.Loops[0].PreviousLoopID != "" || d.Loops[1].ID != "one-p2" || d.Loops[1].PreviousLoopID != "one" {
		t.Fatalf("loops %+v; want one, then one-p2 continuing it", d.Loops)
	}
	var turns []string
	for _, tr := range d.Turns {
		turns = append(turns, fmt.Sprintf("%s:%d:%s", tr.LoopID, tr.Index, tr.TriggeredBy))
	}
	if got, want := strings.Join(turns, " "), "one:0:user one:1:continuation one-p2:0:user one-p2:1:continuation"; got != want {
		t.Errorf("turns %s; want %s", got, want)
	}
	var seqs []string
	for _, p := range d.Messages {
		seqs = append(seqs, fmt.Sprintf("%s#%d.%d", p.LoopID, p.Seq, p.Part))
	}
	if got, want := strings.Join(seqs, " "), "one#0.0 one#1.0 one#2.0 one#3.0 one-p2#4.0 one-p2#5.0 one-p2#6.0 one-p2#7.0"; got != want {
		t.Errorf("message positions %s; want %s (going on across loops)", got, want)
	}
	h, err := s.History(ctx, "one-p")
	if err != nil {
		t.Fatal(err)
	}
	JSONEq(t, "history of the second loop", h, a.Hist)
	h, _ = s.History(ctx, "one")
	JSONEq(t, "history of the first loop", h, a.Hist[:4])
	r, err := s.ReadLoop(ctx, "one-p2")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Before) != 1 || r.Before[0].ID != "one" || len(r.Before[0].Turns) != 2 || len(r.Before[0].Messages) != 4 ||
		len(r.Turns) != 2 || len(r.Messages) != 4 || r.ConversationID() != "one" || len(r.Parts()) != 8 {
		t.Errorf("read loop one-p2: %+v", r)
	}
	for loop, want := range map[string]int{"one": 2, "one-p2": 2} {
		if n, err := s.NextTurnIndex(ctx, loop); err != nil || n != want {
			t.Errorf("next turn index of %s: %d %v; want %d", loop, n, err, want)
		}
	}

	// A loop continues only a stored loop of its own session; a refused
	// step stores nothing.
	other, _ := s.CreateSession(ctx, session.SessionMeta{})
	for name, c := range map[string]struct {
		sid, prev string
		notFound  bool
	}{
		"unknown previous loop":   {sess.ID, "nosuch", true},
		"previous of another one": {other.ID, "one", false},
	} {
		st := session.Step{SessionID: c.sid, LoopID: "x-" + c.sid, Loop: &session.Loop{Trigger: event.TriggerUser, PreviousLoopID: c.prev},
			InsertTurn: &session.Turn{LoopID: "x-" + c.sid, Status: session.TurnInProgress}}
		err := s.WriteStep(ctx, st)
		if err == nil || !strings.Contains(err.Error(), c.prev) || errors.Is(err, session.ErrNotFound) != c.notFound {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := s.ReadLoop(ctx, "x-"+c.sid); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("%s: the refused step stored its loop: %v", name, err)
		}
	}
}
