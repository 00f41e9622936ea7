package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-agent/strata/session"
)

// Acquire implements session.Store: the lease is a row of the leases table,
// read and written in one transaction holding a row lock on the session
// (SELECT … FOR UPDATE), so two processes racing for a session serialize and
// exactly one wins.
func (s *Store) Acquire(ctx context.Context, sessionID, owner string, ttl time.Duration) error {
	if err := session.CheckLease(sessionID, owner, ttl); err != nil {
		return err
	}
	now := s.now()
	return s.writeTx(ctx, func(tx pgx.Tx) error {
		var id string
		err := tx.QueryRow(ctx, `SELECT id FROM sessions WHERE id = $1 FOR UPDATE`, sessionID).Scan(&id)
		if err == pgx.ErrNoRows {
			return fmt.Errorf("lease: session %s: %w", sessionID, session.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("lease of session %s: %w", sessionID, err)
		}
		var holder string
		var expires int64
		err = tx.QueryRow(ctx, `SELECT owner, expires_at FROM leases WHERE session_id = $1`, sessionID).Scan(&holder, &expires)
		switch {
		case err == pgx.ErrNoRows:
		case err != nil:
			return fmt.Errorf("lease of session %s: %w", sessionID, err)
		case holder != owner && expires > ms(now) && !session.HolderGone(holder):
			return session.LeaseBusy(sessionID, holder, fromMS(expires), now)
		}
		_, err = tx.Exec(ctx, `INSERT INTO leases (session_id, owner, acquired_at, expires_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (session_id) DO UPDATE SET
				acquired_at = CASE WHEN leases.owner = $2 THEN leases.acquired_at ELSE $3 END, owner = $2, expires_at = $4`,
			sessionID, owner, ms(now), ms(now.Add(ttl)))
		if err != nil {
			return fmt.Errorf("lease of session %s: %w", sessionID, err)
		}
		return nil
	})
}

// Release implements session.Store.
func (s *Store) Release(ctx context.Context, sessionID, owner string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM leases WHERE session_id = $1 AND owner = $2`, sessionID, owner); err != nil {
		return fmt.Errorf("release lease of session %s: %w", sessionID, err)
	}
	return nil
}
