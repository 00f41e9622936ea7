// Package proctest helps tests check that processes are gone: the tests of
// hooks, execute_bash and crash-resume start real processes and assert that
// strata kills them (and their children) when it should.
package proctest

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Alive reports whether a process with pid is running: kill(pid, 0)
// succeeds and /proc, when present, does not show a zombie waiting to be
// reaped (by init, which may take a while).
func Alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc: trust kill(pid, 0)
	}
	// Format: "pid (comm) state ..."; comm may contain spaces.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// WaitGone polls, with a bounded deadline (5 s), until pid is no longer
// running; on timeout it kills pid (so the test leaves nothing behind) and
// fails the test naming what: a description of the process.
func WaitGone(t testing.TB, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for Alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d (%s) is still running", pid, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
