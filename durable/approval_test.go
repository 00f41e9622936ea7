package durable

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/session"
)

// askScript asks for one command, then answers.
func askScript(t *testing.T) *model {
	return script(t,
		[]llm.Block{use("toolu_a1", "execute_bash", `{"command":"echo approved >> log.txt","summary":"log"}`)},
		[]llm.Block{llm.TextBlock("Logged.")},
	)
}

const steering = "Also mention the weather."

// TestApprovalAnsweredAnHourLaterWithSteering runs a prompt in ask mode
// whose tool call waits for approval: a steering message arrives after 30
// minutes, a second prompt after 45 (refused: one runs), an answer for the
// wrong call and then the approval after an hour (the test environment
// skips the time). The requests equal an in-process run whose approver
// steers and allows, and the pending approval is visible to the query
// meanwhile.
func TestApprovalAnsweredAnHourLaterWithSteering(t *testing.T) {
	dir := t.TempDir()
	inProc := askScript(t)
	o := options(dir, inProc, session.NewMemory())
	o.Mode = agent.ModeAsk
	now := testStart
	o.Now = func() time.Time { return now }
	var s *strata.Session
	_, s = openSession(t, o, strata.SessionOptions{Approver: agent.ApproverFunc(
		func(ctx context.Context, req agent.ApprovalRequest) (agent.Decision, error) {
			s.Steer(steering)
			now = now.Add(time.Hour) // the durable run's approval comes an hour later
			return agent.AllowOnce, nil
		})})
	if _, err := s.Prompt(t.Context(), "Log it."); err != nil {
		t.Fatal(err)
	}
	s.Close()

	dur := askScript(t)
	o = options(dir, dur, session.NewMemory())
	o.Mode = agent.ModeAsk
	h := newHarness(t, WorkerOptions{Options: o})
	busy, wrong := &testUpdate{t: t}, &testUpdate{t: t}
	var pending *agent.ApprovalRequest
	var approvedAt time.Time
	h.prompt("Log it.")
	h.env.RegisterDelayedCallback(func() { h.env.SignalWorkflow(SteerSignal, steering) }, 30*time.Minute)
	h.env.RegisterDelayedCallback(func() { // a second prompt while the first waits: refused
		h.env.UpdateWorkflow(PromptUpdate, "busy", busy, "Another?")
	}, 45*time.Minute)
	h.env.RegisterDelayedCallback(func() {
		v, err := h.env.QueryWorkflow(PendingQuery)
		if err != nil {
			t.Errorf("pending query: %v", err)
			return
		}
		if err := v.Get(&pending); err != nil {
			t.Errorf("pending query: %v", err)
		}
		approvedAt = h.env.Now()
		h.env.UpdateWorkflow(ApproveUpdate, "approve-1", wrong, Approval{ID: "toolu_wrong", Decision: agent.AllowOnce})
		h.env.UpdateWorkflow(ApproveUpdate, "approve-2", &testUpdate{t: t, want: true}, Approval{ID: pending.Call.ID, Decision: agent.AllowOnce})
	}, time.Hour)
	h.run(Spec{SessionID: "s-ask", Mode: agent.ModeAsk})

	if busy.rejected == nil || !strings.Contains(busy.rejected.Error(), "already running") {
		t.Errorf("the second prompt was not refused as busy: %v", busy.rejected)
	}
	if wrong.rejected == nil || !strings.Contains(wrong.rejected.Error(), "not \"toolu_wrong\"") {
		t.Errorf("the answer for another call was not refused: %v", wrong.rejected)
	}
	if pending == nil || pending.Call.Name != "execute_bash" {
		t.Fatalf("pending approval after an hour = %+v, want the execute_bash call", pending)
	}
	if approvedAt.Sub(testStart) < time.Hour {
		t.Errorf("approved at %v, want an hour after the start %v", approvedAt, testStart)
	}
	if len(h.results) != 1 || h.results[0].Error != nil || h.results[0].Result.Message.Text() != "Logged." {
		t.Fatalf("prompt results %+v", h.results)
	}
	a, b := inProc.seen(), dur.seen()
	if len(a) != 2 {
		t.Fatalf("in-process run sent %d requests, want 2", len(a))
	}
	sameRequests(t, a, b)
	if !strings.Contains(b[1], steering) {
		t.Errorf("the second request lacks the steering message: %s", b[1])
	}
}

