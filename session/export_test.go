package session

// Internals the external tests (package session_test) read: the contract
// suite (session/storetest) runs there, since storetest imports session.

import (
	"database/sql"
	"time"
)

// DBOf returns the database handle of s.
func DBOf(s *SQLite) *sql.DB { return s.db }

// SetClock makes the leases of s (a *SQLite or *Memory) read the time from
// now.
func SetClock(s Core, now func() time.Time) {
	switch x := s.(type) {
	case *SQLite:
		x.clock = now
	case *Memory:
		x.clock = now
	default:
		panic("session.SetClock: no clock on this store")
	}
}
