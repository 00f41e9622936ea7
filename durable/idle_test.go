package durable

import (
	"errors"
	"testing"
	"time"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/session"
)

// A worker closes a workspace that no running activity has used for
// WorkerOptions.IdleWorkspace (its MCP servers and files would otherwise
// stay open for every workspace a fleet ever ran, one per evaluation run),
// never one an activity still uses, and opens it again for the next
// activity, which then works as before.
func TestIdleWorkspaceIsClosedAndReopened(t *testing.T) {
	dir := t.TempDir()
	a := newActivities(WorkerOptions{Options: options(dir, script(t), session.NewMemory()), IdleWorkspace: 40 * time.Millisecond})
	defer a.Close()
	spec := Spec{SessionID: "idle", Dir: dir}
	open := func() (*opened, func()) {
		t.Helper()
		o, release, err := a.workspace(t.Context(), spec)
		if err != nil {
			t.Fatal(err)
		}
		return o, release
	}
	closed := func(o *opened) bool {
		_, err := o.ws.LoopConfig("", nil, nil)
		return errors.Is(err, strata.ErrClosed)
	}
	waitClosed := func(o *opened) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !closed(o); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the idle workspace is still open 10 s after its last activity ended")
			}
		}
	}

	first, release := open()
	time.Sleep(200 * time.Millisecond) // five idle periods while an activity holds it
	if closed(first) {
		t.Fatal("a workspace an activity still uses was closed")
	}
	release()
	waitClosed(first)
	a.mu.Lock()
	left := len(a.ws)
	a.mu.Unlock()
	if left != 0 {
		t.Errorf("%d workspaces still listed after the idle close", left)
	}

	second, release := open()
	defer release()
	if second == first || closed(second) {
		t.Fatal("the next activity did not get the workspace opened again")
	}
	if _, err := a.Prepare(t.Context(), spec); err != nil {
		t.Errorf("Prepare on the reopened workspace: %v", err)
	}
}

// IdleWorkspace < 0 keeps workspaces open until Close.
func TestIdleWorkspaceNegativeKeepsThemOpen(t *testing.T) {
	dir := t.TempDir()
	a := newActivities(WorkerOptions{Options: options(dir, script(t), session.NewMemory()), IdleWorkspace: -1})
	o, release, err := a.workspace(t.Context(), Spec{SessionID: "kept", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	release()
	if a.idle() != 0 {
		t.Fatalf("idle period %v, want none", a.idle())
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := o.ws.LoopConfig("", nil, nil); !errors.Is(err, strata.ErrClosed) {
		t.Errorf("Close left the workspace open: %v", err)
	}
}
