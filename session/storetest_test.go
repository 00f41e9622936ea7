package session_test

// The Store contract (session/storetest) run against the SQLite and Memory
// stores, and the check that both give the same records for the same events.

import (
	"path/filepath"
	"testing"

	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/session/storetest"
)

// backends are the stores of this package under the contract.
var backends = []storetest.Backend{
	{
		Name: "sqlite",
		Open: func(t *testing.T) session.Store { s, _ := openTemp(t); return s },
		Crash: func(t *testing.T, s session.Store) session.Store {
			t.Helper()
			s.Close()
			return openPath(t, s.(*session.SQLite).Path())
		},
		Second: func(t *testing.T, s session.Store) session.Store {
			t.Helper()
			return openPath(t, s.(*session.SQLite).Path())
		},
		SetClock: session.SetClock,
	},
	{
		Name: "memory",
		Open: func(t *testing.T) session.Store {
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
		t.Run(b.Name, func(t *testing.T) { f(t, b.Open(t)) })
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
