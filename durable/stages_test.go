package durable

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/internal/temporaltest"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session"
	sm "github.com/strata-agent/strata/workflow"
)

// reviewFlow is a stage workflow with a sequential stage, then a parallel
// group of two reviewers and a join that reads their state slots.
const reviewFlow = `name: durable-review
stages:
  - name: plan
    body: You plan the review of calc.go.
    turnCap: 3
  - name: reviews
    parallel:
      - name: review_correctness
        body: You review the Go module for correctness bugs.
        allowedTools: [fs_read]
        turnCap: 5
        completion: {type: object, properties: {findings: {type: array, items: {type: string}}}, required: [findings]}
      - name: review_style
        body: You review the Go module for style.
        allowedTools: [fs_read]
        turnCap: 5
        completion: {type: object, properties: {findings: {type: array, items: {type: string}}}, required: [findings]}
    join:
      name: merge
      body: "Merge two reviews. Correctness:{{range .State.review_correctness.findings}} {{.}}{{end}}. Style:{{range .State.review_style.findings}} {{.}}{{end}}."
      allowedTools: []
      turnCap: 2
`

// stageModel scripts reviewFlow by the stage whose body the request's
// system prompt carries; the reviewers' first requests wait (up to ten
// seconds) until both arrived, recording whether they ran concurrently.
type stageModel struct {
	t          *testing.T
	mu         sync.Mutex
	count      map[string]int
	both       sync.WaitGroup
	concurrent bool
}

func newStageModel(t *testing.T) *stageModel {
	m := &stageModel{t: t, count: map[string]int{}}
	m.both.Add(2)
	return m
}

var stageMarkers = map[string]string{"plan": "You plan the review", "review_correctness": "for correctness",
	"review_style": "for style", "merge": "Merge two reviews"}

func (m *stageModel) respond(r replay.Request) replay.Response {
	var req struct {
		System json.RawMessage `json:"system"`
	}
	_ = json.Unmarshal(r.Body, &req)
	stage := "?"
	for name, marker := range stageMarkers {
		if strings.Contains(string(req.System), marker) {
			stage = name
		}
	}
	m.mu.Lock()
	m.count[stage]++
	n := m.count[stage]
	m.mu.Unlock()
	body := string(r.Body)
	complete := func(id, input string) replay.Response { return turn(m.t, use(id, sm.CompletionTool, input)) }
	switch {
	case stage == "plan":
		return complete("p1", `{"result":"read calc.go"}`)
	case stage == "merge":
		if !strings.Contains(body, "Correctness: Add subtracts") || !strings.Contains(body, "Style: doc comment is fine") {
			m.t.Errorf("the join's body lacks the siblings' state slots")
		}
		return complete("m1", `{"result":"1. Add subtracts"}`)
	case n == 1:
		m.both.Done()
		done := make(chan struct{})
		go func() { m.both.Wait(); close(done) }()
		select {
		case <-done:
			m.mu.Lock()
			m.concurrent = true
			m.mu.Unlock()
		case <-time.After(10 * time.Second):
		}
		return turn(m.t, use(stage[:9]+"1", "fs_read", `{"operations":[{"mode":"Line","path":"calc.go"}]}`))
	case stage == "review_correctness":
		return complete("c2", `{"findings":["Add subtracts"]}`)
	default:
		return complete("s2", `{"findings":["doc comment is fine"]}`)
	}
}

// stageOptions are the workspace options of a stage run in dir.
func stageOptions(dir string, m *stageModel, store session.Store) strata.Options {
	o := options(dir, nil, store)
	o.Respond = m.respond
	return o
}

