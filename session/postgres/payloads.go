package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-agent/strata/session"
)

var _ session.Payloads = (*Store)(nil)

// PutPayload implements session.Payloads: the payload and the session's
// reference in one transaction.
func (s *Store) PutPayload(ctx context.Context, sessionID, key string, data []byte) error {
	if err := session.CheckPayload(key, data); err != nil {
		return err
	}
	if data == nil {
		data = []byte{}
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO payloads (sha256, data, size, created_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (sha256) DO NOTHING`, key, data, len(data), ms(time.Now())); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO payload_refs (session_id, sha256) SELECT id, $1 FROM sessions WHERE id = $2
			ON CONFLICT DO NOTHING`, key, sessionID)
		return err
	})
	if err != nil {
		return fmt.Errorf("session: put payload %s for session %q in %s: %w", key, sessionID, s.where, err)
	}
	return nil
}

// Payload implements session.Payloads.
func (s *Store) Payload(ctx context.Context, key string) ([]byte, error) {
	var b []byte
	err := s.pool.QueryRow(ctx, `SELECT data FROM payloads WHERE sha256 = $1`, key).Scan(&b)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, fmt.Errorf("session: payload %s: %w", key, session.ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("session: payload %s in %s: %w", key, s.where, err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}