// testUpdate checks an update is accepted (want) or rejected (!want).
type testUpdate struct {
	t        *testing.T
	want     bool
	rejected error
}

func (u *testUpdate) Accept() {
	if !u.want {
		u.t.Error("update accepted, want it rejected")
	}
}
func (u *testUpdate) Reject(err error) {
	u.rejected = err
	if u.want {
		u.t.Errorf("update rejected: %v", err)
	}
}
func (u *testUpdate) Complete(_ any, err error) {
	if err != nil && u.want {
		u.t.Errorf("update failed: %v", err)
	}
}

// TestContinueAsNewKeepsTheState serves one prompt per run: the first run
// continues as new with its state, and the second run's request for the
// second prompt is byte-identical to an uninterrupted in-process session's.
func TestContinueAsNewKeepsTheState(t *testing.T) {
	dir := t.TempDir()
	inProc := script(t, []llm.Block{llm.TextBlock("One.")}, []llm.Block{llm.TextBlock("Two.")})
	runInProcess(t, options(dir, inProc, session.NewMemory()), strata.SessionOptions{}, "first", "second")

	dur := script(t, []llm.Block{llm.TextBlock("One.")}, []llm.Block{llm.TextBlock("Two.")})
	store := session.NewMemory()
	wo := WorkerOptions{Options: options(dir, dur, store)}
	spec := Spec{SessionID: "s-can", PromptsPerRun: 1}
	h := newHarness(t, wo)
	h.prompt("first")
	h.keep = true
	h.start(SessionInput{Spec: spec})
	next := h.continued()
	if next.State == nil || len(next.State.History) != 2 || next.Blueprint == nil {
		t.Fatalf("continue-as-new input carries state %+v", next.State)
	}

	h2 := newHarness(t, wo)
	h2.prompt("second")
	h2.keep = true
	h2.start(next)
	h2.continued()
	a, b := inProc.seen(), dur.seen()
	if len(a) != 2 || len(b) != 2 || a[1] != b[1] {
		t.Fatalf("second prompt's request differs after continue-as-new:\n in-process: %q\n durable:    %q", a, b)
	}
	if len(h2.results) != 1 || h2.results[0].Result.Message.Text() != "Two." {
		t.Fatalf("second run's results %+v", h2.results)
	}
}

// TestPromptWithAttachments: an image sent with the prompt_with update
// reaches the model after the text, as Session.Prompt's attachments do.
func TestPromptWithAttachments(t *testing.T) {
	png := llm.Block{Type: llm.BlockImage, MediaType: "image/png", Data: []byte("\x89PNG\r\n\x1a\nnot really")}
	inProc := script(t, []llm.Block{llm.TextBlock("A picture.")})
	dir := t.TempDir()
	o := options(dir, inProc, session.NewMemory())
	_, s := openSession(t, o, strata.SessionOptions{})
	if _, err := s.Prompt(t.Context(), "What is this?", png); err != nil {
		t.Fatal(err)
	}

	dur := script(t, []llm.Block{llm.TextBlock("A picture.")})
	h := newHarness(t, WorkerOptions{Options: options(dir, dur, session.NewMemory())})
	h.then(func() {
		h.env.UpdateWorkflow(PromptWithUpdate, "with", &testUpdate{t: t, want: true}, PromptInput{Text: "What is this?", Attachments: []llm.Block{png}})
		h.next()
	})
	h.run(Spec{SessionID: "s-image"})
	a, b := inProc.seen(), dur.seen()
	sameRequests(t, a, b)
	if len(b) != 1 || !strings.Contains(b[0], `"media_type":"image/png"`) {
		t.Errorf("the image did not reach the model: %v", b)
	}
}
