// Package pgtest gives tests an empty PostgreSQL session store on the test
// server that scripts/postgres-test starts (docs/sessions.md, "PostgreSQL"):
// its DSN comes from STRATA_TEST_POSTGRES.
package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
)

// EnvVar names the variable holding the test server's DSN.
const EnvVar = "STRATA_TEST_POSTGRES"

// ServerDSN returns the test server's DSN ($STRATA_TEST_POSTGRES). Unset,
// it skips the test with a message saying how to start the server, or fails
// it under CI=true (.ci/run starts the server).
func ServerDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(EnvVar)
	if dsn == "" {
		const how = EnvVar + " is not set: run `export " + EnvVar + "=$(scripts/postgres-test start)` (needs Debian's postgresql)"
		if os.Getenv("CI") == "true" {
			t.Fatal(how + " (CI=true requires it)")
		}
		t.Skip(how)
	}
	return dsn
}

var schemas atomic.Int64

// EmptyDSN creates a new schema on the test server, dropped when the test
// ends, and returns a DSN whose search_path is that schema: postgres.Open on
// it gives an empty store.
func EmptyDSN(t testing.TB) string {
	t.Helper()
	dsn := ServerDSN(t)
	name := fmt.Sprintf("strata_test_%d_%d", os.Getpid(), schemas.Add(1))
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect to the test server %s: %v", dsn, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatalf("test server %s: %v", dsn, err)
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
		t.Fatalf("%s=%s: %v (want a postgres:// URL)", EnvVar, dsn, err)
	}
	v := u.Query()
	v.Set("search_path", name)
	u.RawQuery = v.Encode()
	return u.String()
}
