package session

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// now is the leases' clock.
func (s *SQLite) now() time.Time {
	if s.clock != nil {
		return s.clock()
	}
	return time.Now()
}

// Acquire implements Store: the lease is a row of the leases table, read and
// written in one immediate transaction, so two processes racing for a
// session serialize on the database's write lock and exactly one wins.
func (s *SQLite) Acquire(ctx context.Context, sessionID, owner string, ttl time.Duration) error {
	if err := checkLease(sessionID, owner, ttl); err != nil {
		return err
	}
	now := s.now()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("lease of session %s: %w", sessionID, err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sessions WHERE id = ?", sessionID).Scan(&n); err != nil {
		return fmt.Errorf("lease of session %s: %w", sessionID, err)
	}
	if n == 0 {
		return fmt.Errorf("lease: session %s: %w", sessionID, ErrNotFound)
	}
	var holder string
	var expires int64
	err = tx.QueryRowContext(ctx, "SELECT owner, expires_at FROM leases WHERE session_id = ?", sessionID).Scan(&holder, &expires)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fmt.Errorf("lease of session %s: %w", sessionID, err)
	case holder != owner && expires > ms(now) && !holderDead(holder):
		return busyError(sessionID, holder, fromMS(expires), now)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO leases (session_id, owner, acquired_at, expires_at) VALUES (?1, ?2, ?3, ?4)
ON CONFLICT (session_id) DO UPDATE SET
	acquired_at = CASE WHEN owner = ?2 THEN acquired_at ELSE ?3 END, owner = ?2, expires_at = ?4`,
		sessionID, owner, ms(now), ms(now.Add(ttl)))
	if err != nil {
		return fmt.Errorf("lease of session %s: %w", sessionID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("lease of session %s: %w", sessionID, err)
	}
	return nil
}

// Release implements Store.
func (s *SQLite) Release(ctx context.Context, sessionID, owner string) error {
	if _, err := s.db.ExecContext(ctx, "DELETE FROM leases WHERE session_id = ? AND owner = ?", sessionID, owner); err != nil {
		return fmt.Errorf("release lease of session %s: %w", sessionID, err)
	}
	return nil
}
