package storetest

import (
	"errors"
	"fmt"
	"github.com/strata-agent/strata/session"
	"strings"
	"testing"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// The whole scripted session, recorded: History equals the agent's history
// (merges included), and each turn record matches its events.

func testRecorderMultiTurnMatchesHistoryAndEvents(t *testing.T, _ Backend, s session.Store) {
	ctx := t.Context()
	sess, err := s.CreateSession(ctx, session.SessionMeta{Cwd: "/w", Provider: "fake", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	a := MainScript("loop1")
	Feed(t, s, sess.ID, a.Events)

	// A loop per user prompt (docs/turn.md, rule 2: "turn_index — Zero-based
	// index within the current loop (0 = first turn after AgentStart)"): the
	// four prompts are four loops, chained, and the last one's history is the
	// whole conversation.
	if want := []string{"loop1", "loop1-p2", "loop1-p3", "loop1-p4"}; strings.Join(a.Loops, " ") != strings.Join(want, " ") {
		t.Fatalf("fake loops %q; want %q", a.Loops, want)
	}
	h, err := s.History(ctx, a.LoopID)
	if err != nil {
		t.Fatal(err)
	}
	JSONEq(t, "history", h, a.Hist)
	if h1, _ := s.History(ctx, "loop1"); len(h1) != 6 {
		t.Errorf("history of the first loop: %d messages, want the first prompt's 6", len(h1))
	}
	if len(h) != 10 {
		t.Fatalf("history has %d messages, want 10", len(h))
	}
	// The failed turn's prompt and the next one share one user message; the
	// max_tokens call's synthesized results and the last prompt too.
	if got := h[6].Text(); got != "and now?try again" || h[6].Role != llm.RoleUser {
		t.Errorf("merged prompt message: %q", got)
	}

	d, err := s.LoadSession(ctx, sess.ID[:6])
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "what is here?" || d.Cwd != "/w" || len(d.Loops) != 4 {
		t.Errorf("session detail: %+v, %d loops", d.Session, len(d.Loops))
	}
	for i, l := range d.Loops {
		prev := ""
		if i > 0 {
			prev = a.Loops[i-1]
		}
		if l.ID != a.Loops[i] || l.PreviousLoopID != prev || l.Trigger != event.TriggerUser || l.BranchedFromLoop != "" {
			t.Errorf("loop %d: %+v; want %s after %q", i, l, a.Loops[i], prev)
		}
	}
	// Check each turn against its turn_start / turn_end events.
	starts, ends := map[event.TurnID]event.Event{}, map[event.TurnID]event.Event{}
	for _, e := range a.Events {
		switch e.Kind {
		case event.TurnStart:
			starts[*e.Turn] = e
		case event.TurnEnd:
			ends[*e.Turn] = e
		}
	}
	var ids []string
	for _, tr := range d.Turns {
		ids = append(ids, fmt.Sprintf("%s:%d", tr.LoopID, tr.Index))
	}
	if got, want := strings.Join(ids, " "), "loop1:0 loop1:1 loop1:2 loop1-p2:0 loop1-p3:0 loop1-p4:0"; got != want {
		t.Fatalf("turns recorded %s; want %s", got, want)
	}
	var sum llm.Usage
	for _, tr := range d.Turns {
		st, en := starts[event.TurnID{LoopID: tr.LoopID, Index: tr.Index}], ends[event.TurnID{LoopID: tr.LoopID, Index: tr.Index}]
		if tr.TriggeredBy != st.Trigger || tr.CorrelationID != st.CorrelationID || !tr.StartedAt.Equal(st.Time) || !tr.EndedAt.Equal(en.Time) {
			t.Errorf("turn %d header %+v does not match events %+v / %+v", tr.Index, tr, st, en)
		}
		wantStatus, wantUsage := session.TurnCompleted, llm.Usage{}
		if en.Error != "" {
			wantStatus = session.TurnFailed
			if tr.Error != en.Error {
				t.Errorf("turn %d error %q", tr.Index, tr.Error)
			}
		} else {
			wantUsage = *en.Usage
		}
		if tr.Status != wantStatus || tr.Usage != wantUsage || tr.StopReason != en.StopReason {
			t.Errorf("turn %d: status %s usage %+v stop %s; want %s %+v %s", tr.Index, tr.Status, tr.Usage, tr.StopReason, wantStatus, wantUsage, en.StopReason)
		}
		sum = sum.Add(tr.Usage)
	}
	kinds := map[session.MessageKind]int{}
	for _, m := range d.Messages {
		kinds[m.Kind]++
	}
	if kinds[session.KindInput] != 4 || kinds[session.KindOutput] != 5 || kinds[session.KindToolResults] != 3 {
		t.Errorf("message parts by kind: %v", kinds)
	}
	if n := d.Messages[len(d.Messages)-1]; n.Seq != 9 || n.Part != 0 || n.Kind != session.KindOutput {
		t.Errorf("last part %+v", n)
	}

	list, err := s.ListSessions(ctx, session.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Turns != 6 || list[0].Usage != sum || list[0].Usage.CacheRead != 740 || list[0].Usage.CacheWrite != 55 {
		t.Errorf("summary %+v, want 6 turns and usage %+v", list, sum)
	}
	if p, err := s.Pending(ctx, a.LoopID); err != nil || p != nil {
		t.Errorf("pending after a finished session: %v %v", p, err)
	}
	if n, err := s.NextTurnIndex(ctx, "loop1"); err != nil || n != 3 {
		t.Errorf("next turn index of the first loop %d %v; want 3", n, err)
	}
	if n, err := s.NextTurnIndex(ctx, a.LoopID); err != nil || n != 1 {
		t.Errorf("next turn index of the last loop %d %v; want 1", n, err)
	}
}

// A crash after any event leaves exactly the completed steps: for every cut
// point, a fresh process reopening the store sees the history the agent held
// at the last completed step (never a half-written turn).

func testRecorderCrashAtEveryEvent(t *testing.T, be Backend, s session.Store) {
	ctx := t.Context()
	a := MainScript("loopc")
	for k := 0; k <= len(a.Events); k++ {
		if k > 0 {
			s = full(be.Open(t))
		}
		sess, err := s.CreateSession(ctx, session.SessionMeta{})
		if err != nil {
			t.Fatal(err)
		}
		Feed(t, s, sess.ID, a.Events[:k])
		s2 := be.crash(t, s)
		latest, err := s2.LatestLoop(ctx, sess.ID)
		var h []llm.Message
		if err == nil {
			h, err = s2.History(ctx, latest)
		}
		if errors.Is(err, session.ErrNotFound) {
			h, err = nil, nil
		}
		if err != nil {
			t.Fatal(err)
		}
		want := []llm.Message{}
		if k > 0 {
			want = a.Snap[k-1]
		}
		if len(h) != len(want) {
			t.Fatalf("cut after %d events (%s): %d messages stored, want %d", k, a.Events[max(k-1, 0)].Kind, len(h), len(want))
		}
		if len(want) > 0 {
			JSONEq(t, "history after cut", h, want)
		}
		s2.Close()
	}
}

// A crash after 2 of 3 tools: the two results are kept, the turn stays in
// progress with the model call's usage, and Pending names the third call.

func testRecorderCrashMidTools(t *testing.T, be Backend, s session.Store) {
	ctx := t.Context()
	a := MainScript("loopm")
	cut := 0
	for i, e := range a.Events {
		if e.Kind == event.ToolExecutionEnd && e.ToolCall.ID == "t0-1" {
			cut = i + 1
		}
	}
	sess, _ := s.CreateSession(ctx, session.SessionMeta{})
	Feed(t, s, sess.ID, a.Events[:cut+1]) // + the third tool's start
	s = be.crash(t, s)
	h, err := s.History(ctx, "loopm")
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 3 || len(h[2].Content) != 2 || h[2].Content[1].ID != "t0-1" {
		t.Fatalf("history after crash: %+v", h)
	}
	p, err := s.Pending(ctx, "loopm")
	if err != nil || len(p) != 1 || p[0].ID != "t0-2" || p[0].Name != "grep" {
		t.Fatalf("pending = %+v, %v; want the grep call t0-2", p, err)
	}
	d, _ := s.LoadSession(ctx, sess.ID)
	if tr := d.Turns[0]; tr.Status != session.TurnInProgress || tr.Usage != Usage(100, 20, 0, 50) || !tr.EndedAt.IsZero() {
		t.Errorf("turn after crash: %+v", tr)
	}

	// A resume that runs the missing tool and ends the turn, seen by a new
	// recorder: the turn completes in place.
	rest := a.Events[cut+1:]
	var tail []event.Event
	for _, e := range rest {
		if e.Kind == event.ToolExecutionEnd || e.Kind == event.TurnEnd {
			tail = append(tail, e)
		}
		if e.Kind == event.TurnEnd {
			break
		}
	}
	Feed(t, s, sess.ID, tail)
	if p, _ := s.Pending(ctx, "loopm"); p != nil {
		t.Errorf("pending after resume: %+v", p)
	}
	h, _ = s.History(ctx, "loopm")
	JSONEq(t, "history after resumed turn", h, a.Snap[cut+len(tail)+1])
	d, _ = s.LoadSession(ctx, sess.ID)
	if d.Turns[0].Status != session.TurnCompleted {
		t.Errorf("resumed turn status %s", d.Turns[0].Status)
	}
}

// A crash mid-stream loses the turn's input too (it was never committed) and
// nothing of the call; the previous turn is intact.

func testRecorderCrashMidStream(t *testing.T, _ Backend, s session.Store) {
	ctx := t.Context()
	a := MainScript("loops")
	cut := 0
	for i, e := range a.Events {
		if e.Kind == event.MessageUpdate && e.Turn.Index == 1 {
			cut = i + 1
			break
		}
	}
	sess, _ := s.CreateSession(ctx, session.SessionMeta{})
	Feed(t, s, sess.ID, a.Events[:cut])
	d, _ := s.LoadSession(ctx, sess.ID)
	if len(d.Turns) != 1 || d.Turns[0].Status != session.TurnCompleted {
		t.Fatalf("turns: %+v", d.Turns)
	}
	if p, _ := s.Pending(ctx, "loops"); p != nil {
		t.Errorf("pending: %+v", p)
	}
}

// A turn that fails after its assistant message was committed (not what
// agent.Agent does, but the contract) keeps its input and drops its output.

func testRecorderFailedTurnDropsCommittedOutput(t *testing.T, _ Backend, s session.Store) {
	ctx := t.Context()
	a := NewScript("loopf")
	m, res := ToolCall("x", "glob", "grep")
	a.Prompt("hi", event.TriggerUser, Call{Resp: m, Stop: llm.StopToolUse, Usage: Usage(1, 1, 0, 0), Results: res},
		Call{Resp: llm.AssistantText("bye"), Stop: llm.StopEndTurn})
	var evs []event.Event
	for _, e := range a.Events {
		if e.Kind == event.ToolExecutionEnd && e.ToolCall.ID == "x-1" {
			// Err only, as an event that did not pass through Bus.Emit.
			evs = append(evs, event.Event{Kind: event.TurnEnd, Turn: e.Turn, Err: errors.New("tool crashed the turn"), Time: e.Time})
			break
		}
		evs = append(evs, e)
	}
	sess, _ := s.CreateSession(ctx, session.SessionMeta{})
	Feed(t, s, sess.ID, evs)
	h, _ := s.History(ctx, "loopf")
	JSONEq(t, "history", h, []llm.Message{llm.UserText("hi")})
	d, _ := s.LoadSession(ctx, sess.ID)
	if len(d.Turns) != 1 || d.Turns[0].Status != session.TurnFailed || d.Turns[0].Error != "tool crashed the turn" {
		t.Fatalf("turn: %+v", d.Turns)
	}
	for _, m := range d.Messages {
		if m.Kind != session.KindInput {
			t.Errorf("failed turn left a %s part", m.Kind)
		}
	}
}

// Sub-agent loops interleave with their parent's events; the child's loop
// gets its parent, and LatestLoop skips it.

func testRecorderSubAgentLoop(t *testing.T, _ Backend, s session.Store) {
	ctx := t.Context()
	parent := NewScript("parent")
	child := NewScript("child")
	child.parent = parent
	m, res := ToolCall("p", "agent")
	// Play the parent's first call by hand around the child's loop: emit the
	// parent's events up to the tool start, the child's loop, then the rest.
	parent.Prompt("delegate", event.TriggerUser, Call{Resp: m, Stop: llm.StopToolUse, Usage: Usage(1, 1, 0, 0), Results: res},
		Call{Resp: llm.AssistantText("done"), Stop: llm.StopEndTurn})
	full := parent.Events
	parent.Events = nil
	cut := 0
	for i, e := range full {
		if e.Kind == event.ToolExecutionStart {
			cut = i + 1
		}
	}
	child.Prompt("sub task", event.TriggerSubAgent, Call{Resp: llm.AssistantText("sub done"), Stop: llm.StopEndTurn, Usage: Usage(5, 5, 0, 0)})
	var evs []event.Event
	evs = append(evs, full[:cut]...)
	for _, e := range parent.Events {
		if e.Kind != event.SessionTurnStart && e.Kind != event.SessionTurnEnd {
			evs = append(evs, e)
		}
	}
	end := full[cut]
	end.ChildLoopID = "child"
	evs = append(evs, end)
	evs = append(evs, full[cut+1:]...)

	sess, _ := s.CreateSession(ctx, session.SessionMeta{})
	Feed(t, s, sess.ID, evs)
	d, err := s.LoadSession(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Loops) != 2 || d.Loops[1].ID != "child" || d.Loops[1].ParentLoopID != "parent" || d.Loops[1].Trigger != event.TriggerSubAgent {
		t.Fatalf("loops: %+v", d.Loops)
	}
	if id, err := s.LatestLoop(ctx, sess.ID); err != nil || id != "parent" {
		t.Errorf("latest loop %q %v", id, err)
	}
	h, _ := s.History(ctx, "child")
	JSONEq(t, "child history", h, child.Hist)
	h, _ = s.History(ctx, "parent")
	if len(h) != 4 {
		t.Errorf("parent history: %d messages", len(h))
	}
}

// Bad input returns errors, never panics, and writes nothing.

func testRecorderRejectsBadEvents(t *testing.T, _ Backend, s session.Store) {
	ctx := t.Context()
	r := session.NewRecorder(s, "nosuch")
	a := MainScript("l")
	var err error
	for _, e := range a.Events {
		if err = r.Observe(ctx, e); err != nil {
			break
		}
	}
	if !errors.Is(err, session.ErrNotFound) || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("unknown session: %v", err)
	}
	if r.Err() == nil {
		t.Error("Err() lost the error")
	}
	sess, _ := s.CreateSession(ctx, session.SessionMeta{})
	r = session.NewRecorder(s, sess.ID)
	for _, e := range []event.Event{
		{Kind: event.TurnEnd},
		{Kind: event.ToolExecutionEnd, Turn: &event.TurnID{LoopID: "l", Index: 3}},
		{Kind: event.MessageEnd, Turn: &event.TurnID{LoopID: "l", Index: 0}, Message: &llm.Message{Role: llm.RoleAssistant}},
	} {
		if err := r.Observe(ctx, e); err == nil {
			t.Errorf("%s accepted", e.Kind)
		}
	}
	r.Observe(ctx, event.Event{Kind: event.TurnStart, Turn: &event.TurnID{LoopID: "l"}})
	if err := r.Observe(ctx, event.Event{Kind: event.MessageEnd, Turn: &event.TurnID{LoopID: "l"}}); err == nil {
		t.Error("message_end without a message accepted")
	}
	if err := r.Observe(ctx, event.Event{Kind: event.ToolExecutionEnd, Turn: &event.TurnID{LoopID: "l"}, ToolResult: &llm.Block{}}); err == nil {
		t.Error("tool result before the assistant message accepted")
	}
	if _, err := s.History(ctx, "l"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("bad events wrote loop l: %v", err)
	}
}
