package durable

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/session"
)

// personScript reads a file outside the workspace (a call only a person
// may approve) and globs, twice.
func personScript(t *testing.T, outside string) *model {
	read := fmt.Sprintf(`{"operations":[{"mode":"Line","path":%q}]}`, outside)
	return script(t,
		[]llm.Block{use("toolu_p1", "fs_read", read), use("toolu_p2", "glob", `{"pattern":"*"}`)},
		[]llm.Block{use("toolu_p3", "fs_read", read), use("toolu_p4", "glob", `{"pattern":"*"}`)},
		[]llm.Block{llm.TextBlock("Read it twice.")},
	)
}

// TestPersonOnlyCallsAskEveryTime: in ask mode a person answering "allow
// always" each time is asked about both reads of a file outside the
// workspace (only a person's approval of that call allows it; "always"
// never covers it) and only once about glob; the approved reads run on the
// worker with the person's approval (tool.Env.PersonApproved). The
// requests equal an in-process run's.
func TestPersonOnlyCallsAskEveryTime(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret-notes.txt")
	write(t, outside, "outside the workspace\n")
	dir := t.TempDir()
	inProc := personScript(t, outside)
	o := options(dir, inProc, session.NewMemory())
	o.Mode = agent.ModeAsk
	var asked atomic.Int32
	runInProcess(t, o, strata.SessionOptions{Approver: agent.ApproverFunc(func(context.Context, agent.ApprovalRequest) (agent.Decision, error) {
		asked.Add(1)
		return agent.AllowAlways, nil
	})}, "Read it.")

	dur := personScript(t, outside)
	o = options(dir, dur, session.NewMemory())
	o.Mode = agent.ModeAsk
	h := newHarness(t, WorkerOptions{Options: o})
	answered := h.answerApprovals(agent.AllowAlways)
	h.prompt("Read it.")
	h.run(Spec{SessionID: "s-person", Mode: agent.ModeAsk})

	if n := asked.Load(); n != 3 {
		t.Errorf("in process the person was asked %d times, want 3", n)
	}
	if strings.Join(*answered, ",") != "fs_read,glob,fs_read" {
		t.Errorf("the durable session asked about %v, want fs_read, glob, fs_read", *answered)
	}
	b := dur.seen()
	sameRequests(t, inProc.seen(), b)
	if len(b) != 3 || strings.Count(b[2], `"text":"outside the workspace`) != 2 {
		t.Errorf("the approved reads outside the workspace did not both run: %s", b[len(b)-1])
	}
}

// modeScript runs a command in each of two prompts.
func modeScript(t *testing.T) *model {
	return script(t,
		[]llm.Block{use("toolu_s1", "execute_bash", `{"command":"echo one"}`)}, []llm.Block{llm.TextBlock("One.")},
		[]llm.Block{use("toolu_s2", "execute_bash", `{"command":"echo two"}`)}, []llm.Block{llm.TextBlock("Two.")},
	)
}

// TestSetModeAppliesToTheNextPrompt: a session in mode all switched to ask
// between two prompts (the mode update, Session.SetMode in process) asks
// about the second prompt's command only; the requests equal an
// in-process run's.
func TestSetModeAppliesToTheNextPrompt(t *testing.T) {
	dir := t.TempDir()
	inProc := modeScript(t)
	var asked atomic.Int32
	_, s := openSession(t, options(dir, inProc, session.NewMemory()), strata.SessionOptions{Approver: agent.ApproverFunc(
		func(context.Context, agent.ApprovalRequest) (agent.Decision, error) {
			asked.Add(1)
			return agent.AllowOnce, nil
		})})
	if _, err := s.Prompt(t.Context(), "First."); err != nil {
		t.Fatal(err)
	}
	s.SetMode(agent.ModeAsk)
	if _, err := s.Prompt(t.Context(), "Second."); err != nil {
		t.Fatal(err)
	}

	dur := modeScript(t)
	h := newHarness(t, WorkerOptions{Options: options(dir, dur, session.NewMemory())})
	answered := h.answerApprovals(agent.AllowOnce)
	h.prompt("First.")
	h.then(func() {
		h.env.UpdateWorkflow(ModeUpdate, "bad", &testUpdate{t: t}, agent.Mode("sometimes"))
		h.env.UpdateWorkflow(ModeUpdate, "ask", &testUpdate{t: t, want: true}, agent.ModeAsk)
		h.next()
	})
	h.prompt("Second.")
	h.run(Spec{SessionID: "s-mode", Mode: agent.ModeAll})
	if asked.Load() != 1 || strings.Join(*answered, ",") != "execute_bash" {
		t.Errorf("asked in process %d times, durable about %v; want once, about the second prompt's command", asked.Load(), *answered)
	}
	sameRequests(t, inProc.seen(), dur.seen())
}