// TestStagesAsChildWorkflows runs reviewFlow as a stage workflow: every
// stage execution a child workflow, the two reviewers concurrent
// children; the final state (outcome, slots, attempts) equals an
// in-process workflow.Run's, and the session's store holds it.
func TestStagesAsChildWorkflows(t *testing.T) {
	d, err := sm.Parse("review.yaml", []byte(reviewFlow))
	if err != nil {
		t.Fatal(err)
	}
	newDir := func() string {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "calc.go"), "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a - b }\n")
		return dir
	}
	inProc := newStageModel(t)
	ws, s := openSession(t, stageOptions(newDir(), inProc, session.NewMemory()), strata.SessionOptions{})
	want, err := sm.Run(t.Context(), ws, s, d, nil, sm.Options{})
	if err != nil {
		t.Fatal(err)
	}

	dur := newStageModel(t)
	store := session.NewMemory()
	h := newHarness(t, WorkerOptions{Options: stageOptions(newDir(), dur, store)})
	var children []string
	h.env.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, _ converter.EncodedValues) {
		children = append(children, info.WorkflowType.Name)
	})
	h.env.ExecuteWorkflow(StagesWorkflowName, StagesInput{Spec: Spec{SessionID: "s-stages"}, File: "review.yaml", Source: reviewFlow})
	if err := h.env.GetWorkflowError(); err != nil {
		t.Fatalf("stage workflow: %v", err)
	}
	var got *sm.State
	if err := h.env.GetWorkflowResult(&got); err != nil {
		t.Fatal(err)
	}
	if got.Outcome != sm.OK || got.Next != "" {
		t.Fatalf("outcome %q, next %q", got.Outcome, got.Next)
	}
	if !sameJSON(t, got.Slots, want.Slots) || !sameJSON(t, got.Attempts, want.Attempts) || got.Outcome != want.Outcome {
		t.Errorf("the durable run's state differs from the in-process run's")
	}
	if len(children) != 4 {
		t.Errorf("child workflows started: %v; want one per stage execution (4)", children)
	}
	if !dur.concurrent || !inProc.concurrent {
		t.Errorf("the reviewers did not run concurrently (durable %v, in process %v)", dur.concurrent, inProc.concurrent)
	}
	stored, err := sm.LoadState(t.Context(), store, "s-stages")
	if err != nil || !sameJSON(t, stored, got) {
		t.Errorf("the session's stored state differs from the workflow's result: %v", err)
	}
}

// TestStagesStrictCancellation: a sibling whose check gate blocks fails the
// group, and the running sibling's child workflow is cancelled before it
// reaches Exit (no slot), as in process.
func TestStagesStrictCancellation(t *testing.T) {
	const flow = `name: strict
stages:
  - name: g
    parallel:
      - name: broken
        check: {command: "test -f no-such-file"}
        body: never runs
      - name: slow
        body: You read slowly.
        turnCap: 5
`
	var mu sync.Mutex
	requests := 0
	m := &model{t: t, replies: func(i int, _ string) replay.Response {
		mu.Lock()
		requests++
		mu.Unlock()
		time.Sleep(2 * time.Second) // the sibling fails meanwhile
		return turn(t, use(fmt.Sprintf("s%d", i), "fs_read", `{"operations":[{"mode":"Directory","path":"."}]}`))
	}}
	h := newHarness(t, WorkerOptions{Options: options(t.TempDir(), m, session.NewMemory())})
	h.env.ExecuteWorkflow(StagesWorkflowName, StagesInput{Spec: Spec{SessionID: "s-strict"}, File: "strict.yaml", Source: flow})
	if err := h.env.GetWorkflowError(); err != nil {
		t.Fatalf("stage workflow: %v", err)
	}
	var st *sm.State
	if err := h.env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	if st.Outcome != sm.Fail || st.Slots["broken"].Outcome != sm.Fail {
		t.Errorf("outcome %q, broken's slot %+v; want fail", st.Outcome, st.Slots["broken"])
	}
	if _, ok := st.Slots["slow"]; ok {
		t.Errorf("the cancelled sibling has a slot %+v; want none (it did not reach Exit)", st.Slots["slow"])
	}
	mu.Lock()
	defer mu.Unlock()
	if requests > 2 {
		t.Errorf("the cancelled sibling made %d model calls after its group failed", requests)
	}
}

// runReviewStages runs reviewFlow through Client.RunStages on a worker of
// queue (workspace dir) in session id and checks it ended ok; it returns
// the session id.
func runReviewStages(ctx context.Context, t *testing.T, c client.Client, queue, dir, id string) string {
	t.Helper()
	write(t, filepath.Join(dir, "calc.go"), "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a - b }\n")
	store := session.NewMemory()
	startWorker(t, c, queue, WorkerOptions{Options: stageOptions(dir, newStageModel(t), store)})
	id, st, err := NewClient(c, queue).RunStages(ctx, Spec{SessionID: id}, "review.yaml", []byte(reviewFlow), nil)
	if err != nil || st.Outcome != sm.OK || string(st.Slots["merge"].Completion) != `{"result":"1. Add subtracts"}` {
		t.Fatalf("stages: %+v, %v", st, err)
	}
	if stored, err := sm.LoadState(ctx, store, id); err != nil || stored.Outcome != sm.OK {
		t.Fatalf("the stored state: %+v, %v", stored, err)
	}
	return id
}

// TestRunStagesOnAServer runs reviewFlow through Client.RunStages on a
// real Temporal server: child workflows, concurrent siblings and the
// stored state, end to end.
func TestRunStagesOnAServer(t *testing.T) {
	c := dial(t, temporaltest.Address(t))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	id := newSessionID() // a new id and queue: the server may be shared
	runReviewStages(ctx, t, c, "strata-stages-"+id, t.TempDir(), id)
}
