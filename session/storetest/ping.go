package storetest

// The Store contract for keep-alive pings (Writer.AddPing, docs/keepalive.md),
// run against every implementation, and the Recorder's part: a
// cache_keepalive event becomes a Ping of the session, never a turn or a
// message.

import (
	"encoding/json"
	"errors"
	"github.com/strata-agent/strata/session"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// PingEvent is the event the keep-alive pinger emits for ping n at time at.
func PingEvent(at time.Time, n int, u llm.Usage) event.Event {
	return event.Event{Kind: event.CacheKeepAlive, Time: at, Usage: &u, Ping: n, Provider: "anthropic", Text: "keep-alive ping"}
}

// A session's pings are stored apart from its turns, durably: the same
// loop events with pings among them (between prompts and during a tool
// run) give the same loops, turns, messages, history, next turn index and
// update time as without them; the pings are the session's Pings, in
// order, with their usage, and ListSessions sums them apart from the
// turns' usage. A ping of an unknown session stores nothing and wraps
// ErrNotFound; a ping event without usage is an error.

func testPingsAreStoredApart(t *testing.T, be Backend, s session.Store) {
	ctx := t.Context()
	for _, id := range []string{"plain", "pinged"} {
		if _, err := s.CreateSession(ctx, session.SessionMeta{ID: id, Cwd: "/w"}); err != nil {
			t.Fatal(err)
		}
	}
	a := MainScript("p")
	b := MainScript("q")
	shift := a.Events[0].Time.Sub(b.Events[0].Time) // the same times as a's, should the clock have ticked between them
	for i := range b.Events {
		b.Events[i].Time = b.Events[i].Time.Add(shift)
	}
	b.Clock = b.Clock.Add(shift)
	Feed(t, s, "plain", a.Events)

	p1 := Usage(3, 1, 2000, 0)
	p2 := Usage(5, 1, 2100, 60)
	p2.CacheWrite1h = 25 // a ping that wrote for an hour (Anthropic's split)
	// A ping while a tool runs (after the first tool result), one between
	// prompts, one after the last event (its time later than every step's).
	var evs []event.Event
	var pings []session.Ping
	firstTool, secondPrompt := true, 0
	for _, e := range b.Events {
		if e.Kind == event.SessionTurnStart {
			if secondPrompt++; secondPrompt == 2 {
				at := e.Time.Add(-time.Millisecond)
				evs, pings = append(evs, PingEvent(at, 1, p2)), append(pings, session.Ping{At: at, Usage: p2})
			}
		}
		evs = append(evs, e)
		if e.Kind == event.ToolExecutionEnd && firstTool {
			firstTool = false
			at := e.Time.Add(500 * time.Millisecond)
			evs, pings = append(evs, PingEvent(at, 1, p1)), append(pings, session.Ping{At: at, Usage: p1})
		}
	}
	last := b.Clock.Add(time.Hour)
	evs, pings = append(evs, PingEvent(last, 2, p1)), append(pings, session.Ping{At: last.UTC(), Usage: p1})
	Feed(t, s, "pinged", evs)
	s = be.crash(t, s) // stored for good, not in a process's memory

	plain, err := s.LoadSession(ctx, "plain")
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.LoadSession(ctx, "pinged")
	if err != nil {
		t.Fatal(err)
	}
	JSONEq(t, "the pinged session's pings", d.Pings, pings)
	if plain.Pings != nil {
		t.Errorf("a session without pings has %+v", plain.Pings)
	}
	want := session.PingTotals{Count: 3, Usage: p1.Add(p2).Add(p1)}
	if got := d.PingTotals(); got != want {
		t.Errorf("PingTotals() = %+v; want %+v", got, want)
	}
	// Apart from the loop ids, the pinged session is the plain one.
	rename := strings.NewReplacer(`"q`, `"p`, `"pinged"`, `"plain"`)
	if got, want := rename.Replace(JSONOf(t, []any{d.Loops, d.Turns, d.Messages})), JSONOf(t, []any{plain.Loops, plain.Turns, plain.Messages}); got != want {
		t.Errorf("loops, turns and messages with pings:\n got  %s\n want %s", got, want)
	}
	if !d.UpdatedAt.Equal(plain.UpdatedAt) {
		t.Errorf("the pings moved the session's update time to %s; want %s (the last step's)", d.UpdatedAt, plain.UpdatedAt)
	}
	for i, l := range b.Loops {
		h, _ := s.History(ctx, l)
		hp, _ := s.History(ctx, a.Loops[i])
		JSONEq(t, "history of "+l, h, hp)
		n, _ := s.NextTurnIndex(ctx, l)
		np, _ := s.NextTurnIndex(ctx, a.Loops[i])
		if n != np {
			t.Errorf("next turn index of %s: %d; want %d", l, n, np)
		}
	}

	list, err := s.ListSessions(ctx, session.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(list, func(x session.SessionSummary) bool { return x.ID == "pinged" })
	j := slices.IndexFunc(list, func(x session.SessionSummary) bool { return x.ID == "plain" })
	if i < 0 || j < 0 {
		t.Fatalf("list %+v", list)
	}
	if got := list[i]; got.Pings != want || got.Usage != list[j].Usage || got.Turns != list[j].Turns || got.Loops != 4 {
		t.Errorf("summary %+v; want %d loops, the plain session's turns and usage %+v, and pings %+v", got, 4, list[j].Usage, want)
	}
	if got := list[j].Pings; got != (session.PingTotals{}) {
		t.Errorf("summary of the plain session has pings %+v", got)
	}

	before := Snapshot(t, s)
	if err := s.AddPing(ctx, "nosuch", session.Ping{At: last, Usage: p1}); !errors.Is(err, session.ErrNotFound) || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("ping of an unknown session: %v; want ErrNotFound naming it", err)
	}
	if err := s.AddPing(ctx, "pinge", session.Ping{At: last, Usage: p1}); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("ping of a session id prefix: %v; want ErrNotFound (writers take full ids)", err)
	}
	if err := session.NewRecorder(s, "pinged").Observe(ctx, event.Event{Kind: event.CacheKeepAlive}); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("ping event without usage: %v", err)
	}
	if after := Snapshot(t, s); after != before {
		t.Errorf("a refused ping changed the store:\n before %s\n after  %s", before, after)
	}
}

// JSONOf returns v's JSON encoding.
func JSONOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
