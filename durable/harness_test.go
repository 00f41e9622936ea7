package durable

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	_ "github.com/strata-agent/strata/llm/anthropic" // the scripted model speaks the Anthropic wire

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session"
)

// model is a scripted Anthropic model served on 127.0.0.1 through the real
// SDK (strata.Options.Respond): reply i answers the i-th request; every
// request body is kept as sent on the wire.
type model struct {
	t       *testing.T
	replies func(i int, body string) replay.Response
	mu      sync.Mutex
	bodies  []string
}

func (m *model) respond(r replay.Request) replay.Response {
	m.mu.Lock()
	i := len(m.bodies)
	m.bodies = append(m.bodies, string(r.Body))
	m.mu.Unlock()
	return m.replies(i, string(r.Body))
}

func (m *model) seen() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.bodies...)
}

// turn authors an Anthropic reply, failing the test on a bad script.
func turn(t *testing.T, blocks ...llm.Block) replay.Response {
	r, err := replay.Turn(llm.APIAnthropic, replay.Reply{Blocks: blocks, Usage: llm.Usage{Input: 100, Output: 10}})
	if err != nil {
		t.Errorf("author reply: %v", err)
	}
	return r
}

// script answers requests in order with the given replies; a request past
// the end gets an HTTP 500 the test sees as a failure.
func script(t *testing.T, replies ...[]llm.Block) *model {
	return &model{t: t, replies: func(i int, _ string) replay.Response {
		if i >= len(replies) {
			t.Errorf("model: request %d past the script's %d replies", i+1, len(replies))
			return replay.Response{Status: 500, Body: []byte(`{"type":"error","error":{"type":"api_error","message":"script ended"}}`)}
		}
		return turn(t, replies[i]...)
	}}
}

func use(id, name, input string) llm.Block { return llm.ToolUseBlock(id, name, json.RawMessage(input)) }

// options are the workspace options both drivers of a comparison use:
// strata's default agent in dir with no project files, no repository
// context, no MCP, every call approved unless mode says otherwise.
func options(dir string, m *model, store session.Store) strata.Options {
	return strata.Options{Dir: dir, ProviderName: "anthropic", Respond: m.respond, NoProjectFiles: true, DisableRepoContext: true,
		DisableMCP: true, DisableAgentHooks: true, Mode: agent.ModeAll, Store: store, Layout: "cachefit",
		Now: func() time.Time { return testStart }}
}

// testStart is the test environment's start time and the in-process
// runs' clock.
var testStart = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// quietLogger shows the SDK's warnings and errors, not its debug lines.
var quietLogger = tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))

