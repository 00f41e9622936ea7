package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/session/postgres"
	"github.com/strata-agent/strata/session/postgres/pgtest"
	"github.com/strata-agent/strata/session/storetest"
)

// open opens dsn, closed when the test ends.
func open(t testing.TB, dsn string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// dsns remembers each store's DSN, for Crash and Second.
var dsns = map[*postgres.Store]string{}

var backend = storetest.Backend{
	Name: "postgres",
	Open: func(t *testing.T) session.Core {
		d := pgtest.EmptyDSN(t)
		s := open(t, d)
		dsns[s] = d
		return s
	},
	Crash: func(t *testing.T, s session.Core) session.Core {
		d := dsns[s.(*postgres.Store)]
		s.Close()
		n := open(t, d)
		dsns[n] = d
		return n
	},
	Second: func(t *testing.T, s session.Core) session.Core {
		d := dsns[s.(*postgres.Store)]
		n := open(t, d)
		dsns[n] = d
		return n
	},
	SetClock: func(s session.Core, now func() time.Time) { s.(*postgres.Store).SetClock(now) },
}

// The store contract (session/storetest) holds for PostgreSQL.
func TestStoreContract(t *testing.T) {
	pgtest.ServerDSN(t)
	storetest.Run(t, backend)
}

// PostgreSQL and SQLite give the same records for the same events.
func TestAgreesWithSQLite(t *testing.T) {
	pgtest.ServerDSN(t)
	sqlite := storetest.Backend{Name: "sqlite", Open: func(t *testing.T) session.Core {
		s, err := session.Open(t.TempDir() + "/strata.db")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}}
	storetest.Agree(t, sqlite, backend)
}

// TestPayloadsFollowTheirSessions: deleting a session's row deletes the
// payloads only it referenced (docs/sessions.md, "Payloads").
func TestPayloadsFollowTheirSessions(t *testing.T) {
	d := pgtest.EmptyDSN(t)
	s := open(t, d)
	conn, err := pgx.Connect(t.Context(), d)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	storetest.PayloadsFollowTheirSessions(t, s, func(id string) error {
		_, err := conn.Exec(t.Context(), `DELETE FROM sessions WHERE id = $1`, id)
		return err
	})
}
