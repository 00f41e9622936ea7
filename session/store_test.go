package session

import (
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

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
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if v := pragma(t, s.db, "user_version"); v != "1" {
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
	if strings.Join(tables, ",") != "loops,messages,sessions,turns" {
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
	if _, err := s.CreateSession(SessionMeta{ID: "keep"}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = Open(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if l, _ := s.ListSessions(0); len(l) != 1 {
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
	if v := pragma(t, s.db, "user_version"); v != "1" {
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

// Usage sums over all loops' turns, cache tokens included; newest first;
// ids resolve by unique prefix.
func TestListSessionsAndPrefixes(t *testing.T) {
	s, _ := openTemp(t)
	a, _ := s.CreateSession(SessionMeta{ID: "abc111", Title: "first\nignored"})
	b, _ := s.CreateSession(SessionMeta{ID: "abc222"})
	if _, err := s.CreateSession(SessionMeta{ID: "abc111"}); err == nil || !strings.Contains(err.Error(), "abc111") {
		t.Errorf("duplicate id: %v", err)
	}
	fa := newFake("la")
	fa.prompt("p", event.TriggerUser,
		call{resp: llm.AssistantText("x"), stop: llm.StopEndTurn, usage: llm.Usage{Input: 1, Output: 2, Reasoning: 1, CacheRead: 3, CacheWrite: 4, Total: 10}})
	fa.prompt("q", event.TriggerUser,
		call{resp: llm.AssistantText("y"), stop: llm.StopEndTurn, usage: llm.Usage{Input: 10, Output: 20, CacheRead: 30, CacheWrite: 40, Total: 100}})
	feed(t, s, a.ID, fa.ev)
	fb := newFake("lb")
	fb.clock = fb.clock.AddDate(1, 0, 0)
	fb.prompt("r", event.TriggerUser, call{resp: llm.AssistantText("z"), stop: llm.StopEndTurn, usage: usage(5, 5, 5, 5)})
	feed(t, s, b.ID, fb.ev)

	list, err := s.ListSessions(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != "abc222" || list[1].ID != "abc111" {
		t.Fatalf("order: %+v", list)
	}
	if u := list[1].Usage; list[1].Turns != 2 || u != (llm.Usage{Input: 11, Output: 22, Reasoning: 1, CacheRead: 33, CacheWrite: 44, Total: 110}) {
		t.Errorf("session a: %d turns, usage %+v", list[1].Turns, u)
	}
	if list[1].Title != "first" || list[0].Title != "r" {
		t.Errorf("titles %q %q", list[1].Title, list[0].Title)
	}
	if l, _ := s.ListSessions(1); len(l) != 1 {
		t.Errorf("limit 1 gave %d", len(l))
	}
	if _, err := s.LoadSession("abc"); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("ambiguous prefix: %v", err)
	}
	if _, err := s.LoadSession("zzz"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "zzz") {
		t.Errorf("unknown id: %v", err)
	}
	if d, err := s.LoadSession("abc2"); err != nil || d.ID != "abc222" {
		t.Errorf("prefix: %v", err)
	}
	if id, err := s.LatestLoop("abc1"); err != nil || id != "la" {
		t.Errorf("latest loop %q %v", id, err)
	}
	if h, err := s.History("l"); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("ambiguous loop prefix: %v %v", h, err)
	}
	empty, _ := s.CreateSession(SessionMeta{})
	if _, err := s.LatestLoop(empty.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("latest loop of an empty session: %v", err)
	}
}

// A branch holds the parent's history through the branch turn — not the next
// prompt the loop merged into that turn's last message — and records new
// turns on top of it as the agent would.
func TestBranch(t *testing.T) {
	s, _ := openTemp(t)
	sess, _ := s.CreateSession(SessionMeta{})
	a := mainScript("main")
	feed(t, s, sess.ID, a.ev)

	if err := s.Branch(sess.ID, "main", 0, "b0"); err != nil {
		t.Fatal(err)
	}
	h, _ := s.History("b0")
	jsonEq(t, "branch at turn 0", h, a.hist[:3])

	// Turn 4 (max_tokens) ends with synthesized results, into which turn 5's
	// prompt was merged.
	if err := s.Branch(sess.ID[:8], "mai", 4, "b4"); err != nil {
		t.Fatal(err)
	}
	h, _ = s.History("b4")
	want := cloneMsgs(a.hist[:9])
	want[8].Content = want[8].Content[:2]
	jsonEq(t, "branch at turn 4", h, want)
	if n, _ := s.NextTurnIndex("b4"); n != 5 {
		t.Errorf("next turn of branch %d", n)
	}

	// The branched agent goes on from there.
	b := newFake("b4")
	b.hist, b.turns, b.clock = cloneMsgs(want), 5, a.clock
	b.prompt("other way", event.TriggerBranch, call{resp: llm.AssistantText("fine"), stop: llm.StopEndTurn, usage: usage(1, 1, 1, 1)})
	feed(t, s, sess.ID, b.ev)
	h, _ = s.History("b4")
	jsonEq(t, "branch after a new turn", h, b.hist)
	if h[8].Text() != "other way" {
		t.Errorf("new prompt not merged into the inherited results: %+v", h[8])
	}
	// A branch of a branch at an inherited turn.
	if err := s.Branch(sess.ID, "b4", 2, "b4b2"); err != nil {
		t.Fatal(err)
	}
	h, _ = s.History("b4b2")
	jsonEq(t, "branch of a branch", h, a.hist[:6])

	d, _ := s.LoadSession(sess.ID)
	var bl Loop
	for _, l := range d.Loops {
		if l.ID == "b4" {
			bl = l
		}
	}
	if bl.Trigger != event.TriggerBranch || bl.BranchedFromLoop != "main" || bl.BranchedFromTurn != 4 {
		t.Errorf("branch loop %+v", bl)
	}
	if id, _ := s.LatestLoop(sess.ID); id != "b4b2" && id != "b4" {
		t.Errorf("latest loop %s", id)
	}
	list, _ := s.ListSessions(0)
	if list[0].Turns != 7 {
		t.Errorf("branching copied turn records: %d turns", list[0].Turns)
	}

	other, _ := s.CreateSession(SessionMeta{})
	for name, err := range map[string]error{
		"failed turn":   s.Branch(sess.ID, "main", 3, "x1"),
		"missing turn":  s.Branch(sess.ID, "main", 99, "x2"),
		"taken id":      s.Branch(sess.ID, "main", 0, "b0"),
		"other session": s.Branch(other.ID, "main", 0, "x3"),
		"empty id":      s.Branch(sess.ID, "main", 0, ""),
		"negative turn": s.Branch(sess.ID, "main", -1, "x4"),
	} {
		if err == nil {
			t.Errorf("%s: branch accepted", name)
		} else if !strings.Contains(err.Error(), "main") && !strings.Contains(err.Error(), "b0") {
			t.Errorf("%s: error does not name the loop: %v", name, err)
		}
	}
}

// Readers (in this and another Store on the same file) run while a recorder
// writes; none fails, and every History read is a state the loop was in.
func TestConcurrentReadersWhileWriting(t *testing.T) {
	s, path := openTemp(t)
	sess, _ := s.CreateSession(SessionMeta{})
	a := newFake("busy")
	for i := 0; i < 15; i++ {
		m, res := toolCall("c"+string(rune('a'+i)), "glob", "fs_read")
		a.prompt("prompt", event.TriggerUser,
			call{resp: m, stop: llm.StopToolUse, usage: usage(1, 1, 1, 1), results: res},
			call{resp: llm.AssistantText("ok"), stop: llm.StopEndTurn, usage: usage(1, 1, 1, 1)})
	}
	valid := map[string]bool{"[]": true}
	for _, h := range a.snap {
		b, _ := json.Marshal(h)
		valid[string(b)] = true
	}
	other, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

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
				h, err := st.History("busy")
				if err != nil && !errors.Is(err, ErrNotFound) {
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
				if _, err := st.ListSessions(10); err != nil {
					errs <- err
					return
				}
				if _, err := st.LoadSession(sess.ID); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	feed(t, s, sess.ID, a.ev)
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	h, _ := s.History("busy")
	jsonEq(t, "final history", h, a.hist)
}
