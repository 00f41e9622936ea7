package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/anthropic"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/prompt"
	_ "github.com/strata-agent/strata/prompt/cachefit"
	_ "github.com/strata-agent/strata/prompt/flat"
	_ "github.com/strata-agent/strata/prompt/kiro"
	_ "github.com/strata-agent/strata/prompt/panels"
	_ "github.com/strata-agent/strata/prompt/peers"
	_ "github.com/strata-agent/strata/prompt/tiered"
	"github.com/strata-agent/strata/tool"
	"github.com/strata-agent/strata/trajectory"
)

// recordedTool answers each tool call with the observation the trajectory
// recorded for its tool_use id.
type recordedTool struct {
	spec    llm.ToolSpec
	results map[string]llm.Block
}

func (r recordedTool) Spec() llm.ToolSpec { return r.spec }

func (r recordedTool) Run(_ context.Context, env *tool.Env, _ json.RawMessage) (tool.Result, error) {
	b, ok := r.results[env.CallID]
	if !ok {
		return tool.Result{}, fmt.Errorf("no recorded result for call %s", env.CallID)
	}
	return tool.Result{Content: b.Content, IsError: b.IsError}, nil
}

// recordedSession is one train trajectory cut to its first calls, as a
// script for the replay server (the real Anthropic SDK streams it), the
// tool answering with the recorded observations, and the task.
type recordedSession struct {
	name   string
	system string
	task   string
	script []replay.Response
	tool   recordedTool
}

func loadRecorded(t *testing.T, path string, calls int) recordedSession {
	t.Helper()
	tr, err := trajectory.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	calls = min(calls, len(tr.Calls))
	rs := recordedSession{name: tr.InstanceID, system: tr.Raw[0].Content, task: tr.Messages[0].Text(),
		tool: recordedTool{spec: (&tool.ExecuteBash{}).Spec(), results: map[string]llm.Block{}}}
	for _, m := range tr.Messages {
		for _, b := range m.Content {
			if b.Type == llm.BlockToolResult {
				rs.tool.results[b.ID] = b
			}
		}
	}
	for i := range calls {
		u := tr.Calls[i].Usage.LLM()
		u.Reasoning = 0 // Anthropic reports thinking inside output tokens
		resp, err := replay.Turn(llm.APIAnthropic, replay.Reply{ID: fmt.Sprintf("msg_%d", i), Blocks: tr.Reply(i).Content, Usage: u})
		if err != nil {
			t.Fatal(err)
		}
		rs.script = append(rs.script, resp)
	}
	end, err := replay.Turn(llm.APIAnthropic, replay.Reply{ID: "msg_end", Blocks: []llm.Block{llm.TextBlock("Done.")}})
	if err != nil {
		t.Fatal(err)
	}
	rs.script = append(rs.script, end)
	return rs
}

// stepRun is what one run of a recorded session produced: the request
// bodies the provider received and every event, JSON-encoded as emitted.
type stepRun struct {
	requests [][]byte
	events   [][]byte
	result   *Result
	err      error
}

// stepRig builds the Config of one run: a replay server, a bus recording
// events, a clock and an id sequence that restart with every rig, so two
// runs of the same session see the same times and ids. newLayout gives a
// fresh layout instance on each call.
type stepRig struct {
	srv    *replay.Server
	bus    *event.Bus
	events [][]byte
	tick   int
	ids    int
	cfg    func() Config
}

func newStepRig(t *testing.T, rs recordedSession, layout string) *stepRig {
	t.Helper()
	srv, err := replay.NewServer(rs.script...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	r := &stepRig{srv: srv, bus: event.NewBus()}
	r.bus.SubscribeSync(func(e event.Event) {
		b, err := json.Marshal(e)
		if err != nil {
			t.Errorf("event %s: %v", e.Kind, err)
		}
		r.events = append(r.events, b)
	})
	provider := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL()})
	tools := tool.NewRegistry(rs.tool)
	base := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	// Every fourth call needing approval is rejected, the others allowed
	// once: the approvals go through the step API too.
	approver := ApproverFunc(func(_ context.Context, req ApprovalRequest) (Decision, error) {
		if req.Index%4 == 3 {
			return RejectOnce, nil
		}
		return AllowOnce, nil
	})
	r.cfg = func() Config {
		l, err := prompt.Lookup(layout)
		if err != nil {
			t.Fatal(err)
		}
		return Config{Provider: provider, Layout: l, Tools: tools, Model: "claude-sonnet-4-5", Bus: r.bus,
			Context: prompt.Context{System: rs.system}, Mode: ModeAsk, Approver: approver, MaxTurns: 100,
			Now:   func() time.Time { r.tick++; return base.Add(time.Duration(r.tick) * 7 * time.Second) },
			NewID: func() string { r.ids++; return fmt.Sprintf("id%014d", r.ids) }}
	}
	return r
}

func (r *stepRig) finish(res *Result, err error) stepRun {
	out := stepRun{events: r.events, result: res, err: err}
	for _, req := range r.srv.Received() {
		out.requests = append(out.requests, req.Body)
	}
	return out
}

// runPrompt runs the session through Agent.Prompt.
func runPrompt(t *testing.T, rs recordedSession, layout string) stepRun {
	r := newStepRig(t, rs, layout)
	a, err := New(r.cfg())
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Prompt(context.Background(), rs.task)
	return r.finish(res, err)
}

