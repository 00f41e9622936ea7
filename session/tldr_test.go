package session

import (
	"errors"
	"fmt"
	"testing"

	"github.com/strata-agent/strata/llm"
)

// A tl;dr is stored with its session under its source text's key: another
// handle on the store (another process, for SQLite) reads it back, the
// first text stored for a key stays, another session sees none, and the
// returned map is the caller's. Unknown sessions give ErrNotFound, empty
// ids and keys an error.
func TestTLDRsAreStoredWithTheirSession(t *testing.T) {
	eachStore(t, testTLDRsAreStoredWithTheirSession)
}

func testTLDRsAreStoredWithTheirSession(t *testing.T, im impl, s Store) {
	ctx := t.Context()
	for _, id := range []string{"s1", "s2"} {
		if _, err := s.CreateSession(ctx, SessionMeta{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	long, failed := TLDRKey("a long message"), TLDRKey("a message whose tl;dr request failed")
	for _, c := range []struct{ key, text string }{{long, "short"}, {failed, ""}, {long, "another text"}} {
		if err := s.SaveTLDR(ctx, "s1", c.key, c.text); err != nil {
			t.Fatal(err)
		}
	}
	got, err := im.second(t, s).TLDRs(ctx, "s1")
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
	if _, err := s.TLDRs(ctx, "nosuch"); !errors.Is(err, ErrNotFound) {
		t.Errorf("tl;drs of an unknown session: %v; want ErrNotFound", err)
	}
	if err := s.SaveTLDR(ctx, "nosuch", long, "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("save in an unknown session: %v; want ErrNotFound", err)
	}
	if err := s.SaveTLDR(ctx, "s1", "", "x"); err == nil {
		t.Error("save with an empty key succeeded")
	}
}

// TLDRKey is the hex SHA-256 of the text (the tldrs table's source_sha256).
func TestTLDRKey(t *testing.T) {
	if k := TLDRKey(""); k != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("TLDRKey(\"\") = %s", k)
	}
	if TLDRKey("a") == TLDRKey("b") {
		t.Error("two texts, one key")
	}
}

// A database the version-3 store and recorder wrote through strata.Session
// (testdata/schema3_compacted.sql: a session compacted with --compact-tldr,
// whose tl;drs version 3 did not store; a session whose first prompt
// stopped before its first turn, so without a loop) migrates to version 4
// in place: every row stays and reads as before, the new tldrs table
// starts empty, and the old sessions store tl;drs from then on.
func TestMigrateSchema3AddsStoredTLDRs(t *testing.T) {
	s := migrateDump(t, "schema3_compacted.sql", 3)
	ctx := t.Context()
	const compacted, stopped = "9956dc3394e35bb1", "40f0d825401e543a"
	latest, err := s.LatestLoop(ctx, compacted)
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.History(ctx, latest)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 8 {
		t.Fatalf("history of the compacted session: %d messages; want 8", len(h))
	}
	for i, m := range h {
		want := llm.RoleUser
		if i%2 == 1 {
			want = llm.RoleAssistant
		}
		prefix := fmt.Sprintf("question %d: ", i/2)
		if i%2 == 1 {
			prefix = fmt.Sprintf("answer %d: ", i/2+1)
		}
		if m.Role != want || len(m.Text()) < len(prefix) || m.Text()[:len(prefix)] != prefix {
			t.Errorf("message %d: %s %.40q; want %s %q…", i, m.Role, m.Text(), want, prefix)
		}
	}
	if _, err := s.LatestLoop(ctx, stopped); !errors.Is(err, ErrNotFound) {
		t.Errorf("latest loop of the session without a turn: %v; want ErrNotFound", err)
	}
	for _, id := range []string{compacted, stopped} {
		if got, err := s.TLDRs(ctx, id); err != nil || len(got) != 0 {
			t.Errorf("tl;drs of old session %s: %v, %v; want none", id, got, err)
		}
	}
	key := TLDRKey(h[0].Text())
	if err := s.SaveTLDR(ctx, compacted, key, "a question about the build"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.TLDRs(ctx, compacted); got[key] != "a question about the build" {
		t.Errorf("tl;drs after a save in the migrated file: %q", got)
	}
}
