package workflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/workflow"
)

// request is what a test reads of an Anthropic Messages request.
type request struct {
	System []struct {
		Text string `json:"text"`
	} `json:"system"`
	Tools []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
}

func parseRequest(t *testing.T, body string) request {
	var r request
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Errorf("request body: %v", err)
	}
	return r
}

func (r request) system() string {
	var b strings.Builder
	for _, s := range r.System {
		b.WriteString(s.Text)
	}
	return b.String()
}

func (r request) toolNames() []string {
	var n []string
	for _, t := range r.Tools {
		n = append(n, t.Name)
	}
	slices.Sort(n)
	return n
}

const twoStages = `
name: two
inputs:
  - {name: who, required: true}
stages:
  - name: first
    body: "FIRST stage for {{.Inputs.who}}, attempt {{.Attempt}}."
    allowedTools: [fs_read, grep]
    completion:
      type: object
      properties: {value: {type: string}}
      required: [value]
  - name: second
    body: "SECOND stage sees {{.State.first.value}}."
    allowedTools: [glob]
`

// "The stage's rendered body (produced at Init from the StageContext that
// Setup populated) is the system prompt": inputs and an earlier stage's
// state slot are rendered into the second stage's system prompt.
func TestWorkflowRenderedBodyIsTheSystemPrompt(t *testing.T) {
	d, err := workflow.Parse("two.yaml", []byte(twoStages))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	systems := map[string]string{}
	m := &model{t: t, markers: map[string]string{"first": "FIRST stage", "second": "SECOND stage"}}
	m.next = func(stage, body string) replay.Reply {
		mu.Lock()
		systems[stage] = parseRequest(t, body).system()
		mu.Unlock()
		if stage == "first" {
			return complete("f", `{"value":"slot-value-42"}`)
		}
		return complete("s", `{"result":"ok"}`)
	}
	ws, s := open(t, fixture(t), m, session.NewMemory())
	if _, err := workflow.Run(t.Context(), ws, s, d, map[string]string{"who": "Ada"}, workflow.Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(systems["first"], "FIRST stage for Ada, attempt 1.") {
		t.Errorf("first stage's system prompt %q", systems["first"])
	}
	if !strings.HasPrefix(systems["second"], "SECOND stage sees slot-value-42.") {
		t.Errorf("second stage's system prompt %q", systems["second"])
	}
}

// "The stage's allowedTools narrow the tool manifest; a completion channel
// is injected alongside (the way a stage hands its result back)": the
// request offers exactly allowedTools and stage_complete, whose input
// schema is the stage's completion schema, enforced (an invalid result is
// an error the model sees, and does not end the stage).
func TestWorkflowAllowedToolsNarrowAndCompletionChannel(t *testing.T) {
	d, err := workflow.Parse("two.yaml", []byte(twoStages))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	tools := map[string][]string{}
	var schema json.RawMessage
	m := &model{t: t, markers: map[string]string{"first": "FIRST stage", "second": "SECOND stage"}}
	m.next = func(stage, body string) replay.Reply {
		r := parseRequest(t, body)
		mu.Lock()
		tools[stage] = r.toolNames()
		for _, tl := range r.Tools {
			if stage == "first" && tl.Name == workflow.CompletionTool {
				schema = tl.InputSchema
			}
		}
		mu.Unlock()
		switch {
		case stage == "first" && results(body) == 0:
			return complete("bad", `{"value":7}`)
		case stage == "first":
			return complete("good", `{"value":"seven"}`)
		}
		return complete("s", `{"result":"ok"}`)
	}
	ws, s := open(t, fixture(t), m, session.NewMemory())
	var rec recorder
	st, err := workflow.Run(t.Context(), ws, s, d, map[string]string{"who": "x"}, rec.options())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"fs_read", "grep", workflow.CompletionTool}; !slices.Equal(tools["first"], want) {
		t.Errorf("first stage offered %v; want %v", tools["first"], want)
	}
	if want := []string{"glob", workflow.CompletionTool}; !slices.Equal(tools["second"], want) {
		t.Errorf("second stage offered %v; want %v", tools["second"], want)
	}
	if !strings.Contains(string(schema), `"required":["value"]`) {
		t.Errorf("stage_complete's input schema %s is not the stage's completion schema", schema)
	}
	if m.requests("first") != 2 || string(st.Slots["first"].Completion) != `{"value":"seven"}` {
		t.Errorf("first: %d requests, slot %s; want the invalid result refused, the valid one kept", m.requests("first"), st.Slots["first"].Completion)
	}
	for _, e := range rec.loop["first"] {
		if e.Kind == event.ToolExecutionEnd && e.ToolCall.ID == "bad" && !strings.Contains(blockText(*e.ToolResult), "invalid input") {
			t.Errorf("the invalid result's tool_result: %q", blockText(*e.ToolResult))
		}
	}
}

// approverSpy fails the test when the mode gate's approver is asked.
type approverSpy struct{ asked []string }

