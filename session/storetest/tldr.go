package storetest

import (
	"errors"
	"github.com/strata-agent/strata/session"
	"testing"
)

// A tl;dr is stored with its session under its source text's key: another
// handle on the store (another process, for SQLite) reads it back, the
// first text stored for a key stays, another session sees none, and the
// returned map is the caller's. Unknown sessions give ErrNotFound, empty
// ids and keys an error.

func testTLDRsAreStoredWithTheirSession(t *testing.T, be Backend, s session.Store) {
	ctx := t.Context()
	for _, id := range []string{"s1", "s2"} {
		if _, err := s.CreateSession(ctx, session.SessionMeta{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	long, failed := session.TLDRKey("a long message"), session.TLDRKey("a message whose tl;dr request failed")
	for _, c := range []struct{ key, text string }{{long, "short"}, {failed, ""}, {long, "another text"}} {
		if err := s.SaveTLDR(ctx, "s1", c.key, c.text); err != nil {
			t.Fatal(err)
		}
	}
	got, err := be.second(t, s).TLDRs(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[long] != "short" || got[failed] != "" {
		t.Errorf("tl;drs of s1 %q; want %s=short (the first text) and %s=\"\"", got, long, failed)
	}
	got[long] = "changed"
	if again, _ := s.TLDRs(ctx, "s1"); again[long] != "short" {
		t.Errorf("changing the returned map changed the store: %q", again[long])
	}
	if other, err := s.TLDRs(ctx, "s2"); err != nil || other == nil || len(other) != 0 {
		t.Errorf("tl;drs of s2 %v, %v; want an empty map", other, err)
	}
	if _, err := s.TLDRs(ctx, "nosuch"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("tl;drs of an unknown session: %v; want ErrNotFound", err)
	}
	if err := s.SaveTLDR(ctx, "nosuch", long, "x"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("save in an unknown session: %v; want ErrNotFound", err)
	}
	if err := s.SaveTLDR(ctx, "s1", "", "x"); err == nil {
		t.Error("save with an empty key succeeded")
	}
}
