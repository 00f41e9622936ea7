package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/session/postgres"
	"github.com/strata-agent/strata/session/storetest"
)

// serverDSN returns the DSN of the test server (STRATA_TEST_POSTGRES, which
// scripts/postgres-test start prints). Unset, the test is skipped with a
// message, or fails under CI=true (.ci/run starts the server).
func serverDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("STRATA_TEST_POSTGRES")
	if dsn == "" {
		const how = "STRATA_TEST_POSTGRES is not set: run `export STRATA_TEST_POSTGRES=$(scripts/postgres-test start)` (needs Debian's postgresql)"
		if os.Getenv("CI") == "true" {
			t.Fatal(how + " (CI=true requires it)")
		}
		t.Skip(how)
	}
	return dsn
}

var schemas atomic.Int64

// emptyDSN creates a new schema on the test server, dropped when the test
// ends, and returns a DSN whose search_path is that schema: an empty store.
func emptyDSN(t testing.TB) string {
	t.Helper()
	dsn := serverDSN(t)
	name := fmt.Sprintf("strata_test_%d_%d", os.Getpid(), schemas.Add(1))
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect to the test server %s: %v", dsn, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), dsn)
		if err == nil {
			c.Exec(context.Background(), "DROP SCHEMA "+name+" CASCADE")
			c.Close(context.Background())
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	v := u.Query()
	v.Set("search_path", name)
	u.RawQuery = v.Encode()
	return u.String()
}

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
	Open: func(t *testing.T) session.Store {
		d := emptyDSN(t)
		s := open(t, d)
		dsns[s] = d
		return s
	},
	Crash: func(t *testing.T, s session.Store) session.Store {
		d := dsns[s.(*postgres.Store)]
		s.Close()
		n := open(t, d)
		dsns[n] = d
		return n
	},
	Second: func(t *testing.T, s session.Store) session.Store {
		d := dsns[s.(*postgres.Store)]
		n := open(t, d)
		dsns[n] = d
		return n
	},
	SetClock: func(s session.Store, now func() time.Time) { s.(*postgres.Store).SetClock(now) },
}

// The store contract (session/storetest) holds for PostgreSQL.
func TestStoreContract(t *testing.T) {
	serverDSN(t)
	storetest.Run(t, backend)
}

// PostgreSQL and SQLite give the same records for the same events.
func TestAgreesWithSQLite(t *testing.T) {
	serverDSN(t)
	sqlite := storetest.Backend{Name: "sqlite", Open: func(t *testing.T) session.Store {
		s, err := session.Open(t.TempDir() + "/strata.db")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}}
	storetest.Agree(t, sqlite, backend)
}
