package storetest

import (
	"errors"
	"fmt"
	"github.com/strata-agent/strata/session"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// setClock makes s's leases read the time from *now, or skips the test when
// the backend has no clock to set.
func setClock(t *testing.T, b Backend, s session.Store, now *time.Time) {
	t.Helper()
	if b.SetClock == nil {
		t.Skipf("%s: no SetClock: the lease expiry test needs the store's clock", b.Name)
	}
	b.SetClock(s, func() time.Time { return *now })
}

// One writer per session: a second owner is refused with ErrBusy naming the
// session and the holder until the holder releases or its lease expires;
// the holder renews freely; other sessions are independent; an unknown
// session is ErrNotFound and bad arguments are refused.

func testLeaseOneWriterPerSession(t *testing.T, be Backend, s session.Store) {
	ctx := t.Context()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	setClock(t, be, s, &now)
	for _, id := range []string{"s1", "s2"} {
		if _, err := s.CreateSession(ctx, session.SessionMeta{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	other := be.second(t, s)
	setClock(t, be, other, &now)
	const ttl = 30 * time.Second
	if err := s.Acquire(ctx, "s1", "A", ttl); err != nil {
		t.Fatal(err)
	}
	err := other.Acquire(ctx, "s1", "B", ttl)
	if !errors.Is(err, session.ErrBusy) || !strings.Contains(err.Error(), "session s1") || !strings.Contains(err.Error(), "A") {
		t.Fatalf("second owner: %v; want ErrBusy naming session s1 and holder A", err)
	}
	if err := other.Acquire(ctx, "s2", "B", ttl); err != nil {
		t.Errorf("another session: %v", err)
	}
	// The holder renews; just before the renewed expiry B is still refused.
	now = now.Add(20 * time.Second)
	if err := s.Acquire(ctx, "s1", "A", ttl); err != nil {
		t.Fatalf("renew: %v", err)
	}
	now = now.Add(ttl - time.Millisecond)
	if err := other.Acquire(ctx, "s1", "B", ttl); !errors.Is(err, session.ErrBusy) {
		t.Fatalf("before the renewed lease expires: %v; want ErrBusy", err)
	}
	// A holder that stops renewing (a killed process) loses the session.
	now = now.Add(time.Millisecond)
	if err := other.Acquire(ctx, "s1", "B", ttl); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	if err := s.Acquire(ctx, "s1", "A", ttl); !errors.Is(err, session.ErrBusy) {
		t.Fatalf("old holder after losing the lease: %v; want ErrBusy", err)
	}
	// Release by a non-holder leaves the lease; by the holder frees it.
	if err := s.Release(ctx, "s1", "A"); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(ctx, "s1", "C", ttl); !errors.Is(err, session.ErrBusy) {
		t.Fatalf("after a non-holder's release: %v; want ErrBusy", err)
	}
	if err := other.Release(ctx, "s1", "B"); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(ctx, "s1", "C", ttl); err != nil {
		t.Fatalf("after the holder's release: %v", err)
	}
	if err := s.Acquire(ctx, "nope", "A", ttl); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("unknown session: %v; want ErrNotFound", err)
	}
	for _, c := range []struct {
		owner string
		ttl   time.Duration
	}{{"", ttl}, {"A", 0}, {"A", -time.Second}} {
		if err := s.Acquire(ctx, "s2", c.owner, c.ttl); err == nil || errors.Is(err, session.ErrBusy) {
			t.Errorf("Acquire(owner %q, ttl %s): %v; want an argument error", c.owner, c.ttl, err)
		}
	}
}

// Hold takes the lease for a fresh owner; a second Hold is refused until the
// first is released; Release is idempotent.

func testHoldAndRelease(t *testing.T, be Backend, s session.Store) {
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, session.SessionMeta{ID: "s1"}); err != nil {
		t.Fatal(err)
	}
	a, err := session.Hold(ctx, s, "s1", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := session.Hold(ctx, be.second(t, s), "s1", 0, nil); !errors.Is(err, session.ErrBusy) || !strings.Contains(err.Error(), a.Owner()) {
		t.Fatalf("second Hold: %v; want ErrBusy naming %s", err, a.Owner())
	}
	if err := a.Release(); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	c, err := session.Hold(ctx, s, "s1", 0, nil)
	if err != nil {
		t.Fatalf("Hold after Release: %v", err)
	}
	if a.Owner() == c.Owner() || a.Err() != nil || c.Err() != nil {
		t.Errorf("owners %q %q, errs %v %v", a.Owner(), c.Owner(), a.Err(), c.Err())
	}
	c.Release()
}

// A lease whose holder is a process of this host that has exited is taken
// over before its expiry (a SIGKILLed run does not block its session); a
// live holder, or one on another host, keeps it.

func testLeaseOfADeadHolderIsTakenOver(t *testing.T, _ Backend, s session.Store) {
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, session.SessionMeta{ID: "s1"}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("no process to reap: %v", err)
	}
	dead := fmt.Sprintf("pid %d@%s/00000000", cmd.Process.Pid, hostname())
	for _, c := range []struct {
		holder string
		free   bool
	}{
		{fmt.Sprintf("pid %d@%s/00000000", os.Getpid(), hostname()), false},
		{fmt.Sprintf("pid %d@another-host.invalid/00000000", cmd.Process.Pid), false},
		{"someone", false},
		{dead, true},
	} {
		if err := s.Acquire(ctx, "s1", c.holder, time.Hour); err != nil {
			t.Fatal(err)
		}
		err := s.Acquire(ctx, "s1", "next", time.Hour)
		if c.free != (err == nil) || (!c.free && !errors.Is(err, session.ErrBusy)) {
			t.Errorf("held by %q: %v; want free=%v", c.holder, err, c.free)
		}
		s.Release(ctx, "s1", c.holder)
		s.Release(ctx, "s1", "next")
	}
}

// hostname is the host part of this process's lease owner ids
// (session.NewOwner).
func hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	return h
}
