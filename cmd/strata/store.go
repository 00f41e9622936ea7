package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/spf13/pflag"

	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/session/postgres"
)

// storeHelp describes --store (and its older name --db).
const storeHelp = "session store: a SQLite file, or a PostgreSQL database as postgres://user:pass@host:port/db (default: $STRATA_STORE, the config file's store, else $STRATA_DATA_DIR/strata.db, else $XDG_DATA_HOME/strata/strata.db)"

// addStoreFlags registers --store and its older name --db, both setting
// *store.
func addStoreFlags(fl *pflag.FlagSet, store *string) {
	fl.StringVar(store, "store", "", storeHelp)
	fl.StringVar(store, "db", "", "the same as --store")
}

// checkStore validates a store setting from the environment or the config
// file: a postgres:// URL or a file path.
func checkStore(s string) error {
	if strings.Contains(s, "://") && !postgres.IsDSN(s) {
		return fmt.Errorf("unknown store %q: want a SQLite file path or postgres://user:pass@host:port/db", s)
	}
	return nil
}

// redactStore returns store fit for display: a DSN's password replaced by
// "xxxxx" (net/url's Redacted); a path as it is.
func redactStore(store string) string {
	if !postgres.IsDSN(store) {
		return store
	}
	u, err := url.Parse(store)
	if err != nil {
		return "postgres://… (unparsable DSN)"
	}
	return u.Redacted()
}

// openStore opens the session store: a PostgreSQL database when store is a
// postgres:// URL, else the SQLite file at store ("" = session.DefaultPath()).
func openStore(store string) (session.Store, error) {
	if postgres.IsDSN(store) {
		return postgres.Open(context.Background(), store)
	}
	if err := checkStore(store); err != nil {
		return nil, usagef("--store: %v", err)
	}
	if store == "" {
		p, err := session.DefaultPath()
		if err != nil {
			return nil, usagef("no session database: %v (pass --store or set STRATA_STORE or STRATA_DATA_DIR)", err)
		}
		store = p
	}
	return session.Open(store)
}
