package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// renewFails is a store whose Acquire fails once the lease is held: a
// renewal finds the lease taken by another owner.
type renewFails struct {
	Store
	acquired bool
}

func (r *renewFails) Acquire(ctx context.Context, id, owner string, ttl time.Duration) error {
	if r.acquired {
		return fmt.Errorf("session %s: %w", id, ErrBusy)
	}
	r.acquired = true
	return r.Store.Acquire(ctx, id, owner, ttl)
}

// Hold renews the lease in the background; a failed renewal reaches onLost
// once and Err from then on, wrapping the store's error.
func TestHoldReportsALostLease(t *testing.T) {
	m := NewMemory()
	if _, err := m.CreateSession(t.Context(), SessionMeta{ID: "s1"}); err != nil {
		t.Fatal(err)
	}
	lost := make(chan error, 1)
	l, err := Hold(t.Context(), &renewFails{Store: m}, "s1", 3*time.Millisecond, func(err error) { lost <- err })
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	err = <-lost
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "s1") || !errors.Is(l.Err(), ErrBusy) {
		t.Errorf("onLost got %v, Err %v; want ErrBusy naming s1", err, l.Err())
	}
}
