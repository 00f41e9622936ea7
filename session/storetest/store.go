package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/strata-agent/strata/session"
	"strings"
	"sync"
	"testing"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// Usage sums over all loops' turns, cache tokens included (1-hour writes
// apart); newest first;
// ids resolve by unique prefix.

func testListSessionsAndPrefixes(t *testing.T, _ Backend, s session.Store) {
	ctx := t.Context()
	a, _ := s.CreateSession(ctx, session.SessionMeta{ID: "abc111", Title: "first\nignored"})
	b, _ := s.CreateSession(ctx, session.SessionMeta{ID: "abc222"})
	if _, err := s.CreateSession(ctx, session.SessionMeta{ID: "abc111"}); err == nil || !strings.Contains(err.Error(), "abc111") {
		t.Errorf("duplicate id: %v", err)
	}
	fa := NewScript("la")
	fa.Prompt("p", event.TriggerUser,
		Call{Resp: llm.AssistantText("x"), Stop: llm.StopEndTurn, Usage: llm.Usage{Input: 1, Output: 2, Reasoning: 1, CacheRead: 3, CacheWrite: 4, Total: 10}})
	fa.Prompt("q", event.TriggerUser,
		Call{Resp: llm.AssistantText("y"), Stop: llm.StopEndTurn, Usage: llm.Usage{Input: 10, Output: 20, CacheRead: 30, CacheWrite: 40, CacheWrite1h: 7, Total: 100}})
	Feed(t, s, a.ID, fa.Events)
	fb := NewScript("lb")
	fb.Clock = fb.Clock.AddDate(1, 0, 0)
	fb.Prompt("r", event.TriggerUser, Call{Resp: llm.AssistantText("z"), Stop: llm.StopEndTurn, Usage: Usage(5, 5, 5, 5)})
	Feed(t, s, b.ID, fb.Events)

	list, err := s.ListSessions(ctx, session.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != "abc222" || list[1].ID != "abc111" {
		t.Fatalf("order: %+v", list)
	}
	if u := list[1].Usage; list[1].Turns != 2 || u != (llm.Usage{Input: 11, Output: 22, Reasoning: 1, CacheRead: 33, CacheWrite: 44, CacheWrite1h: 7, Total: 110}) {
		t.Errorf("session a: %d turns, usage %+v", list[1].Turns, u)
	}
	if list[1].Title != "first" || list[0].Title != "r" {
		t.Errorf("titles %q %q", list[1].Title, list[0].Title)
	}
	if l, _ := s.ListSessions(ctx, session.ListOptions{Limit: 1}); len(l) != 1 {
		t.Errorf("limit 1 gave %d", len(l))
	}
	if _, err := s.LoadSession(ctx, "abc"); !errors.Is(err, session.ErrAmbiguous) {
		t.Errorf("ambiguous prefix: %v", err)
	}
	if _, err := s.LoadSession(ctx, "zzz"); !errors.Is(err, session.ErrNotFound) || !strings.Contains(err.Error(), "zzz") {
		t.Errorf("unknown id: %v", err)
	}
	if d, err := s.LoadSession(ctx, "abc2"); err != nil || d.ID != "abc222" {
		t.Errorf("prefix: %v", err)
	}
	if id, err := s.LatestLoop(ctx, "abc1"); err != nil || id != fa.LoopID {
		t.Errorf("latest loop %q %v", id, err)
	}
	if h, err := s.History(ctx, "l"); !errors.Is(err, session.ErrAmbiguous) {
		t.Errorf("ambiguous loop prefix: %v %v", h, err)
	}
	empty, _ := s.CreateSession(ctx, session.SessionMeta{})
	if _, err := s.LatestLoop(ctx, empty.ID); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("latest loop of an empty session: %v", err)
	}
}

// A branch holds the parent's history through the branch turn — not the next
// prompt the loop merged into that turn's last message — without copying it
// (it continues the loop it was taken from), and records new turns on top of
// it as the agent would, from index 0 (docs/turn.md, rule 3: "Branch — First
// turn of a Branch continuation").

