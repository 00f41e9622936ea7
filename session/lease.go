package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrBusy is wrapped by the error Store.Acquire returns when another owner
// holds an unexpired writer lease on the session; the error names the
// session and the holder (and how long its lease has left).
var ErrBusy = errors.New("session is in use by another writer")

// LeaseTTL is how long a writer lease lasts without renewal: Hold renews it
// every LeaseTTL/3, so a holder that dies (SIGKILL, power loss) blocks its
// session for at most LeaseTTL after its last renewal.
const LeaseTTL = 30 * time.Second

// NewOwner returns a lease owner id for this process: "pid N@HOST/" followed
// by 8 random hex digits, so two processes, or two Holds in one process,
// never share an owner.
func NewOwner() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return fmt.Sprintf("pid %d@%s/%s", os.Getpid(), hostname(), hex.EncodeToString(b[:]))
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	return h
}

// holderDead reports whether owner (a NewOwner id) names a process on this
// host that no longer exists: its lease is then taken over at once instead
// of after its expiry. A process that cannot be checked (another host, a
// foreign owner id, Windows, no permission to signal it) counts as alive.
// A pid reused by an unrelated process also counts as alive: the lease then
// ends at its expiry.
func holderDead(owner string) bool {
	var pid int
	var rest string
	if _, err := fmt.Sscanf(owner, "pid %d@%s", &pid, &rest); err != nil || pid <= 0 || runtime.GOOS == "windows" {
		return false
	}
	host, _, ok := strings.Cut(rest, "/")
	if !ok || host != hostname() {
		return false
	}
	p, err := os.FindProcess(pid) // never fails on Unix
	if err != nil {
		return false
	}
	// Signal 0 checks existence only; a finished process gives ErrProcessDone.
	return errors.Is(p.Signal(syscall.Signal(0)), os.ErrProcessDone)
}

// busyError is the error Acquire returns when session id is held by holder
// until expires (now being the store's clock).
func busyError(id, holder string, expires, now time.Time) error {
	left := expires.Sub(now).Round(time.Second)
	return fmt.Errorf("session %s is held by another writer (%s, lease ends in %s unless renewed); wait for that run to finish: %w", id, holder, left, ErrBusy)
}

// checkLease validates Acquire's arguments.
func checkLease(id, owner string, ttl time.Duration) error {
	switch {
	case id == "":
		return fmt.Errorf("lease: session id is empty: %w", ErrNotFound)
	case owner == "":
		return fmt.Errorf("lease of session %s: owner is empty; use NewOwner", id)
	case ttl <= 0:
		return fmt.Errorf("lease of session %s: ttl %s must be positive", id, ttl)
	}
	return nil
}

// Lease is a writer lease on one session, held by Hold until Release: a
// goroutine renews it every ttl/3. Its methods are safe for concurrent use.
type Lease struct {
	store     Leaser
	sessionID string
	owner     string
	stop      chan struct{}
	done      chan struct{}
	once      sync.Once

	mu  sync.Mutex
	err error
}

// Hold acquires the writer lease on session sessionID (a full id) in store
// for a new owner (NewOwner) with the given ttl (≤ 0 = LeaseTTL), and renews
// it in the background until Release. Another holder's unexpired lease makes
// it fail with an error wrapping ErrBusy. If a renewal fails (the store is
// gone, or the lease expired and another owner took it), onLost (when not
// nil) is called once with the error, from the renewing goroutine, and Err
// returns it from then on.
func Hold(ctx context.Context, store Leaser, sessionID string, ttl time.Duration, onLost func(error)) (*Lease, error) {
	if ttl <= 0 {
		ttl = LeaseTTL
	}
	l := &Lease{store: store, sessionID: sessionID, owner: NewOwner(), stop: make(chan struct{}), done: make(chan struct{})}
	if err := store.Acquire(ctx, sessionID, l.owner, ttl); err != nil {
		return nil, err
	}
	go l.renew(ttl, onLost)
	return l, nil
}

func (l *Lease) renew(ttl time.Duration, onLost func(error)) {
	defer close(l.done)
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		if err := l.store.Acquire(context.Background(), l.sessionID, l.owner, ttl); err != nil {
			err = fmt.Errorf("session %s: writer lease lost: %w", l.sessionID, err)
			l.mu.Lock()
			l.err = err
			l.mu.Unlock()
			if onLost != nil {
				onLost(err)
			}
			return
		}
	}
}

// Owner returns the lease's owner id.
func (l *Lease) Owner() string { return l.owner }

// Err returns why the lease was lost, or nil while it is held.
func (l *Lease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Release stops the renewal and drops the lease from the store so another
// writer may take the session at once. It is idempotent; only the first
// call's error (the store's) is returned.
func (l *Lease) Release() error {
	var err error
	l.once.Do(func() {
		close(l.stop)
		<-l.done
		err = l.store.Release(context.Background(), l.sessionID, l.owner)
	})
	return err
}
