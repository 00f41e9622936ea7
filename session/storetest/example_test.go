package storetest_test

import (
	"context"
	"sync"
	"testing"

	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/session/storetest"
)

// auditStore is a custom backend as an embedder writes one: it wraps any
// session.Store (here the Memory store) and keeps an audit trail of the
// sessions created through it. Embedding the Store keeps every optional
// interface (branching, tl;drs, leases, pings), so the whole contract runs.
type auditStore struct {
	session.Store
	mu      sync.Mutex
	created []string
}

func (a *auditStore) CreateSession(ctx context.Context, meta session.SessionMeta) (session.Session, error) {
	s, err := a.Store.CreateSession(ctx, meta)
	if err == nil {
		a.mu.Lock()
		a.created = append(a.created, s.ID)
		a.mu.Unlock()
	}
	return s, err
}

// A custom backend proves itself with the exported contract suite, as
// SQLite, Memory and PostgreSQL do: storetest.Run in one test function.
func TestCustomBackendRunsTheContract(t *testing.T) {
	var opened []*auditStore
	storetest.Run(t, storetest.Backend{Name: "audited-memory", Open: func(t *testing.T) session.Core {
		a := &auditStore{Store: session.NewMemory()}
		t.Cleanup(func() { a.Close() })
		opened = append(opened, a)
		return a
	}})
	audited := 0
	for _, a := range opened {
		audited += len(a.created)
	}
	if len(opened) == 0 || audited == 0 {
		t.Errorf("the suite opened %d stores and created %d sessions through them; want the wrapper exercised", len(opened), audited)
	}
}

// ExampleRun shows the whole of what a new backend writes to run the
// contract: one Backend and one call, in a test of its own package
// (TestCustomBackendRunsTheContract runs it on a wrapper of the Memory
// store).
func ExampleRun() {
	backend := storetest.Backend{Name: "mine", Open: func(t *testing.T) session.Core {
		s := session.NewMemory() // your store, empty
		t.Cleanup(func() { s.Close() })
		return s
	}}
	contract := func(t *testing.T) { storetest.Run(t, backend) }
	_ = contract // func TestContract(t *testing.T) { storetest.Run(t, backend) }
}