func testBranch(t *testing.T, _ Backend, s session.Store) {
	ctx := t.Context()
	sess, _ := s.CreateSession(ctx, session.SessionMeta{})
	a := MainScript("main") // loops main (turns 0-2), main-p2 (failed), main-p3 (max_tokens), main-p4
	Feed(t, s, sess.ID, a.Events)

	if err := s.Branch(ctx, sess.ID, "main", 0, "b0"); err != nil {
		t.Fatal(err)
	}
	h, _ := s.History(ctx, "b0")
	JSONEq(t, "branch at turn 0", h, a.Hist[:3])

	// Turn 0 of main-p3 (max_tokens) ends with synthesized results, into
	// which main-p4's prompt was merged.
	if err := s.Branch(ctx, sess.ID[:8], "main-p3", 0, "b4"); err != nil {
		t.Fatal(err)
	}
	h, _ = s.History(ctx, "b4")
	want := CloneMessages(a.Hist[:9])
	want[8].Content = want[8].Content[:2]
	JSONEq(t, "branch at turn main-p3:0", h, want)
	if n, _ := s.NextTurnIndex(ctx, "b4"); n != 0 {
		t.Errorf("next turn of branch %d; want 0", n)
	}
	if r, _ := s.ReadLoop(ctx, "b4"); len(r.Messages) != 0 || len(r.Turns) != 0 || len(r.Before) != 3 || r.ConversationID() != "main" {
		t.Errorf("the branch copied messages or lost its chain: %+v", r)
	}

	// The branched agent goes on from there.
	b := NewScript("b4")
	b.Hist, b.Clock = CloneMessages(want), a.Clock
	b.Prompt("other way", event.TriggerBranch, Call{Resp: llm.AssistantText("fine"), Stop: llm.StopEndTurn, Usage: Usage(1, 1, 1, 1)})
	Feed(t, s, sess.ID, b.Events)
	h, _ = s.History(ctx, "b4")
	JSONEq(t, "branch after a new turn", h, b.Hist)
	if h[8].Text() != "other way" {
		t.Errorf("new prompt not merged into the inherited results: %+v", h[8])
	}
	// The parent keeps its own history.
	h, _ = s.History(ctx, "main-p4")
	JSONEq(t, "parent after the branch", h, a.Hist)
	// A branch of a branch, at its own turn; its inherited turns belong to
	// the loops they ran in.
	if err := s.Branch(ctx, sess.ID, "b4", 0, "b4b0"); err != nil {
		t.Fatal(err)
	}
	h, _ = s.History(ctx, "b4b0")
	JSONEq(t, "branch of a branch", h, b.Hist)
	if err := s.Branch(ctx, sess.ID, "b4", 2, "b4b2"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("branch at a turn the branch did not run: %v; want ErrNotFound", err)
	}

	d, _ := s.LoadSession(ctx, sess.ID)
	var bl session.Loop
	var turns []string
	for _, l := range d.Loops {
		if l.ID == "b4" {
			bl = l
		}
	}
	for _, tr := range d.Turns {
		if tr.LoopID == "b4" {
			turns = append(turns, fmt.Sprintf("%d:%s", tr.Index, tr.TriggeredBy))
		}
	}
	if bl.Trigger != event.TriggerBranch || bl.BranchedFromLoop != "main-p3" || bl.BranchedFromTurn != 0 || bl.PreviousLoopID != "main-p3" {
		t.Errorf("branch loop %+v", bl)
	}
	if strings.Join(turns, " ") != "0:branch" {
		t.Errorf("branch turns %q; want 0:branch", turns)
	}
	if id, _ := s.LatestLoop(ctx, sess.ID); id != "b4b0" && id != "b4" {
		t.Errorf("latest loop %s", id)
	}
	list, _ := s.ListSessions(ctx, session.ListOptions{})
	if list[0].Turns != 7 {
		t.Errorf("branching copied turn records: %d turns", list[0].Turns)
	}

	other, _ := s.CreateSession(ctx, session.SessionMeta{})
	for name, err := range map[string]error{
		"failed turn":   s.Branch(ctx, sess.ID, "main-p2", 0, "x1"),
		"missing turn":  s.Branch(ctx, sess.ID, "main", 99, "x2"),
		"taken id":      s.Branch(ctx, sess.ID, "main", 0, "b0"),
		"other session": s.Branch(ctx, other.ID, "main", 0, "x3"),
		"empty id":      s.Branch(ctx, sess.ID, "main", 0, ""),
		"negative turn": s.Branch(ctx, sess.ID, "main", -1, "x4"),
	} {
		if err == nil {
			t.Errorf("%s: branch accepted", name)
		} else if !strings.Contains(err.Error(), "main") && !strings.Contains(err.Error(), "b0") {
			t.Errorf("%s: error does not name the loop: %v", name, err)
		}
		if notFound := name == "missing turn" || name == "other session"; notFound != errors.Is(err, session.ErrNotFound) {
			t.Errorf("%s: errors.Is(%v, ErrNotFound) = %v", name, err, !notFound)
		}
	}
	if _, err := s.ReadLoop(ctx, "x1"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("a refused branch created its loop: %v", err)
	}
}

// Readers (of this store and of a second handle on its data) run while a
// recorder writes; none fails, and every History read is a state the loop was
// in.

func testConcurrentReadersWhileWriting(t *testing.T, be Backend, s session.Store) {
	ctx := t.Context()
	sess, _ := s.CreateSession(ctx, session.SessionMeta{})
	a := NewScript("busy")
	for i := 0; i < 15; i++ {
		m, res := ToolCall("c"+string(rune('a'+i)), "glob", "fs_read")
		a.Prompt("prompt", event.TriggerUser,
			Call{Resp: m, Stop: llm.StopToolUse, Usage: Usage(1, 1, 1, 1), Results: res},
			Call{Resp: llm.AssistantText("ok"), Stop: llm.StopEndTurn, Usage: Usage(1, 1, 1, 1)})
	}
	valid := map[string]bool{"[]": true}
	for _, h := range a.Snap {
		b, _ := json.Marshal(h)
		valid[string(b)] = true
	}
	other := be.second(t, s)

	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := 0; i < 4; i++ {
		st := s
		if i%2 == 1 {
			st = other
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for reads := 0; ; reads++ {
				select {
				case <-done:
					if reads > 0 {
						return
					}
				default:
				}
				latest, err := st.LatestLoop(ctx, sess.ID)
				var h []llm.Message
				if err == nil {
					h, err = st.History(ctx, latest)
				}
				if err != nil && !errors.Is(err, session.ErrNotFound) {
					errs <- err
					return
				}
				if err == nil {
					b, _ := json.Marshal(h)
					if !valid[string(b)] {
						errs <- errors.New("read a history the loop never had: " + string(b))
						return
					}
				}
				if _, err := st.ListSessions(ctx, session.ListOptions{Limit: 10}); err != nil {
					errs <- err
					return
				}
				if _, err := st.LoadSession(ctx, sess.ID); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	Feed(t, s, sess.ID, a.Events)
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	h, _ := s.History(ctx, a.LoopID)
	JSONEq(t, "final history", h, a.Hist)
}
