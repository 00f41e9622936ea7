package durable

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/tool"
	sm "github.com/strata-agent/strata/workflow"
)

// loopFlow is a two-stage workflow whose first stage reads, runs a
// command, calls a tool outside its allowedTools (GrantDenied), hands back
// an invalid completion and then a valid one.
const loopFlow = `name: stage-loop
stages:
  - name: work
    body: You fix calc.go.
    allowedTools: [fs_read, execute_bash]
    turnCap: 6
    completion: {type: object, properties: {fixed: {type: boolean}}, required: [fixed]}
  - name: report
    body: "You report: fixed={{.State.work.fixed}}."
    allowedTools: []
    turnCap: 2
`

func loopModel(t *testing.T) *model {
	return script(t,
		[]llm.Block{llm.TextBlock("Reading."), use("toolu_w1", "fs_read", `{"operations":[{"mode":"Line","path":"calc.go"}]}`)},
		[]llm.Block{use("toolu_w2", "execute_bash", `{"command":"echo ran >> log.txt && cat log.txt","summary":"log"}`),
			use("toolu_w3", "fs_write", `{"command":"create","path":"out.txt","file_text":"no\n"}`)},
		[]llm.Block{use("toolu_w4", sm.CompletionTool, `{"fixed":"yes"}`)},
		[]llm.Block{use("toolu_w5", sm.CompletionTool, `{"fixed":true}`)},
		[]llm.Block{use("toolu_r1", sm.CompletionTool, `{"result":"fixed"}`)},
	)
}

// stageActivities records the activities the stage child workflows ran,
// by type name, and the child workflows' ids.
type stageActivities struct {
	mu       sync.Mutex
	types    []string
	children []string
}

func (s *stageActivities) listen(h *harness) {
	h.env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if info.WorkflowType != nil && info.WorkflowType.Name == StageWorkflowName {
			s.types = append(s.types, info.ActivityType.Name)
			if len(s.children) == 0 || s.children[len(s.children)-1] != info.WorkflowExecution.ID {
				s.children = append(s.children, info.WorkflowExecution.ID)
			}
		}
	})
}

func (s *stageActivities) count(name string) int {
	n := 0
	for _, t := range s.types {
		if t == name {
			n++
		}
	}
	return n
}

