package strata_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/session"
)

// Each ping the real Anthropic SDK sent is stored in the session database
// (a SQLite file) as the session's ping, apart from its turns: the turns
// hold the prompt's usage only, the history no ping, and the session's
// stored pings and list summary what the pings cost (docs/keepalive.md,
// rule 5). A resumed session counts from the stored pings, and its own
// pings are stored after them.
func TestKeepAlivePingsAreStored(t *testing.T) {
	st, err := session.Open(filepath.Join(t.TempDir(), "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	clk := newFakeClock()
	m := keepAliveModel(t)
	o := keepAliveOptions(t, clk, 2)
	o.Store = st
	ws, s := openScripted(t, o, m)
	ctx := t.Context()
	if _, err := s.Prompt(ctx, "first question"); err != nil {
		t.Fatal(err)
	}
	clk.fire(t)
	clk.fire(t)
	if n := len(m.bodies()); n != 3 {
		t.Fatalf("%d requests; want the prompt's and two pings", n)
	}
	ping := pingUsage.WithTotal()
	d, err := st.LoadSession(ctx, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Pings) != 2 || d.Pings[0].Usage != ping || d.Pings[1].Usage != ping || !d.Pings[1].At.After(d.Pings[0].At) {
		t.Fatalf("stored pings %+v; want two of %+v, in order", d.Pings, ping)
	}
	if len(d.Turns) != 1 || d.Turns[0].Usage != promptUsage.WithTotal() || len(d.Messages) != 2 {
		t.Errorf("stored %d turns (usage %+v), %d messages; want the prompt's turn with its own usage %+v and its two messages",
			len(d.Turns), d.Turns, len(d.Messages), promptUsage.WithTotal())
	}
	list, err := st.ListSessions(ctx, session.ListOptions{})
	if err != nil || len(list) != 1 {
		t.Fatalf("list %+v %v", list, err)
	}
	want := session.PingTotals{Count: 2, Usage: ping.Add(ping)}
	if x := list[0]; x.Pings != want || x.Usage != promptUsage.WithTotal() || x.Turns != 1 || x.Loops != 1 {
		t.Errorf("summary %+v; want 1 loop, 1 turn of %+v and pings %+v", x, promptUsage.WithTotal(), want)
	}
	id := s.ID()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	r, err := ws.ResumeSession(ctx, id, strata.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if ka := r.KeepAlive(); ka.Pings != 2 || ka.Usage != want.Usage {
		t.Errorf("resumed KeepAlive() = %+v; want the two stored pings", ka)
	}
	if got, w := r.Usage(), promptUsage.WithTotal().Add(want.Usage); got != w {
		t.Errorf("resumed Usage() = %+v; want the stored turn's and pings' %+v", got, w)
	}
	if _, err := r.Prompt(ctx, "second question"); err != nil {
		t.Fatal(err)
	}
	clk.fire(t)
	if d, _ = st.LoadSession(ctx, id); len(d.Pings) != 3 || len(d.Turns) != 2 {
		t.Errorf("after the resumed session's ping: %d pings, %d turns stored; want 3 and 2", len(d.Pings), len(d.Turns))
	}
	if ka := r.KeepAlive(); ka.Pings != 3 {
		t.Errorf("resumed KeepAlive().Pings = %d; want 3", ka.Pings)
	}
}

// pingFailStore is a Memory that cannot store pings.
type pingFailStore struct{ *session.Memory }

func (pingFailStore) AddPing(context.Context, string, session.Ping) error { return errDiskFull }

// A ping the store cannot hold is no silent loss: the session's next
// prompt fails with an error naming the session and wrapping the store's
// (as for a turn's step), and Close reports it.
func TestKeepAlivePingNotStoredFailsTheSession(t *testing.T) {
	clk := newFakeClock()
	m := keepAliveModel(t)
	o := keepAliveOptions(t, clk, 2)
	o.Store = pingFailStore{session.NewMemory()}
	_, s := openScripted(t, o, m)
	if _, err := s.Prompt(t.Context(), "first question"); err != nil {
		t.Fatal(err)
	}
	clk.fire(t)
	_, err := s.Prompt(t.Context(), "second question")
	if !errors.Is(err, errDiskFull) || !strings.Contains(err.Error(), s.ID()) || !strings.Contains(err.Error(), "cache_keepalive") {
		t.Errorf("the prompt after an unstored ping: %v; want an error naming the session and the ping, wrapping %v", err, errDiskFull)
	}
	if n := len(m.bodies()); n != 2 {
		t.Errorf("%d requests; want the first prompt's and the ping (the second prompt must not run)", n)
	}
	if err := s.Close(); !errors.Is(err, errDiskFull) {
		t.Errorf("Close: %v; want the unstored ping's error", err)
	}
}
