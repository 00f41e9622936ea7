package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A PostgreSQL store's password never shows: `strata config` (table and
// JSON) and the verbose log print the DSN redacted.
func TestConfigRedactsTheStorePassword(t *testing.T) {
	const dsn = "postgres://strata:s3cret-pw@127.0.0.1:1/strata"
	logFile := filepath.Join(t.TempDir(), "strata.log")
	for _, args := range [][]string{{"config"}, {"config", "--format", "json"}, {"config", "--verbose"}} {
		r := runCLI(t, t.TempDir(), []string{"STRATA_STORE=" + dsn, "STRATA_LOG_FILE=" + logFile}, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "postgres://strata:xxxxx@127.0.0.1:1/strata") {
			t.Errorf("%v: exit %d, no redacted DSN:\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout+r.stderr, "s3cret-pw") {
			t.Errorf("%v shows the password:\n%s%s", args, r.stdout, r.stderr)
		}
	}
	if b, _ := os.ReadFile(logFile); strings.Contains(string(b), "s3cret-pw") {
		t.Errorf("the log holds the password:\n%s", b)
	}
}

// A store that is neither a file path nor postgres:// is refused with a
// usage error naming what is accepted, from the flag and from STRATA_STORE.
func TestUnknownStoreIsAUsageError(t *testing.T) {
	for _, c := range []struct {
		env  []string
		args []string
	}{
		{nil, []string{"sessions", "list", "--store", "mysql://db/strata"}},
		{[]string{"STRATA_STORE=mysql://db/strata"}, []string{"sessions", "list"}},
	} {
		r := runCLI(t, t.TempDir(), c.env, c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, "mysql://db/strata") || !strings.Contains(r.stderr, "postgres://") {
			t.Errorf("%v %v: exit %d\n%s", c.env, c.args, r.code, r.stderr)
		}
	}
}