func (a *approverSpy) Approve(ctx context.Context, r agent.ApprovalRequest) (agent.Decision, error) {
	a.asked = append(a.asked, r.Call.Name)
	return agent.RejectOnce, nil
}

// "In-envelope or token-consuming calls are SM-approved (the mode gate is
// bypassed) ... Guard hooks still apply": in ask mode, the stage's
// in-envelope fs_write runs without the approver, and a guard hook still
// denies an in-envelope execute_bash.
func TestWorkflowInEnvelopeBypassesModeGateGuardsStillApply(t *testing.T) {
	d, err := workflow.Parse("env.yaml", []byte(`
name: env
stages:
  - name: write
    body: WRITE stage.
    allowedTools: [fs_write, execute_bash]
`))
	if err != nil {
		t.Fatal(err)
	}
	m := &model{t: t, markers: map[string]string{"write": "WRITE stage"}}
	m.next = func(stage, body string) replay.Reply {
		switch results(body) {
		case 0:
			return call("w", "fs_write", `{"command":"create","path":"note.txt","file_text":"hi"}`)
		case 1:
			return call("b", "execute_bash", `{"command":"echo forbidden-word"}`)
		}
		return complete("c", `{"result":"done"}`)
	}
	guard := agent.Hook{Name: "no-forbidden", Stage: agent.StageToolCall, Phase: agent.PhasePre, Kind: agent.HookGuard,
		Func: func(ctx context.Context, p *agent.Payload) (agent.Verdict, error) {
			if strings.Contains(string(p.ToolCall.Input), "forbidden") {
				return agent.Verdict{Deny: true, Reason: "forbidden word"}, nil
			}
			return agent.Verdict{}, nil
		}}
	spy := &approverSpy{}
	ws, s := openWith(t, strata.Options{Dir: fixture(t), Store: session.NewMemory(), Mode: agent.ModeAsk, Approver: spy, Hooks: []agent.Hook{guard}}, m)
	var rec recorder
	if _, err := workflow.Run(t.Context(), ws, s, d, nil, rec.options()); err != nil {
		t.Fatal(err)
	}
	if len(spy.asked) != 0 {
		t.Errorf("the mode gate's approver was asked about %v", spy.asked)
	}
	outcomes := map[string]string{}
	for _, e := range rec.loop["write"] {
		if e.Kind == event.ToolCallModeInvoked {
			t.Errorf("the mode gate was consulted: %+v", e)
		}
		if e.Kind == event.ToolExecutionEnd {
			outcomes[e.ToolCall.Name] = e.Outcome + " " + blockText(*e.ToolResult)
		}
	}
	if !strings.HasPrefix(outcomes["fs_write"], event.ToolSucceeded) {
		t.Errorf("fs_write: %s", outcomes["fs_write"])
	}
	if !strings.HasPrefix(outcomes["execute_bash"], event.ToolDenied) || !strings.Contains(outcomes["execute_bash"], "forbidden word") {
		t.Errorf("execute_bash: %s; want denied by the guard", outcomes["execute_bash"])
	}
}

// "Audit events: StageEntered, StageExited, StageCheckGateResult,
// StageAssertOutcome, StageGranted, StageCancelled, WorkflowExit — distinct
// from the turn-stage events": one run emits all seven on the session's
// bus, namespaced apart from the loop's kinds.
func TestWorkflowSevenAuditEvents(t *testing.T) {
	d, err := workflow.Parse("audit.yaml", []byte(`
name: audit
stages:
  - name: first
    check: {command: "test -f go.mod"}
    body: FIRST stage.
    grants: [{tool: glob}]
  - name: g
    parallel:
      - name: broken
        check: {if: "false"}
        body: never
      - name: slow
        body: SLOW stage.
`))
	if err != nil {
		t.Fatal(err)
	}
	failed := make(chan struct{})
	m := &model{t: t, markers: map[string]string{"first": "FIRST stage", "slow": "SLOW stage"}}
	m.next = func(stage, body string) replay.Reply {
		if stage == "slow" {
			<-failed
		}
		if results(body) == 0 {
			return call("g", "glob", `{"pattern":"*.go"}`)
		}
		return complete("c", `{"result":"done"}`)
	}
	ws, s := open(t, fixture(t), m, session.NewMemory())
	var mu sync.Mutex
	seen := map[event.Kind]bool{}
	unsub := s.Subscribe(func(e event.Event) {
		mu.Lock()
		seen[e.Kind] = true
		mu.Unlock()
	})
	defer unsub()
	o := workflow.Options{OnEvent: func(e workflow.Event) {
		if e.Kind == workflow.StageExited && e.Stage == "broken" {
			close(failed)
		}
	}}
	if _, err := workflow.Run(t.Context(), ws, s, d, nil, o); !errors.Is(err, workflow.ErrFailed) {
		t.Fatalf("run: %v; want ErrFailed", err)
	}
	loopKinds := []event.Kind{event.StagePreFired, event.StagePostFired, event.TurnStart, event.TurnEnd, event.SessionTurnStart, event.SessionTurnEnd}
	mu.Lock()
	defer mu.Unlock()
	for _, k := range []event.Kind{workflow.StageEntered, workflow.StageExited, workflow.StageCheckGateResult, workflow.StageAssertOutcome,
		workflow.StageGranted, workflow.StageCancelled, workflow.WorkflowExit} {
		if !seen[k] {
			t.Errorf("%s was not published on the session's bus", k)
		}
		if slices.Contains(loopKinds, k) || !strings.HasPrefix(string(k), "workflow.") {
			t.Errorf("%s is not distinct from the loop's kinds", k)
		}
	}
	for _, k := range loopKinds {
		if seen[k] {
			t.Errorf("the stages' loop event %s reached the session's bus", k)
		}
	}
}

