package session

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/event"
)

func pragma(t *testing.T, db *sql.DB, name string) string {
	t.Helper()
	var v string
	if err := db.QueryRow("PRAGMA " + name).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// A fresh file gets the whole schema at SchemaVersion, in WAL mode with
// foreign keys on; reopening is a no-op; a newer file is refused.
func TestOpenCreatesAndMigratesSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "dir", "strata.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if v := pragma(t, s.db, "user_version"); v != fmt.Sprint(SchemaVersion) {
		t.Errorf("user_version %s", v)
	}
	if m := pragma(t, s.db, "journal_mode"); m != "wal" {
		t.Errorf("journal_mode %q, want wal", m)
	}
	if fk := pragma(t, s.db, "foreign_keys"); fk != "1" {
		t.Errorf("foreign_keys %s", fk)
	}
	if bt := pragma(t, s.db, "busy_timeout"); bt != "10000" {
		t.Errorf("busy_timeout %s", bt)
	}
	var tables []string
	rows, _ := s.db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	if strings.Join(tables, ",") != "leases,loops,messages,sessions,turns" {
		t.Errorf("tables %v", tables)
	}
	// The journal mode is the file's: a plain connection sees WAL too.
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if m := pragma(t, raw, "journal_mode"); m != "wal" {
		t.Errorf("file journal_mode %q", m)
	}
	if _, err := s.CreateSession(t.Context(), SessionMeta{ID: "keep"}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = Open(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if l, _ := s.ListSessions(t.Context(), ListOptions{}); len(l) != 1 {
		t.Errorf("reopen lost data: %+v", l)
	}
	s.Close()

	if _, err := raw.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("open of a newer schema: %v", err)
	}
}

// A version-0 file (an existing SQLite file without our tables) is migrated
// in place; a file that is not SQLite is refused.
func TestMigrateFromVersion0(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "old.db")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("CREATE TABLE unrelated (x); INSERT INTO unrelated VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if v := pragma(t, s.db, "user_version"); v != fmt.Sprint(SchemaVersion) {
		t.Errorf("user_version %s after migration", v)
	}
	var n int
	if err := s.db.QueryRow("SELECT count(*) FROM unrelated").Scan(&n); err != nil || n != 1 {
		t.Errorf("migration touched other tables: %d %v", n, err)
	}
	s.Close()

	junk := filepath.Join(dir, "junk.db")
	os.WriteFile(junk, []byte(strings.Repeat("not a database ", 100)), 0o600)
	if _, err := Open(junk); err == nil {
		t.Error("opened a file that is not SQLite")
	}
	if _, err := Open(""); err == nil {
		t.Error("opened an empty path")
	}
}

func TestDefaultPath(t *testing.T) {
	t.Setenv("STRATA_DATA_DIR", "/d")
	t.Setenv("XDG_DATA_HOME", "/x")
	t.Setenv("HOME", "/h")
	for _, c := range []struct{ unset, want string }{
		{"", "/d/strata.db"},
		{"STRATA_DATA_DIR", "/x/strata/strata.db"},
		{"XDG_DATA_HOME", "/h/.local/share/strata/strata.db"},
	} {
		if c.unset != "" {
			t.Setenv(c.unset, "")
		}
		if p, err := DefaultPath(); err != nil || p != c.want {
			t.Errorf("DefaultPath() = %q, %v; want %q", p, err, c.want)
		}
	}
}

// A database written at schema version 1 by the SQLite store as it was before
// the Store interface (testdata/schema1.sql) opens unchanged and reads the
// same: sessions, history, a branch, the tool calls a crash cut off. The
// write path continues it: a resume completes the cut-off turn in place,
// under a writer lease (the leases table the migration added).
func TestOpenReadsSchema1Database(t *testing.T) {
	dump, err := os.ReadFile("testdata/schema1.sql")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "old.db")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(string(dump)); err != nil {
		t.Fatalf("load the version-1 dump: %v", err)
	}
	raw.Close()
	s := openPath(t, path)
	if v := pragma(t, s.db, "user_version"); v != fmt.Sprint(SchemaVersion) {
		t.Errorf("user_version %s", v)
	}
	ctx := t.Context()

	a := mainScript("main0000loop0001")
	d, err := s.LoadSession(ctx, "5e551011a")
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "what is here?" || d.Cwd != "/work/a" || d.Layout != "flat" || len(d.Loops) != 2 || len(d.Turns) != 6 {
		t.Fatalf("session %+v: %d loops, %d turns", d.Session, len(d.Loops), len(d.Turns))
	}
	// The branch was created at the real time, before the fake clock's turns.
	if b := d.Loops[0]; b.ID != "branch00loop0002" || b.BranchedFromLoop != "main0000loop0001" || b.BranchedFromTurn != 4 || b.Trigger != event.TriggerBranch {
		t.Errorf("branch loop %+v", b)
	}
	h, err := s.History(ctx, "main0000")
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, "history of the old loop", h, a.hist)
	want := cloneMsgs(a.hist[:9])
	want[8].Content = want[8].Content[:2]
	h, _ = s.History(ctx, "branch00")
	jsonEq(t, "history of the old branch", h, want)
	if n, err := s.NextTurnIndex(ctx, "branch00"); err != nil || n != 5 {
		t.Errorf("next turn of the old branch %d %v", n, err)
	}
	if l, _ := s.ListSessions(ctx, ListOptions{Cwd: "/work/b"}); len(l) != 1 || l[0].ID != "5e551011bbbb0002" || l[0].Turns != 1 {
		t.Errorf("sessions in /work/b: %+v", l)
	}

	// The crashed loop: two of three tool results stored, the third pending.
	c := mainScript("crash000loop0003")
	cut := 0
	for i, e := range c.ev {
		if e.Kind == event.ToolExecutionEnd && e.ToolCall.ID == "t0-1" {
			cut = i + 1
		}
	}
	p, err := s.Pending(ctx, "crash000")
	if err != nil || len(p) != 1 || p[0].ID != "t0-2" || p[0].Name != "grep" {
		t.Fatalf("pending in the old file = %+v, %v; want the grep call t0-2", p, err)
	}
	var rest []event.Event
	for _, e := range c.ev[cut+1:] {
		if e.Kind == event.ToolExecutionEnd || e.Kind == event.TurnEnd {
			rest = append(rest, e)
		}
		if e.Kind == event.TurnEnd {
			break
		}
	}
	if err := s.Acquire(ctx, "5e551011bbbb0002", "resumer", LeaseTTL); err != nil {
		t.Fatalf("lease in the old file: %v", err)
	}
	if err := s.Acquire(ctx, "5e551011bbbb0002", "other", LeaseTTL); !errors.Is(err, ErrBusy) {
		t.Fatalf("second lease in the old file: %v; want ErrBusy", err)
	}
	feed(t, s, "5e551011bbbb0002", rest)
	if p, _ := s.Pending(ctx, "crash000"); p != nil {
		t.Errorf("pending after the resume: %+v", p)
	}
	h, _ = s.History(ctx, "crash000")
	jsonEq(t, "history after the resumed turn", h, c.snap[cut+len(rest)+1])
	if d, _ := s.LoadSession(ctx, "5e551011b"); d.Turns[0].Status != TurnCompleted || d.Turns[0].Usage != usage(100, 20, 0, 50) {
		t.Errorf("resumed turn %+v", d.Turns[0])
	}
}
