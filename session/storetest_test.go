package session_test

// The Store contract (session/storetest) run against the SQLite and Memory
// stores, and the check that both give the same records for the same events.

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/session/storetest"
)

// backends are the stores of this package under the contract.
var backends = []storetest.Backend{
	{
		Name: "sqlite",
		Open: func(t *testing.T) session.Core { s, _ := openTemp(t); return s },
		Crash: func(t *testing.T, s session.Core) session.Core {
			t.Helper()
			s.Close()
			return openPath(t, s.(*session.SQLite).Path())
		},
		Second: func(t *testing.T, s session.Core) session.Core {
			t.Helper()
			return openPath(t, s.(*session.SQLite).Path())
		},
		SetClock: session.SetClock,
	},
	{
		Name: "memory",
		Open: func(t *testing.T) session.Core {
			s := session.NewMemory()
			t.Cleanup(func() { s.Close() })
			return s
		},
		SetClock: session.SetClock,
	},
}

func TestStoreContract(t *testing.T) {
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) { storetest.Run(t, b) })
	}
}

func TestImplementationsAgree(t *testing.T) { storetest.Agree(t, backends...) }

// eachStore runs f as a subtest per backend, on a new empty store.
func eachStore(t *testing.T, f func(t *testing.T, s session.Store)) {
	t.Helper()
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) { f(t, b.Open(t).(session.Store)) })
	}
}

func openTemp(t *testing.T) (*session.SQLite, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "strata.db")
	return openPath(t, path), path
}

// openPath opens the database at path, closed when the test ends.
func openPath(t *testing.T, path string) *session.SQLite {
	t.Helper()
	s, err := session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// A backend that is only a session.Core runs the suite too: the tests of
// the optional interfaces it lacks skip, the others pass. Its Recorder
// refuses a keep-alive ping with an error naming session.Pinger.
func TestCoreOnlyBackendRunsTheSuite(t *testing.T) {
	open := func(t *testing.T) session.Core {
		m := session.NewMemory()
		t.Cleanup(func() { m.Close() })
		return struct{ session.Core }{m}
	}
	storetest.Run(t, storetest.Backend{Name: "core-only", Open: open})

	s := open(t)
	sess, err := s.CreateSession(t.Context(), session.SessionMeta{})
	if err != nil {
		t.Fatal(err)
	}
	err = session.NewRecorder(s, sess.ID).Observe(t.Context(), storetest.PingEvent(time.Now(), 1, storetest.Usage(1, 1, 0, 0)))
	if err == nil || !strings.Contains(err.Error(), "session.Pinger") {
		t.Errorf("ping on a core-only store: %v; want an error naming session.Pinger", err)
	}
}
