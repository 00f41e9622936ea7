package session

import (
	"context"
	"fmt"
	"time"
)

// now is the leases' clock.
func (m *Memory) now() time.Time {
	if m.clock != nil {
		return m.clock()
	}
	return time.Now()
}

// Acquire implements Store, with the same rules as SQLite's, between the
// goroutines of this process.
func (m *Memory) Acquire(ctx context.Context, sessionID, owner string, ttl time.Duration) error {
	if err := checkLease(sessionID, owner, ttl); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.ready(ctx); err != nil {
		return fmt.Errorf("lease of session %s: %w", sessionID, err)
	}
	if _, ok := m.sessions[sessionID]; !ok {
		return fmt.Errorf("lease: session %s: %w", sessionID, ErrNotFound)
	}
	now := msTime(m.now())
	if l, ok := m.leases[sessionID]; ok && l.owner != owner && l.expires.After(now) && !holderDead(l.owner) {
		return busyError(sessionID, l.owner, l.expires, now)
	}
	m.leases[sessionID] = memLease{owner: owner, expires: now.Add(ttl)}
	return nil
}

// Release implements Store.
func (m *Memory) Release(ctx context.Context, sessionID, owner string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.ready(ctx); err != nil {
		return fmt.Errorf("release lease of session %s: %w", sessionID, err)
	}
	if l, ok := m.leases[sessionID]; ok && l.owner == owner {
		delete(m.leases, sessionID)
	}
	return nil
}