// TestStageLoopRunsAsActivities runs loopFlow in process (workflow.Run) and
// as a stage workflow: inside each stage's child workflow every model call
// is a ModelCall activity and every tool call a ToolCall activity (the
// completion tool runs in workflow code, a call outside allowedTools is
// refused there), and the requests on the wire, the final state, the
// audit events and the command's effect equal the in-process run's.
func TestStageLoopRunsAsActivities(t *testing.T) {
	d, err := sm.Parse("loop.yaml", []byte(loopFlow))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	reset := func() {
		os.Remove(filepath.Join(dir, "log.txt"))
		write(t, filepath.Join(dir, "calc.go"), "package calc\n\nfunc Add(a, b int) int { return a - b }\n")
	}
	reset()
	inProc := loopModel(t)
	var wantKinds []string
	ws, s := openSession(t, options(dir, inProc, session.NewMemory()), strata.SessionOptions{})
	want, err := sm.Run(t.Context(), ws, s, d, nil, sm.Options{OnEvent: func(e sm.Event) {
		if strings.HasPrefix(string(e.Kind), "workflow.stage_") {
			wantKinds = append(wantKinds, string(e.Kind)+" "+e.Stage+" "+e.Tool+" "+e.Outcome)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	wantLog, _ := os.ReadFile(filepath.Join(dir, "log.txt"))

	reset()
	dur := loopModel(t)
	h := newHarness(t, WorkerOptions{Options: options(dir, dur, session.NewMemory())})
	var acts stageActivities
	acts.listen(h)
	h.env.ExecuteWorkflow(StagesWorkflowName, StagesInput{Spec: Spec{SessionID: "s-loop"}, File: "loop.yaml", Source: loopFlow})
	if err := h.env.GetWorkflowError(); err != nil {
		t.Fatalf("stage workflow: %v", err)
	}
	var got *sm.State
	if err := h.env.GetWorkflowResult(&got); err != nil {
		t.Fatal(err)
	}
	sameRequests(t, inProc.seen(), dur.seen())
	if !sameJSON(t, got.Slots, want.Slots) || got.Outcome != want.Outcome || got.Outcome != sm.OK {
		t.Errorf("the durable run's state differs from the in-process run's")
	}
	if n := acts.count(ModelCallActivity); n != 5 {
		t.Errorf("%d ModelCall activities in the stages' child workflows (%v); want one per model call (5)", n, acts.types)
	}
	if n := acts.count(ToolCallActivity); n != 2 {
		t.Errorf("%d ToolCall activities in the stages' child workflows (%v); want fs_read and execute_bash (2)", n, acts.types)
	}
	if gotLog, _ := os.ReadFile(filepath.Join(dir, "log.txt")); string(gotLog) != string(wantLog) || string(gotLog) != "ran\n" {
		t.Errorf("log.txt %q, in process %q; want the command run once", gotLog, wantLog)
	}
	var gotKinds []string
	toolEnds := 0
	for _, id := range acts.children {
		v, err := h.env.QueryWorkflowByID(id, StageEventsQuery, StageCursor{})
		if err != nil {
			t.Fatalf("query %s: %v", id, err)
		}
		var evs StageEvents
		if err := v.Get(&evs); err != nil {
			t.Fatal(err)
		}
		for _, e := range evs.Audit {
			gotKinds = append(gotKinds, string(e.Kind)+" "+e.Stage+" "+e.Tool+" "+e.Outcome)
		}
		for _, e := range evs.Loop {
			if e.Kind == event.ToolExecutionEnd {
				toolEnds++
			}
		}
	}
	if strings.Join(gotKinds, "\n") != strings.Join(wantKinds, "\n") {
		t.Errorf("audit events\n%s\nwant (in process)\n%s", strings.Join(gotKinds, "\n"), strings.Join(wantKinds, "\n"))
	}
	if toolEnds != 6 { // fs_read, execute_bash, fs_write (denied), two stage_complete in work, one in report
		t.Errorf("%d tool executions in the stages' loop events; want 6", toolEnds)
	}
}

// TestStageSideEffectingToolLostIsInterruptedNotRerun: inside a stage, a
// side-effecting tool whose attempt times out (as when its worker dies)
// runs once, the stage's model reads an interrupted is_error tool_result,
// and the stage goes on to its Exit.
func TestStageSideEffectingToolLostIsInterruptedNotRerun(t *testing.T) {
	const flow = `name: ship
stages:
  - name: ship
    body: You deploy.
    allowedTools: [deploy]
    turnCap: 3
`
	ht := &hangingTool{hang: 1}
	m := script(t, []llm.Block{use("toolu_d1", "deploy", `{}`)}, []llm.Block{use("toolu_d2", sm.CompletionTool, `{"result":"deploy interrupted"}`)})
	o := options(t.TempDir(), m, session.NewMemory())
	o.Tools = []tool.Tool{ht.tool("deploy", tool.SideEffecting)}
	h := newHarness(t, WorkerOptions{Options: o})
	h.env.ExecuteWorkflow(StagesWorkflowName, StagesInput{Spec: Spec{SessionID: "s-ship", ToolTimeout: time.Second}, File: "ship.yaml", Source: flow})
	if err := h.env.GetWorkflowError(); err != nil {
		t.Fatalf("stage workflow: %v", err)
	}
	var st *sm.State
	if err := h.env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	if n := ht.runs.Load(); n != 1 {
		t.Errorf("side-effecting tool ran %d times in the stage, want exactly 1", n)
	}
	if st.Outcome != sm.OK || string(st.Slots["ship"].Completion) != `{"result":"deploy interrupted"}` {
		t.Errorf("state %+v", st)
	}
	bodies := m.seen()
	if len(bodies) != 2 {
		t.Fatalf("%d requests, want 2", len(bodies))
	}
	if !strings.Contains(bodies[1], `"is_error":true`) || !strings.Contains(bodies[1], "tool call interrupted") ||
		!strings.Contains(bodies[1], "was not run again") {
		t.Errorf("the stage's model was not told the call was interrupted: %s", tail(bodies[1]))
	}
}

// TestStageGrantAnsweredByAPerson: with Spec.StageGrants, a stage's call
// outside its allowedTools waits in the child workflow (PendingGrantQuery)
// until a person's GrantUpdate, an hour later; granted once, it runs as a
// ToolCall activity and the requests equal an in-process run whose
// interactor granted it.
func TestStageGrantAnsweredByAPerson(t *testing.T) {
	const flow = `name: grant
stages:
  - name: work
    body: You note things.
    allowedTools: [fs_read]
    turnCap: 3
`
	newModel := func() *model {
		return script(t, []llm.Block{use("toolu_g1", "execute_bash", `{"command":"echo granted > g.txt","summary":"note"}`)},
			[]llm.Block{use("toolu_g2", sm.CompletionTool, `{"result":"noted"}`)})
	}
	d, err := sm.Parse("grant.yaml", []byte(flow))
	if err != nil {
		t.Fatal(err)
	}
	inProc := newModel()
	o := options(t.TempDir(), inProc, session.NewMemory())
	now := testStart
	o.Now = func() time.Time { return now }
	ws, s := openSession(t, o, strata.SessionOptions{})
	var asked []string
	_, err = sm.Run(t.Context(), ws, s, d, nil, sm.Options{Interactor: sm.InteractorFunc(func(_ context.Context, r sm.GrantRequest) (sm.GrantAnswer, error) {
		asked = append(asked, r.Call.Name)
		now = now.Add(time.Hour) // the durable run's grant comes an hour later
		return sm.GrantOnce, nil
	})})
	if err != nil || len(asked) != 1 {
		t.Fatalf("in process: %v, asked %v", err, asked)
	}

	dir := t.TempDir()
	dur := newModel()
	h := newHarness(t, WorkerOptions{Options: options(dir, dur, session.NewMemory())})
	child := stagesID("s-grant") + "/work/1"
	var granted []string
	var poll func()
	poll = func() {
		v, err := h.env.QueryWorkflowByID(child, PendingGrantQuery)
		var r *sm.GrantRequest
		if err == nil && v.Get(&r) == nil && r != nil {
			granted = append(granted, r.Call.Name)
			h.env.UpdateWorkflowByID(child, GrantUpdate, r.Call.ID, &testUpdate{t: t, want: true}, Grant{ID: r.Call.ID, Answer: sm.GrantOnce})
		}
		if !h.env.IsWorkflowCompleted() {
			h.env.RegisterDelayedCallback(poll, time.Hour)
		}
	}
	h.env.RegisterDelayedCallback(poll, time.Hour)
	h.env.ExecuteWorkflow(StagesWorkflowName, StagesInput{Spec: Spec{SessionID: "s-grant", StageGrants: true}, File: "grant.yaml", Source: flow})
	if err := h.env.GetWorkflowError(); err != nil {
		t.Fatalf("stage workflow: %v", err)
	}
	var st *sm.State
	if err := h.env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	if st.Outcome != sm.OK || len(granted) != 1 || granted[0] != "execute_bash" {
		t.Fatalf("outcome %q, granted %v; want ok after one grant of execute_bash", st.Outcome, granted)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "g.txt")); string(b) != "granted\n" {
		t.Errorf("g.txt %q: the granted call did not run", b)
	}
	sameRequests(t, inProc.seen(), dur.seen())
	v, err := h.env.QueryWorkflowByID(child, StageEventsQuery, StageCursor{})
	var evs StageEvents
	if err != nil || v.Get(&evs) != nil {
		t.Fatalf("query the child's events: %v", err)
	}
	found := false
	for _, e := range evs.Audit {
		found = found || (e.Kind == sm.StageGranted && e.Outcome == sm.Granted && e.Reason == "interactor: once")
	}
	if !found {
		t.Errorf("no StageGranted event of the person's grant among %+v", evs.Audit)
	}
}

// TestStageJudgeRunsOnTheWorker: a stage whose Assert has a judge runs the
// judge in the finish-stage activity, on a fork of the stored session: its
// request and the state (the judge's retry, then ok) equal the in-process
// run's.
func TestStageJudgeRunsOnTheWorker(t *testing.T) {
	const flow = `name: judged
stages:
  - name: work
    body: You write a haiku.
    allowedTools: []
    turnCap: 2
    retries: 1
    assert: {judge: "Pass it only if it is a haiku about {{.Inputs.topic}}."}
inputs:
  - name: topic
    default: rain
`
	newModel := func() *model {
		return script(t, []llm.Block{use("toolu_j1", sm.CompletionTool, `{"result":"a limerick"}`)},
			[]llm.Block{use("toolu_v1", "verdict", `{"ok":false,"reason":"not a haiku"}`)},
			[]llm.Block{use("toolu_j2", sm.CompletionTool, `{"result":"rain on the roof"}`)},
			[]llm.Block{use("toolu_v2", "verdict", `{"ok":true,"reason":"a haiku about rain"}`)})
	}
	d, err := sm.Parse("judged.yaml", []byte(flow))
	if err != nil {
		t.Fatal(err)
	}
	inProc := newModel()
	ws, s := openSession(t, options(t.TempDir(), inProc, session.NewMemory()), strata.SessionOptions{})
	want, err := sm.Run(t.Context(), ws, s, d, nil, sm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dur := newModel()
	h := newHarness(t, WorkerOptions{Options: options(t.TempDir(), dur, session.NewMemory())})
	h.env.ExecuteWorkflow(StagesWorkflowName, StagesInput{Spec: Spec{SessionID: "s-judged"}, File: "judged.yaml", Source: flow})
	if err := h.env.GetWorkflowError(); err != nil {
		t.Fatalf("stage workflow: %v", err)
	}
	var got *sm.State
	if err := h.env.GetWorkflowResult(&got); err != nil {
		t.Fatal(err)
	}
	sameRequests(t, inProc.seen(), dur.seen())
	if !sameJSON(t, got.Slots, want.Slots) || !sameJSON(t, got.Attempts, want.Attempts) || got.Outcome != sm.OK || want.Outcome != sm.OK {
		t.Errorf("the durable run's state differs from the in-process run's (or is not ok)")
	}
	if got.Attempts["work"] != 2 {
		t.Errorf("work ran %d times; want 2 (the judge's retry)", got.Attempts["work"])
	}
}