// runSteps runs the session through the step API, encoding the State to
// JSON and decoding it into a new Engine with a new layout instance between
// every two steps; the decoded engine must ask for the same step.
func runSteps(t *testing.T, rs recordedSession, layout string) stepRun {
	r := newStepRig(t, rs, layout)
	ctx := context.Background()
	cfg := r.cfg()
	e, err := NewEngine(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.NewState(cfg.NewID(), nil, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	step := e.Start(ctx, s, rs.task, nil)
	for n := 0; ; n++ {
		data, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("step %d: encode state: %v", n, err)
		}
		s = &State{}
		if err := json.Unmarshal(data, s); err != nil {
			t.Fatalf("step %d: decode state: %v", n, err)
		}
		if e, err = NewEngine(r.cfg(), nil); err != nil {
			t.Fatal(err)
		}
		if err := e.Load(s); err != nil {
			t.Fatalf("step %d: %v", n, err)
		}
		if again := e.Next(s); !sameStep(again, step) {
			t.Fatalf("step %d: the decoded state asks for\n%+v\nnot\n%+v", n, again, step)
		}
		switch step.Kind {
		case StepSend:
			resp, err := cfg.Provider.Stream(ctx, step.Request, func(d llm.Delta) {
				if err := e.Delta(ctx, s, d); err != nil {
					t.Errorf("delta: %v", err)
				}
			})
			step = e.Responded(ctx, s, resp, err)
		case StepApprove:
			d, err := cfg.Approver.Approve(ctx, *step.Approval)
			step = e.Approved(ctx, s, d, err)
		case StepRunTool:
			step = e.ToolDone(ctx, s, e.RunTool(ctx, step))
		default:
			return r.finish(step.Result, step.Err)
		}
	}
}

// sameStep compares two steps by their JSON form (the error by its text).
func sameStep(a, b Step) bool {
	enc := func(s Step) string {
		msg := ""
		if s.Err != nil {
			msg = s.Err.Error()
		}
		s.Err = nil
		j, _ := json.Marshal(s)
		return string(j) + msg
	}
	return enc(a) == enc(b)
}

func trainSessions(t testing.TB, n int) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(shared.Path(t, "data/trajectories/mini-swe-agent/train"), "*.traj.json"))
	if err != nil || len(files) < n {
		t.Fatalf("want %d train trajectories, found %d (%v)", n, len(files), err)
	}
	sort.Strings(files)
	return files[:n]
}

func compareRuns(t *testing.T, what string, a, b stepRun) {
	t.Helper()
	if len(a.requests) != len(b.requests) {
		t.Fatalf("%s: %d requests; Prompt sent %d", what, len(b.requests), len(a.requests))
	}
	for i := range a.requests {
		if !bytes.Equal(a.requests[i], b.requests[i]) {
			t.Fatalf("%s: request %d differs:\n%s\nPrompt sent:\n%s", what, i, prompt.Preview(string(b.requests[i]), 400), prompt.Preview(string(a.requests[i]), 400))
		}
	}
	if len(a.events) != len(b.events) {
		t.Fatalf("%s: %d events; Prompt emitted %d", what, len(b.events), len(a.events))
	}
	for i := range a.events {
		if !bytes.Equal(a.events[i], b.events[i]) {
			t.Fatalf("%s: event %d differs:\n%s\nPrompt emitted:\n%s", what, i, b.events[i], a.events[i])
		}
	}
	if fmt.Sprint(a.err) != fmt.Sprint(b.err) || !reflect.DeepEqual(a.result, b.result) {
		t.Fatalf("%s: result %+v, %v; Prompt returned %+v, %v", what, b.result, b.err, a.result, a.err)
	}
}

// TestStepEngineThroughJSONMatchesPrompt drives the step API by hand on
// recorded sessions (train trajectories, streamed by the real Anthropic SDK
// from the replay server) with every layout, encoding the loop state to
// JSON and decoding it into a new engine and layout between every two
// steps: the requests must be byte-identical and the events identical to
// what Prompt produces, approvals included.
func TestStepEngineThroughJSONMatchesPrompt(t *testing.T) {
	files := trainSessions(t, 2)
	for _, layout := range prompt.Names() {
		for _, f := range files {
			rs := loadRecorded(t, f, 8)
			t.Run(layout+"/"+rs.name, func(t *testing.T) {
				want := runPrompt(t, rs, layout)
				if want.err != nil || len(want.requests) != len(rs.script) {
					t.Fatalf("Prompt: %v after %d of %d requests", want.err, len(want.requests), len(rs.script))
				}
				compareRuns(t, "step API through JSON", want, runSteps(t, rs, layout))
			})
		}
	}
}

// TestPromptIsDeterministic runs the same recorded session twice with the
// same clock and ids (Config.Now, Config.NewID): every request byte and
// every event must repeat.
func TestPromptIsDeterministic(t *testing.T) {
	rs := loadRecorded(t, trainSessions(t, 1)[0], 8)
	for _, layout := range prompt.Names() {
		t.Run(layout, func(t *testing.T) {
			compareRuns(t, "second run", runPrompt(t, rs, layout), runPrompt(t, rs, layout))
		})
	}
}
