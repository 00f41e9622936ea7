package session_test

import (
	"errors"
	"fmt"
	"github.com/strata-agent/strata/session"
	"testing"

	"github.com/strata-agent/strata/llm"
)

// TLDRKey is the hex SHA-256 of the text (the tldrs table's source_sha256).
func TestTLDRKey(t *testing.T) {
	if k := session.TLDRKey(""); k != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("TLDRKey(\"\") = %s", k)
	}
	if session.TLDRKey("a") == session.TLDRKey("b") {
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
	if _, err := s.LatestLoop(ctx, stopped); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("latest loop of the session without a turn: %v; want ErrNotFound", err)
	}
	for _, id := range []string{compacted, stopped} {
		if got, err := s.TLDRs(ctx, id); err != nil || len(got) != 0 {
			t.Errorf("tl;drs of old session %s: %v, %v; want none", id, got, err)
		}
	}
	key := session.TLDRKey(h[0].Text())
	if err := s.SaveTLDR(ctx, compacted, key, "a question about the build"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.TLDRs(ctx, compacted); got[key] != "a question about the build" {
		t.Errorf("tl;drs after a save in the migrated file: %q", got)
	}
}
