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
// tool calls, branches, atomic Steps, leases, pings and tl;drs, prefixes,
// copies, closed stores and concurrent readers.
package storetest

import (
	"testing"
	"time"

	"github.com/strata-agent/strata/session"
)

// Backend is one session.Store implementation under test.
type Backend struct {
	// Name names the backend in subtest names and failures.
	Name string
	// Open returns a new, empty store, closed when the test ends
	// (t.Cleanup). It fails the test when it cannot.
	Open func(t *testing.T) session.Store
	// Crash stands for the process dying after its last write (no Close,
	// nothing flushed by hand) and a new one starting: it returns a store
	// holding what survived. Nil: the store itself (an in-memory store).
	Crash func(t *testing.T, s session.Store) session.Store
	// Second returns another handle on s's data, as another process would
	// open it. Nil: s itself.
	Second func(t *testing.T, s session.Store) session.Store
	// SetClock makes s's leases read the time from now. Nil skips the
	// lease-expiry test (with a message).
	SetClock func(s session.Store, now func() time.Time)
}

// crash and second apply the Backend's hooks, defaulting to s itself.
func (b Backend) crash(t *testing.T, s session.Store) session.Store {
	if b.Crash == nil {
		return s
	}
	return b.Crash(t, s)
}

func (b Backend) second(t *testing.T, s session.Store) session.Store {
	if b.Second == nil {
		return s
	}
	return b.Second(t, s)
}

// tests is the contract, by subtest name.
var tests = []struct {
	name string
	run  func(t *testing.T, b Backend, s session.Store)
}{
	{"ListSessionsFiltersByCwd", testListSessionsFiltersByCwd},
	{"ValuesAreCopies", testValuesAreCopies},
	{"WriteStepIsAtomic", testWriteStepIsAtomic},
	{"ClosedStoreFails", testClosedStoreFails},
	{"LoopChain", testLoopChain},
	{"LeaseOneWriterPerSession", testLeaseOneWriterPerSession},
	{"HoldAndRelease", testHoldAndRelease},
	{"LeaseOfADeadHolderIsTakenOver", testLeaseOfADeadHolderIsTakenOver},
	{"PingsAreStoredApart", testPingsAreStoredApart},
	{"RecorderMultiTurnMatchesHistoryAndEvents", testRecorderMultiTurnMatchesHistoryAndEvents},
	{"RecorderCrashAtEveryEvent", testRecorderCrashAtEveryEvent},
	{"RecorderCrashMidTools", testRecorderCrashMidTools},
	{"RecorderCrashMidStream", testRecorderCrashMidStream},
	{"RecorderFailedTurnDropsCommittedOutput", testRecorderFailedTurnDropsCommittedOutput},
	{"RecorderSubAgentLoop", testRecorderSubAgentLoop},
	{"RecorderRejectsBadEvents", testRecorderRejectsBadEvents},
	{"ListSessionsAndPrefixes", testListSessionsAndPrefixes},
	{"Branch", testBranch},
	{"ConcurrentReadersWhileWriting", testConcurrentReadersWhileWriting},
	{"TLDRsAreStoredWithTheirSession", testTLDRsAreStoredWithTheirSession},
}

// Run runs the whole contract against b, one subtest per behaviour, each on a
// new empty store from b.Open.
func Run(t *testing.T, b Backend) {
	t.Helper()
	for _, c := range tests {
		t.Run(c.name, func(t *testing.T) { c.run(t, b, b.Open(t)) })
	}
}
