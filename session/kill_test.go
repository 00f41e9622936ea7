//go:build unix

package session_test

import (
	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/session/storetest"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// A recorder process SIGKILLed mid-turn (no Close, nothing flushed by hand)
// leaves every step it finished: the file reopens with the history of the
// last completed step and the cut-off tool calls pending.
func TestRecorderSurvivesSIGKILL(t *testing.T) {
	if path := os.Getenv("STRATA_SESSION_KILL_DB"); path != "" {
		s, err := session.Open(path)
		if err != nil {
			os.Exit(3)
		}
		cut, _ := strconv.Atoi(os.Getenv("STRATA_SESSION_KILL_CUT"))
		r := session.NewRecorder(s, os.Getenv("STRATA_SESSION_KILL_SID"))
		for _, e := range storetest.MainScript("killed").Events[:cut] {
			if r.Observe(t.Context(), e) != nil {
				os.Exit(4)
			}
		}
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	a := storetest.MainScript("killed")
	cut := 0
	for i, e := range a.Events {
		if e.Kind == event.ToolExecutionEnd && e.ToolCall.ID == "t0-0" {
			cut = i + 2 // + the next tool's start
		}
	}
	s, path := openTemp(t)
	sess, _ := s.CreateSession(t.Context(), session.SessionMeta{})
	cmd := exec.Command(os.Args[0], "-test.run=^TestRecorderSurvivesSIGKILL$")
	cmd.Env = append(os.Environ(), "STRATA_SESSION_KILL_DB="+path, "STRATA_SESSION_KILL_SID="+sess.ID,
		"STRATA_SESSION_KILL_CUT="+strconv.Itoa(cut))
	err := cmd.Run()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die by SIGKILL: %v", err)
	}
	s.Close()
	s, err = session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h, err := s.History(t.Context(), "killed")
	if err != nil {
		t.Fatal(err)
	}
	storetest.JSONEq(t, "history after SIGKILL", h, a.Snap[cut-1])
	p, err := s.Pending(t.Context(), "killed")
	if err != nil || len(p) != 2 || p[0].ID != "t0-1" || p[1].ID != "t0-2" {
		t.Fatalf("pending after SIGKILL: %+v %v", p, err)
	}
	if h[2].Content[0].Type != llm.BlockToolResult {
		t.Errorf("first tool result lost: %+v", h[2])
	}
}
