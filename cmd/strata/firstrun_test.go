package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/strata-agent/strata/session"
)

// What a newcomer meets in the first hour, without an API key: a wrong
// agent name, session id or model is a usage error (exit 2) that names the
// value and what to do, not preceded by the offline demo's banner (it was
// printed before the error), without the store's own wording ("session:
// load session nosuch: not found"), and an empty session id never starts a
// new session.
func TestFirstRunErrorsNameTheValue(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	env := []string{"STRATA_DATA_DIR=" + data}
	st, err := session.Open(filepath.Join(data, "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"abc111", "abc222"} {
		if _, err := st.CreateSession(t.Context(), session.SessionMeta{ID: id, Cwd: dir}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	r := runCLI(t, dir, env, "run", "hello")
	m := regexp.MustCompile(`session ([0-9a-f]{16})`).FindStringSubmatch(r.stderr)
	if r.code != 0 || m == nil {
		t.Fatalf("offline run: exit %d, stderr %s", r.code, r.stderr)
	}
	demoSession := m[1]
	for _, tc := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"run", "--agent", "nosuch", "hi"}, []string{`agent "nosuch"`, "pass a path to an agent JSON file"}},
		{[]string{"sessions", "resume", "nosuch", "hi"}, []string{`session "nosuch": not found in the session database (see 'strata sessions list')`}},
		{[]string{"run", "--session", "nosuch", "hi"}, []string{`session "nosuch": not found in the session database`}},
		{[]string{"render", "--session", "nosuch", "hi"}, []string{`session "nosuch": not found in the session database`}},
		{[]string{"sessions", "show", "nosuch"}, []string{`session "nosuch": not found in the session database`}},
		{[]string{"sessions", "show", "abc"}, []string{`session "abc": ambiguous id prefix: give more of the id`}},
		{[]string{"sessions", "resume", "abc", "hi"}, []string{`session "abc": ambiguous id prefix: give more of the id`}},
		{[]string{"sessions", "resume", "", "hi"}, []string{"the session ID is empty"}},
		{[]string{"sessions", "branch", "", "--turn", "0", "hi"}, []string{"the session ID is empty"}},
		{[]string{"sessions", "branch", demoSession, "--turn", "9", "hi"}, []string{"turn 9 not found: its conversation has turns 0–2"}},
		{[]string{"run", "--provider", "ollama", "hi"}, []string{"provider ollama has no default model", "--model ID"}},
	} {
		r := runCLI(t, dir, env, tc.args...)
		if r.code != 2 {
			t.Errorf("%q: exit %d, want 2 (stderr %s)", tc.args, r.code, r.stderr)
		}
		for _, w := range tc.wants {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%q: stderr lacks %q:\n%s", tc.args, w, r.stderr)
			}
		}
		for _, bad := range []string{"OFFLINE REPLAY", "load session"} {
			if strings.Contains(r.stderr, bad) {
				t.Errorf("%q: stderr has %q:\n%s", tc.args, bad, r.stderr)
			}
		}
	}
	if r := runCLI(t, dir, env, "sessions", "list", "--here"); strings.Count(r.stdout, "\n") != 4 {
		t.Errorf("a refused command started a session; sessions list --here:\n%s", r.stdout)
	}
}
