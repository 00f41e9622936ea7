// Package storetest is the behavioural contract of session.Store
// (docs/sessions.md), exported so that every backend proves itself with the
// same tests: the SQLite and Memory stores of package session run it, and so
// does the PostgreSQL store (session/postgres). A new backend writes
//
//	func TestContract(t *testing.T) {
//		storetest.Run(t, storetest.Backend{Name: "mine", Open: openEmpty, Second: secondHandle})
//	}
//
// Run drives each store with the events the agent loop emits (Script: the
// same events agent.Agent emits, without a provider), through a
// session.Recorder, and checks what the store answers: histories, pending
// tool calls, branches, atomic Steps, leases, pings, tl;drs and payloads, prefixes,
// copies, closed stores and concurrent readers.
package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/strata-agent/strata/session"
)

// Backend is one session.Store implementation under test.
type Backend struct {
	// Name names the backend in subtest names and failures.
	Name string
	// Open returns a new, empty store, closed when the test ends
	// (t.Cleanup). It fails the test when it cannot. A store that is only a
	// session.Core skips the tests of the optional interfaces it lacks.
	Open func(t *testing.T) session.Core
	// Crash stands for the process dying after its last write (no Close,
	// nothing flushed by hand) and a new one starting: it returns a store
	// holding what survived. Nil: the store itself (an in-memory store).
	Crash func(t *testing.T, s session.Core) session.Core
	// Second returns another handle on s's data, as another process would
	// open it. Nil: s itself.
	Second func(t *testing.T, s session.Core) session.Core
	// SetClock makes s's leases read the time from now. Nil skips the
	// lease-expiry test (with a message).
	SetClock func(s session.Core, now func() time.Time)
}

// crash and second apply the Backend's hooks, defaulting to s itself.
func (b Backend) crash(t *testing.T, s session.Store) session.Store {
	if b.Crash == nil {
		return s
	}
	return full(b.Crash(t, s))
}

func (b Backend) second(t *testing.T, s session.Store) session.Store {
	if b.Second == nil {
		return s
	}
	return full(b.Second(t, s))
}

// open returns a new store of b, skipping the test when the store lacks an
// optional interface it needs.
func (b Backend) open(t *testing.T, needs []string) session.Store {
	t.Helper()
	s := b.Open(t)
	for _, n := range needs {
		var ok bool
		switch n {
		case "branch":
			_, ok = s.(session.Brancher)
		case "leases":
			_, ok = s.(session.Leaser)
		case "tldrs":
			_, ok = s.(session.TLDRStore)
		case "pings":
			_, ok = s.(session.Pinger)
		case "payloads":
			_, ok = s.(session.Payloads)
		}
		if !ok {
			t.Skipf("%s: the store does not implement the optional interface this test needs (%s)", b.Name, n)
		}
	}
	return full(s)
}

// unsupported is the error coreOnly's optional methods return.
var unsupported = errors.ErrUnsupported

// coreOnly makes a session.Core a session.Store whose optional methods the
// store lacks fail with errors.ErrUnsupported (only tests that need none of
// them run on it).
type coreOnly struct{ session.Core }

func (coreOnly) Branch(context.Context, string, string, int, string) error    { return unsupported }
func (coreOnly) SaveTLDR(context.Context, string, string, string) error       { return unsupported }
func (coreOnly) TLDRs(context.Context, string) (map[string]string, error)     { return nil, unsupported }
func (coreOnly) Acquire(context.Context, string, string, time.Duration) error { return unsupported }
func (coreOnly) Release(context.Context, string, string) error                { return unsupported }
func (coreOnly) AddPing(context.Context, string, session.Ping) error          { return unsupported }

// full returns s as a session.Store: itself when it is one, else coreOnly.
func full(s session.Core) session.Store {
	if f, ok := s.(session.Store); ok {
		return f
	}
	return coreOnly{s}
}

// tests is the contract, by subtest name.
var tests = []struct {
	name  string
	run   func(t *testing.T, b Backend, s session.Store)
	needs []string // optional interfaces: branch, leases, tldrs, pings, payloads
}{
	{"ListSessionsFiltersByCwd", testListSessionsFiltersByCwd, nil},
	{"ValuesAreCopies", testValuesAreCopies, nil},
	{"WriteStepIsAtomic", testWriteStepIsAtomic, nil},
	{"ClosedStoreFails", testClosedStoreFails, nil},
	{"LoopChain", testLoopChain, nil},
	{"LeaseOneWriterPerSession", testLeaseOneWriterPerSession, []string{"leases"}},
	{"HoldAndRelease", testHoldAndRelease, []string{"leases"}},
	{"LeaseOfADeadHolderIsTakenOver", testLeaseOfADeadHolderIsTakenOver, []string{"leases"}},
	{"PingsAreStoredApart", testPingsAreStoredApart, []string{"pings"}},
	{"RecorderMultiTurnMatchesHistoryAndEvents", testRecorderMultiTurnMatchesHistoryAndEvents, nil},
	{"RecorderCrashAtEveryEvent", testRecorderCrashAtEveryEvent, nil},
	{"RecorderCrashMidTools", testRecorderCrashMidTools, nil},
	{"RecorderCrashMidStream", testRecorderCrashMidStream, nil},
	{"RecorderFailedTurnDropsCommittedOutput", testRecorderFailedTurnDropsCommittedOutput, nil},
	{"RecorderSubAgentLoop", testRecorderSubAgentLoop, nil},
	{"RecorderRejectsBadEvents", testRecorderRejectsBadEvents, nil},
	{"ListSessionsAndPrefixes", testListSessionsAndPrefixes, nil},
	{"Branch", testBranch, []string{"branch"}},
	{"ConcurrentReadersWhileWriting", testConcurrentReadersWhileWriting, nil},
	{"TLDRsAreStoredWithTheirSession", testTLDRsAreStoredWithTheirSession, []string{"tldrs"}},
	{"PayloadsAreContentAddressed", testPayloadsAreContentAddressed, []string{"payloads"}},
}

// Run runs the whole contract against b, one subtest per behaviour, each on a
// new empty store from b.Open.
func Run(t *testing.T, b Backend) {
	t.Helper()
	for _, c := range tests {
		t.Run(c.name, func(t *testing.T) { c.run(t, b, b.open(t, c.needs)) })
	}
}