// guardedModel scripts examples/workflows/guarded.yaml; the judge answers
// ok.
func guardedModel(t *testing.T, ok bool) *model {
	m := &model{t: t, markers: map[string]string{"build": "Build the Go module", "summary": "Summarise this build report", "judge": "You judge the result"}}
	m.next = func(stage, body string) replay.Reply {
		switch {
		case stage == "build" && results(body) == 0:
			return call("b1", "execute_bash", `{"command":"go build ./..."}`)
		case stage == "build":
			return complete("b2", `{"result":"the build passed"}`)
		case stage == "summary":
			return complete("s", `{"result":"The module builds."}`)
		case stage == "judge":
			in, _ := json.Marshal(map[string]any{"ok": ok, "reason": "judged"})
			return call("v", "verdict", string(in))
		}
		return replay.Reply{Blocks: []llm.Block{llm.TextBlock("?")}}
	}
	return m
}

// "Assert receives the finalized transcript and decides ok, retry or
// fail": with a model judge, its verdict decides; the check gate's
// template reads the earlier stage's slot.
func TestWorkflowJudgeAndCheckGate(t *testing.T) {
	for _, ok := range []bool{true, false} {
		m := guardedModel(t, ok)
		ws, s := open(t, fixture(t), m, session.NewMemory())
		var rec recorder
		st, err := workflow.Run(t.Context(), ws, s, load(t, "guarded.yaml"), nil, rec.options())
		if ok != (err == nil) {
			t.Fatalf("judge ok=%v: run error %v", ok, err)
		}
		if g := rec.find(workflow.StageCheckGateResult, "summary"); len(g) != 1 || g[0].Outcome != workflow.Passed {
			t.Errorf("summary's check gate %+v", g)
		}
		want := workflow.OK
		if !ok {
			want = workflow.Fail
		}
		if st.Slots["summary"].Outcome != want || m.requests("judge") != 1 {
			t.Errorf("judge ok=%v: summary slot %+v, %d judge calls", ok, st.Slots["summary"], m.requests("judge"))
		}
	}
}

// A definition error names the file, the line and the field.
func TestWorkflowDefinitionErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"name: x\nstages:\n  - name: a\n    body: hi\n    turnCap: 0\n", "w.yaml:5: /stages/0/turnCap: minimum"},
		{"name: x\nstages:\n  - name: a\n    body: hi\n    bogus: 1\n", `w.yaml:5: /stages/0/bogus: unknown field "bogus"`},
		{"name: x\nstages:\n  - name: a\n    body: hi\n    next: {ok: nowhere}\n", `w.yaml:5: /stages/0/next/ok: "nowhere" is not a top-level stage`},
		{"name: x\nstages:\n  - name: a\n    body: hi\n  - name: a\n    body: again\n", `w.yaml:5: /stages/1/name: stage name "a" is already used`},
		{"name: x\nstages:\n  - name: a\n    body: '{{.Nope'\n", "w.yaml:4: /stages/0/body: not a valid template"},
		{"name: x\nstages:\n  - name: a\n    body: hi\n    completion: {type: string}\n", "w.yaml:5: /stages/0/completion: type is \"string\""},
		{"name: x\nstages:\n  - name: g\n    parallel:\n      - name: a\n        body: x\n        turnCap: -1\n", "w.yaml:7: /stages/0/parallel/0/turnCap"},
		{"name: x\nstages: [\n", "w.yaml:2: not valid YAML"},
		{"stages:\n  - name: a\n    body: hi\n", "w.yaml"},
	} {
		_, err := workflow.Parse("w.yaml", []byte(tc.src))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v; want it to contain %q", tc.src, err, tc.want)
		}
	}
}

// The README's workflow example is a valid definition.
func TestWorkflowREADMEExampleIsValid(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "## Workflows\n")
	_, block, ok2 := strings.Cut(sec, "```yaml\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md has no yaml block under ## Workflows")
	}
	d, err := workflow.Parse("README.md", []byte(block))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Stages) != 3 || d.Stages[2].Next.Retry != "implement" || d.Stages[2].Assert.Command != "go test ./..." {
		t.Errorf("README example parsed as %+v", d.Stages)
	}
}
