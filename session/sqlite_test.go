package session_test

import (
	"database/sql"
	"errors"
	"fmt"
	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/session/storetest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
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
	s, err := session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if v := pragma(t, session.DBOf(s), "user_version"); v != fmt.Sprint(session.SchemaVersion) {
		t.Errorf("user_version %s", v)
	}
	if m := pragma(t, session.DBOf(s), "journal_mode"); m != "wal" {
		t.Errorf("journal_mode %q, want wal", m)
	}
	if fk := pragma(t, session.DBOf(s), "foreign_keys"); fk != "1" {
		t.Errorf("foreign_keys %s", fk)
	}
	if bt := pragma(t, session.DBOf(s), "busy_timeout"); bt != "10000" {
		t.Errorf("busy_timeout %s", bt)
	}
	var tables []string
	rows, _ := session.DBOf(s).Query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	if strings.Join(tables, ",") != "checkpoints,leases,loops,messages,payload_refs,payloads,pings,sessions,tldrs,turns,workflow_states" {
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
	if _, err := s.CreateSession(t.Context(), session.SessionMeta{ID: "keep"}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = session.Open(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if l, _ := s.ListSessions(t.Context(), session.ListOptions{}); len(l) != 1 {
		t.Errorf("reopen lost data: %+v", l)
	}
	s.Close()

	if _, err := raw.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if _, err := session.Open(path); err == nil || !strings.Contains(err.Error(), "newer") {
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
	s, err := session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if v := pragma(t, session.DBOf(s), "user_version"); v != fmt.Sprint(session.SchemaVersion) {
		t.Errorf("user_version %s after migration", v)
	}
	var n int
	if err := session.DBOf(s).QueryRow("SELECT count(*) FROM unrelated").Scan(&n); err != nil || n != 1 {
		t.Errorf("migration touched other tables: %d %v", n, err)
	}
	s.Close()

	junk := filepath.Join(dir, "junk.db")
	os.WriteFile(junk, []byte(strings.Repeat("not a database ", 100)), 0o600)
	if _, err := session.Open(junk); err == nil {
		t.Error("opened a file that is not SQLite")
	}
	if _, err := session.Open(""); err == nil {
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
		if p, err := session.DefaultPath(); err != nil || p != c.want {
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
	s := openPath(t, loadDump(t, "schema1.sql"))
	if v := pragma(t, session.DBOf(s), "user_version"); v != fmt.Sprint(session.SchemaVersion) {
		t.Errorf("user_version %s", v)
	}
	ctx := t.Context()

	a := storetest.MainScript("main0000loop0001")
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
	storetest.JSONEq(t, "history of the old loop", h, a.Hist)
	want := storetest.CloneMessages(a.Hist[:9])
	want[8].Content = want[8].Content[:2]
	h, _ = s.History(ctx, "branch00")
	storetest.JSONEq(t, "history of the old branch", h, want)
	if n, err := s.NextTurnIndex(ctx, "branch00"); err != nil || n != 5 {
		t.Errorf("next turn of the old branch %d %v", n, err)
	}
	if l, _ := s.ListSessions(ctx, session.ListOptions{Cwd: "/work/b"}); len(l) != 1 || l[0].ID != "5e551011bbbb0002" || l[0].Turns != 1 {
		t.Errorf("sessions in /work/b: %+v", l)
	}

	// The crashed loop: two of three tool results stored, the third pending.
	c := storetest.MainScript("crash000loop0003")
	cut := 0
	for i, e := range c.Events {
		if e.Kind == event.ToolExecutionEnd && e.ToolCall.ID == "t0-1" {
			cut = i + 1
		}
	}
	p, err := s.Pending(ctx, "crash000")
	if err != nil || len(p) != 1 || p[0].ID != "t0-2" || p[0].Name != "grep" {
		t.Fatalf("pending in the old file = %+v, %v; want the grep call t0-2", p, err)
	}
	var rest []event.Event
	for _, e := range c.Events[cut+1:] {
		if e.Kind == event.ToolExecutionEnd || e.Kind == event.TurnEnd {
			rest = append(rest, e)
		}
		if e.Kind == event.TurnEnd {
			break
		}
	}
	if err := s.Acquire(ctx, "5e551011bbbb0002", "resumer", session.LeaseTTL); err != nil {
		t.Fatalf("lease in the old file: %v", err)
	}
	if err := s.Acquire(ctx, "5e551011bbbb0002", "other", session.LeaseTTL); !errors.Is(err, session.ErrBusy) {
		t.Fatalf("second lease in the old file: %v; want ErrBusy", err)
	}
	storetest.Feed(t, s, "5e551011bbbb0002", rest)
	if p, _ := s.Pending(ctx, "crash000"); p != nil {
		t.Errorf("pending after the resume: %+v", p)
	}
	h, _ = s.History(ctx, "crash000")
	storetest.JSONEq(t, "history after the resumed turn", h, c.Snap[cut+len(rest)+1])
	if d, _ := s.LoadSession(ctx, "5e551011b"); d.Turns[0].Status != session.TurnCompleted || d.Turns[0].Usage != storetest.Usage(100, 20, 0, 50) {
		t.Errorf("resumed turn %+v", d.Turns[0])
	}
}

// loadDump writes the sqlite3 .dump at testdata/name into a new database file
// and returns its path.
func loadDump(t *testing.T, name string) string {
	t.Helper()
	dump, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "old.db")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(string(dump)); err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return path
}

// migrateDump opens the dump at testdata/name, a file at schema version
// from, which Open migrates to SchemaVersion; it fails the test unless
// every row of the old tables is still there.
func migrateDump(t *testing.T, name string, from int) *session.SQLite {
	t.Helper()
	path := loadDump(t, name)
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if v := pragma(t, raw, "user_version"); v != fmt.Sprint(from) {
		t.Fatalf("%s at version %s; want %d", name, v, from)
	}
	before := rowCounts(t, raw)
	s := openPath(t, path)
	if v := pragma(t, session.DBOf(s), "user_version"); v != fmt.Sprint(session.SchemaVersion) {
		t.Errorf("user_version %s after the migration; want %d", v, session.SchemaVersion)
	}
	if after := rowCounts(t, session.DBOf(s)); after != before {
		t.Errorf("the migration changed the rows: %s; before %s", after, before)
	}
	return s
}

// rowCounts returns the number of rows of each table of the session schema.
func rowCounts(t *testing.T, db *sql.DB) string {
	t.Helper()
	var out []string
	for _, table := range []string{"sessions", "loops", "turns", "messages", "leases"} {
		var n int
		if err := db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s=%d", table, n))
	}
	return strings.Join(out, " ")
}

// A database the version-2 store and recorder wrote (testdata/schema2.sql:
// a whole session in one loop, turns 0-5; a branch holding a copy of its
// history; a crash with a pending call; a sub-agent loop) migrates to version
// 3 in place, losing nothing: every row stays, every old loop reads as
// before (its history all its own). The next prompt of the resumed session
// is a new loop continuing the old one at turn index 0 (docs/turn.md, rule
// 2: "turn_index — Zero-based index within the current loop (0 = first turn
// after AgentStart)"), with the whole conversation as its history and its
// message positions after the old ones.
func TestMigrateSchema2ChainsNewLoops(t *testing.T) {
	s := migrateDump(t, "schema2.sql", 2)
	var prev sql.NullString
	if err := session.DBOf(s).QueryRow(`SELECT previous_loop_id FROM loops WHERE id = 'main0000loop0001'`).Scan(&prev); err != nil || prev.Valid {
		t.Fatalf("previous_loop_id of an old loop: %v %v; want NULL", prev, err)
	}
	ctx := t.Context()
	a := storetest.MainScript("main0000loop0001") // its v2 events: four prompts in one loop
	a.LoopID, a.Turns = "main0000loop0001", 6
	h, err := s.History(ctx, "main0000loop0001")
	if err != nil {
		t.Fatal(err)
	}
	old := storetest.CloneMessages(a.Hist)
	storetest.JSONEq(t, "history of the old loop", h, old)
	branch := storetest.CloneMessages(old[:9])
	branch[8].Content = append(branch[8].Content[:2], llm.TextBlock("other way"))
	branch = append(branch, llm.AssistantText("fine"))
	h, _ = s.History(ctx, "branch00")
	storetest.JSONEq(t, "history of the old branch", h, branch)
	for loop, want := range map[string]int{"main0000loop0001": 6, "branch00loop0002": 6, "crash000loop0003": 1} {
		if n, err := s.NextTurnIndex(ctx, loop); err != nil || n != want {
			t.Errorf("next turn index of old loop %s: %d %v; want %d", loop, n, err, want)
		}
	}
	if p, err := s.Pending(ctx, "crash000"); err != nil || len(p) != 1 || p[0].ID != "t0-2" {
		t.Errorf("pending in the old crashed loop %+v %v; want t0-2", p, err)
	}
	d, err := s.LoadSession(ctx, "5e552022cccc0003")
	if err != nil || len(d.Loops) != 2 || d.Loops[1].ParentLoopID != "parent00loop0004" || d.Loops[1].PreviousLoopID != "" {
		t.Fatalf("sub-agent session %+v %v", d, err)
	}
	if l, _ := s.LatestLoop(ctx, "5e552022cccc0003"); l != "parent00loop0004" {
		t.Errorf("latest loop of the sub-agent session %s", l)
	}
	// An old branch may still be branched at a turn it copied.
	if err := s.Branch(ctx, "5e552022aaaa0001", "branch00", 2, "newbranch"); err != nil {
		t.Fatal(err)
	}
	h, _ = s.History(ctx, "newbranch")
	storetest.JSONEq(t, "branch of the old branch at a copied turn", h, old[:6])

	// Resume session 1 and prompt: a new loop at index 0 after the old one.
	next := storetest.NewScript("newloop0")
	next.Hist, next.Prev, next.Clock = storetest.CloneMessages(old), "main0000loop0001", a.Clock.Add(time.Hour)
	next.Prompt("and then?", event.TriggerUser, storetest.Call{Resp: llm.AssistantText("then this"), Stop: llm.StopEndTurn, Usage: storetest.Usage(1, 1, 0, 0)})
	storetest.Feed(t, s, "5e552022aaaa0001", next.Events)
	h, _ = s.History(ctx, "newloop0")
	storetest.JSONEq(t, "history of the new loop", h, next.Hist)
	if latest, _ := s.LatestLoop(ctx, "5e552022aaaa0001"); latest != "newloop0" {
		t.Errorf("latest loop %s; want newloop0", latest)
	}
	r, err := s.ReadLoop(ctx, "newloop0")
	if err != nil {
		t.Fatal(err)
	}
	if r.PreviousLoopID != "main0000loop0001" || len(r.Turns) != 1 || r.Turns[0].Index != 0 || r.Turns[0].TriggeredBy != event.TriggerUser ||
		len(r.Messages) != 2 || r.Messages[0].Seq != 10 || r.Messages[1].Seq != 11 || r.ConversationID() != "main0000loop0001" {
		t.Errorf("new loop %+v", r)
	}
}

// A database the version-3 store and recorder wrote (testdata/schema3.sql:
// a loop per prompt, chained; a branch without a turn yet; a crash with a
// pending call) migrates to version 4 in place, losing nothing: every row
// stays and reads as before, and its sessions have no stored pings (none
// were stored then). The resumed session's pings are stored from then on
// (docs/keepalive.md), apart from its turns.
func TestMigrateSchema3StoresPings(t *testing.T) {
	s := migrateDump(t, "schema3.sql", 3)
	ctx := t.Context()
	a := storetest.MainScript("main0000loop0001")
	h, err := s.History(ctx, "main0000loop0001-p4")
	if err != nil {
		t.Fatal(err)
	}
	storetest.JSONEq(t, "history of the old conversation", h, a.Hist)
	h, _ = s.History(ctx, "branch00")
	storetest.JSONEq(t, "history of the old branch (after the last turn: all of it)", h, a.Hist)
	if p, err := s.Pending(ctx, "crash000"); err != nil || len(p) != 1 || p[0].ID != "t0-2" {
		t.Errorf("pending in the old crashed loop %+v %v; want t0-2", p, err)
	}
	list, err := s.ListSessions(ctx, session.ListOptions{})
	if err != nil || len(list) != 2 {
		t.Fatalf("sessions %+v %v", list, err)
	}
	for _, x := range list {
		if x.Pings != (session.PingTotals{}) {
			t.Errorf("old session %s has pings %+v; none were stored", x.ID, x.Pings)
		}
	}
	old := list[slices.IndexFunc(list, func(x session.SessionSummary) bool { return x.ID == "5e553033aaaa0001" })]
	if old.Loops != 5 || old.Turns != 6 {
		t.Errorf("old session: %d loops, %d turns; want 5 (four prompts and a branch) and 6", old.Loops, old.Turns)
	}

	at := a.Clock.Add(time.Hour)
	storetest.Feed(t, s, "5e553033aaaa0001", []event.Event{storetest.PingEvent(at, 1, storetest.Usage(4, 1, 3000, 0))})
	d, err := s.LoadSession(ctx, "5e553033aaaa")
	if err != nil {
		t.Fatal(err)
	}
	storetest.JSONEq(t, "pings after the migration", d.Pings, []session.Ping{{At: at.UTC(), Usage: storetest.Usage(4, 1, 3000, 0)}})
	list, _ = s.ListSessions(ctx, session.ListOptions{Cwd: "/work/a"})
	if len(list) != 1 || list[0].Pings.Count != 1 || list[0].Usage != old.Usage || list[0].UpdatedAt != old.UpdatedAt {
		t.Errorf("summary after a ping %+v; want one ping and the turns' usage and update time unchanged (%+v)", list, old)
	}
}
