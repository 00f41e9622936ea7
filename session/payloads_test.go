package session_test

import (
	"path/filepath"
	"testing"

	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/session/storetest"
)

// TestSQLitePayloadsFollowTheirSessions: deleting a session's row deletes
// the payloads only it referenced (docs/sessions.md, "Payloads").
func TestSQLitePayloadsFollowTheirSessions(t *testing.T) {
	s, err := session.Open(filepath.Join(t.TempDir(), "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.PayloadsFollowTheirSessions(t, s, func(id string) error {
		_, err := session.DBOf(s).Exec(`DELETE FROM sessions WHERE id = ?`, id)
		return err
	})
}