// openSession opens a workspace with o and a new session in it, both
// closed when the test ends.
func openSession(t *testing.T, o strata.Options, so strata.SessionOptions) (*strata.Workspace, *strata.Session) {
	t.Helper()
	ws, err := strata.Open(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	s, err := ws.NewSession(t.Context(), so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return ws, s
}

// runInProcess runs prompts in a new in-process session (Session.Prompt)
// of a workspace opened with o, and returns each prompt's answer and the
// session's history.
func runInProcess(t *testing.T, o strata.Options, so strata.SessionOptions, prompts ...string) ([]string, []llm.Message) {
	t.Helper()
	_, s := openSession(t, o, so)
	var answers []string
	for _, p := range prompts {
		res, err := s.Prompt(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		answers = append(answers, res.Message.Text())
	}
	return answers, s.History()
}

// startWorker runs a worker of the real session workflow and activities on
// queue through c until the test ends.
func startWorker(t *testing.T, c client.Client, queue string, wo WorkerOptions) {
	t.Helper()
	w := worker.New(c, queue, worker.Options{}) // a client's interceptors apply to its workers
	acts := Register(w, wo)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		w.Stop()
		acts.Close()
	})
}

// harness runs one session workflow in the SDK's test environment with the
// real activities registered.
type harness struct {
	t       *testing.T
	env     *testsuite.TestWorkflowEnvironment
	acts    *Activities
	results []PromptResult
	errs    []error
	steps   []func()
	keep    bool // do not end the session after the last step
}

func newHarness(t *testing.T, wo WorkerOptions) *harness {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(quietLogger)
	env := s.NewTestWorkflowEnvironment()
	env.SetStartTime(testStart)
	env.SetTestTimeout(2 * time.Minute)
	h := &harness{t: t, env: env}
	h.acts = Register(env, wo)
	t.Cleanup(func() { h.acts.Close() })
	return h
}

// answerApprovals answers every pending approval with d, looking once a
// minute of workflow time, and returns the names of the tools asked about.
func (h *harness) answerApprovals(d agent.Decision) *[]string {
	var asked []string
	var poll func()
	poll = func() {
		v, err := h.env.QueryWorkflow(PendingQuery)
		if err != nil {
			return // the workflow has ended
		}
		var p *agent.ApprovalRequest
		if err := v.Get(&p); err == nil && p != nil {
			asked = append(asked, p.Call.Name)
			h.env.UpdateWorkflow(ApproveUpdate, p.Call.ID, &testUpdate{t: h.t, want: true}, Approval{ID: p.Call.ID, Decision: d})
		}
		if !h.env.IsWorkflowCompleted() {
			h.env.RegisterDelayedCallback(poll, time.Minute)
		}
	}
	h.env.RegisterDelayedCallback(poll, time.Minute)
	return &asked
}

// then queues a step to run once the previous prompt completed.
func (h *harness) then(f func()) { h.steps = append(h.steps, f) }

// prompt queues a prompt.
func (h *harness) prompt(text string) {
	h.then(func() {
		h.env.UpdateWorkflow(PromptUpdate, fmt.Sprintf("prompt-%d", len(h.results)+len(h.errs)), &testsuite.TestUpdateCallback{
			OnReject: func(err error) { h.errs = append(h.errs, err); h.next() },
			OnComplete: func(v any, err error) {
				if err != nil {
					h.errs = append(h.errs, err)
				} else {
					h.results = append(h.results, v.(PromptResult))
				}
				h.next()
			},
		}, text)
	})
}

// next runs the next queued step, or ends the session after the last.
func (h *harness) next() {
	if len(h.steps) == 0 {
		if h.keep {
			return
		}
		h.env.RegisterDelayedCallback(func() { h.env.SignalWorkflow(EndSignal, nil) }, 0)
		return
	}
	f := h.steps[0]
	h.steps = h.steps[1:]
	h.env.RegisterDelayedCallback(f, 0)
}

// start executes the session workflow with in, running the queued steps.
func (h *harness) start(in SessionInput) {
	h.next()
	h.env.ExecuteWorkflow(SessionWorkflowName, in)
}

// run executes the session workflow for spec and fails the test when it
// does not end cleanly.
func (h *harness) run(spec Spec) {
	h.t.Helper()
	h.start(SessionInput{Spec: spec})
	if !h.env.IsWorkflowCompleted() {
		h.t.Fatal("session workflow did not complete")
	}
	if err := h.env.GetWorkflowError(); err != nil {
		h.t.Fatalf("session workflow: %v", err)
	}
	for _, err := range h.errs {
		h.t.Errorf("update: %v", err)
	}
}

// sameRequests fails the test unless the two runs sent the same request
// bodies, showing where the first difference is.
func sameRequests(t *testing.T, inProc, durable []string) {
	t.Helper()
	if len(inProc) != len(durable) {
		t.Fatalf("durable run sent %d requests, in-process %d", len(durable), len(inProc))
	}
	for i := range inProc {
		a, b := inProc[i], durable[i]
		if a == b {
			continue
		}
		j := 0
		for j < len(a) && j < len(b) && a[j] == b[j] {
			j++
		}
		from := max(j-200, 0)
		t.Errorf("request %d differs at byte %d:\n in-process: …%s\n durable:    …%s", i, j, a[from:min(j+200, len(a))], b[from:min(j+200, len(b))])
	}
}

// sameJSON compares a and b by their JSON encoding.
func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if string(x) != string(y) {
		t.Logf("got  %s\nwant %s", x, y)
		return false
	}
	return true
}

// allEvents reads every event of the harness's session through
// EventsQuery, page by page (an event over MaxAnswerBytes in Parts).
func (h *harness) allEvents() ([]event.Event, error) {
	return readPaged(func(from, offset int) ([]event.Event, *Part, bool, error) {
		v, err := h.env.QueryWorkflow(EventsQuery, from, offset)
		if err != nil {
			return nil, nil, false, err
		}
		var p EventsPage
		err = v.Get(&p)
		return p.Events, p.Part, p.More, err
	})
}

// continued returns the input h's run continued as new with, failing the
// test when the run ended otherwise.
func (h *harness) continued() SessionInput {
	h.t.Helper()
	var can *workflow.ContinueAsNewError
	if err := h.env.GetWorkflowError(); !errors.As(err, &can) {
		h.t.Fatalf("the run ended with %v, want a continue-as-new", err)
	}
	var next SessionInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
		h.t.Fatal(err)
	}
	return next
}
