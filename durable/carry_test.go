package durable

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/compact"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session"
)

// carryCase is a workspace whose loop has callbacks that do I/O (hooks
// at other stages than tool_call, Gather, before/after turn, a tl;dr
// summariser), run in process and as a session workflow.
type carryCase struct {
	name    string
	files   map[string]string // the workspace's files, written before each run (mtime fixedTime)
	opts    func(o *strata.Options, dir string)
	replies func(t *testing.T) *model
	prompts []string
	before  map[int]func(t *testing.T, dir string) // run before prompt i (edits between prompts)
	check   func(t *testing.T, dir string, bodies []string)
}

// fixedTime is the modification time of every file a case writes, so the
// context-file refresher sees the same times in both runs.
var fixedTime = time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)

// writeFiles replaces dir's contents with files.
func writeFiles(t *testing.T, dir string, files map[string]string, at time.Time) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		write(t, p, content)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
}

// outcome is what one prompt ended with: the answer's text or the error.
type outcome struct {
	Text string
	Err  string
}

// recorded is what a run saw: each prompt's outcome and the events.
type recorded struct {
	outcomes []outcome
	events   []event.Event
}

// runCaseInProcess runs c's prompts in an in-process session.
func runCaseInProcess(t *testing.T, c carryCase, dir string, m *model) recorded {
	t.Helper()
	writeFiles(t, dir, c.files, fixedTime)
	o := options(dir, m, session.NewMemory())
	c.opts(&o, dir)
	var mu sync.Mutex
	var rec recorded
	_, s := openSession(t, o, strata.SessionOptions{OnEventSync: func(e event.Event) {
		mu.Lock()
		rec.events = append(rec.events, e)
		mu.Unlock()
	}})
	for i, p := range c.prompts {
		if f := c.before[i]; f != nil {
			f(t, dir)
		}
		res, err := s.Prompt(t.Context(), p)
		var oc outcome
		if err != nil {
			oc.Err = err.Error()
		} else {
			oc.Text = res.Message.Text()
		}
		rec.outcomes = append(rec.outcomes, oc)
	}
	return rec
}

// runCaseDurable runs c's prompts as a session workflow in h.
func runCaseDurable(t *testing.T, c carryCase, dir string, h *harness, id string) recorded {
	t.Helper()
	for i, p := range c.prompts {
		if f := c.before[i]; f != nil {
			h.then(func() { f(t, dir); h.next() })
		}
		h.prompt(p)
	}
	var rec recorded
	h.then(func() {
		rec.events = queryEvents(t, h)
		h.next()
	})
	h.run(Spec{SessionID: id})
	for _, r := range h.results {
		var oc outcome
		if r.Error != nil {
			oc.Err = r.Error.Text
		} else {
			oc.Text = r.Result.Message.Text()
		}
		rec.outcomes = append(rec.outcomes, oc)
	}
	return rec
}

// queryEvents returns every event of h's session workflow.
func queryEvents(t *testing.T, h *harness) []event.Event {
	evs, err := h.allEvents()
	if err != nil {
		t.Error(err)
		return nil
	}
	return evs
}

// eventLine is an event as the comparison reads it: its kind, and the
// text of a stream delta, a progress line or a render.
func eventLine(e event.Event) string {
	switch {
	case e.Kind == event.MessageUpdate && e.Delta != nil:
		return string(e.Kind) + " " + e.Delta.Text
	case e.Kind == event.Progress || e.Kind == event.AgentStopped:
		return string(e.Kind) + " " + e.Text
	case e.Kind == event.Render && e.Message != nil:
		return string(e.Kind) + " " + e.Message.Text()
	}
	return string(e.Kind)
}

// sameEvents fails the test unless both runs emitted the same events,
// but for a tool's progress lines (tool_execution_update), which stay on
// the worker as the tool-call activity's heartbeat details
// (docs/durable.md).
func sameEvents(t *testing.T, inProc, durable []event.Event) {
	t.Helper()
	var a, b []string
	for _, e := range inProc {
		if e.Kind != event.ToolExecutionUpdate {
			a = append(a, eventLine(e))
		}
	}
	for _, e := range durable {
		b = append(b, eventLine(e))
	}
	if !slices.Equal(a, b) {
		t.Errorf("events differ:\n durable:    %q\n in-process: %q", b, a)
	}
}

// TestCarriedCallbacksMatchInProcess runs workspaces whose loops have
// callbacks doing I/O both ways — a kiro agent's agentSpawn,
// userPromptSubmit and stop shell hooks with a context file edited
// between prompts, the tiered layout's repository context (Gather), the
// panels layout's sources, a program's own hooks at receive_input,
// compose_request, send_request, stream_response and render with
// before/after turn callbacks, compaction writing tl;drs — and finds the
// same requests on the wire, the same answers and the same events. Before
// they were carried, the workflow dropped them all (Blueprint.NotCarried).
func TestCarriedCallbacksMatchInProcess(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // no global agents, steering or mcp.json
	for _, c := range carryCases() {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			inProc := c.replies(t)
			want := runCaseInProcess(t, c, dir, inProc)

			dur := c.replies(t)
			o := options(dir, dur, session.NewMemory())
			c.opts(&o, dir)
			writeFiles(t, dir, c.files, fixedTime)
			h := newHarness(t, WorkerOptions{Options: o})
			var bp *Blueprint
			h.env.SetOnActivityCompletedListener(func(info *activity.Info, v converter.EncodedValue, err error) {
				if info.ActivityType.Name == PrepareActivity && v != nil {
					bp = &Blueprint{}
					if err := v.Get(bp); err != nil {
						t.Error(err)
					}
				}
			})
			got := runCaseDurable(t, c, dir, h, "s-"+c.name)

			if bp == nil || len(bp.NotCarried) > 0 {
				t.Errorf("the workspace's blueprint does not carry everything: %+v", bp)
			}
			a, b := inProc.seen(), dur.seen()
			t.Logf("comparing %d requests, %d events", len(a), len(want.events))
			sameRequests(t, a, b)
			if !slices.Equal(got.outcomes, want.outcomes) {
				t.Errorf("outcomes differ:\n durable:    %+v\n in-process: %+v", got.outcomes, want.outcomes)
			}
			sameEvents(t, want.events, got.events)
			if c.check != nil {
				c.check(t, dir, b)
			}
		})
	}
}

// kiroAgent is an agent file with the three kiro hooks that are not
// tool_call's (real shell commands) and a context file.
const kiroAgent = `{"name":"x","tools":["*"],"resources":["file://NOTES.md"],"hooks":{` +
	`"agentSpawn":[{"command":"echo spawned: the build uses make"}],` +
	`"userPromptSubmit":[{"command":"echo submitted: answer briefly"}],` +
	`"stop":[{"command":"echo stopped >> stop.log"}]}}`

// bash is a reply running one command.
func bash(id, cmd string) []llm.Block {
	return []llm.Block{use(id, "execute_bash", fmt.Sprintf(`{"command":%q,"summary":"run"}`, cmd))}
}

func carryCases() []carryCase {
	text := func(s string) []llm.Block { return []llm.Block{llm.TextBlock(s)} }
	editNotes := func(t *testing.T, dir string) {
		p := filepath.Join(dir, "NOTES.md")
		write(t, p, "# Notes\nBuild with `go build ./...` now.\n")
		later := fixedTime.Add(time.Hour)
		if err := os.Chtimes(p, later, later); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("This prompt is long enough to be summarised when compaction detaches it. ", 6)
	return []carryCase{
		{
			name:  "kiro-hooks",
			files: map[string]string{".kiro/agents/x.json": kiroAgent, "NOTES.md": "# Notes\nBuild with `make`.\n"},
			opts: func(o *strata.Options, dir string) {
				o.Agent, o.Layout, o.DisableAgentHooks, o.NoProjectFiles = "x", "kiro", false, false
			},
			replies: func(t *testing.T) *model {
				return script(t, bash("toolu_h1", "echo hi"), text("Built."), text("Rebuilt."))
			},
			prompts: []string{"Build it.", "And now?"},
			before:  map[int]func(*testing.T, string){1: editNotes},
			check: func(t *testing.T, dir string, bodies []string) {
				if got, _ := os.ReadFile(filepath.Join(dir, "stop.log")); string(got) != "stopped\nstopped\n" {
					t.Errorf("stop.log = %q, want the stop hook once per prompt", got)
				}
				last := bodies[len(bodies)-1]
				for _, want := range []string{"spawned: the build uses make", "submitted: answer briefly", "go build ./..."} {
					if !strings.Contains(last, want) {
						t.Errorf("the last request lacks %q:\n%s", want, tail(last))
					}
				}
			},
		},
		{
			name:  "tiered-repository-context",
			files: map[string]string{"main.go": "package main\n\nfunc main() {}\n\nfunc Helper(x int) int { return x }\n", ".strata/system_reminder.md": "Reply in one line."},
			opts: func(o *strata.Options, dir string) {
				o.Layout, o.DisableRepoContext = "tiered", false
			},
			replies: func(t *testing.T) *model {
				return script(t, []llm.Block{use("toolu_t1", "fs_write", `{"command":"create","path":"extra.go","file_text":"package main\n\nfunc Extra() {}\n"}`)},
					text("Written."), text("Fine."))
			},
			prompts: []string{"Add extra.go.", "What is there now?"},
			check: func(t *testing.T, dir string, bodies []string) {
				last := bodies[len(bodies)-1]
				if !strings.Contains(last, "extra.go") || !strings.Contains(last, "Helper") || !strings.Contains(last, "Reply in one line.") {
					t.Errorf("the last request lacks the file tree, the symbol map or the reminder:\n%s", tail(last))
				}
			},
		},
		{
			name:  "panels",
			files: map[string]string{".kiro/agents/x.json": kiroAgent, "NOTES.md": "# Notes\nBuild with `make`.\n"},
			opts: func(o *strata.Options, dir string) {
				o.Agent, o.Layout, o.DisableAgentHooks = "x", "panels", false
			},
			replies: func(t *testing.T) *model {
				return script(t, bash("toolu_p1", "echo console-line"), text("Ran."), text("Again."))
			},
			prompts: []string{"Run it.", "And now?"},
			before:  map[int]func(*testing.T, string){1: editNotes},
			check: func(t *testing.T, dir string, bodies []string) {
				if last := bodies[len(bodies)-1]; !strings.Contains(last, "console-line") {
					t.Errorf("the last request has no console panel with the command's output:\n%s", tail(last))
				}
			},
		},
		{
			name:  "program-hooks-and-turn-callbacks",
			files: map[string]string{"notes.txt": "the notes\n"},
			opts: func(o *strata.Options, dir string) {
				o.Hooks = programHooks()
				o.BeforeTurn = func(_ context.Context, info agent.TurnInfo) error {
					if _, err := os.Stat(filepath.Join(dir, "halt")); err == nil {
						return errors.New("halt file present")
					}
					return nil
				}
				o.AfterTurn = func(_ context.Context, rec agent.TurnRecord) {
					f, err := os.OpenFile(filepath.Join(dir, "turns.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
					if err == nil {
						fmt.Fprintf(f, "turn %d %s %d results\n", rec.ID.Index, rec.StopReason, len(rec.ToolResults))
						f.Close()
					}
				}
			},
			replies: func(t *testing.T) *model {
				return script(t, []llm.Block{llm.TextBlock("Reading."), use("toolu_g1", "fs_read", `{"operations":[{"mode":"Line","path":"notes.txt"}]}`)},
					text("Read them."), text("This is forbidden text."), text("never sent"))
			},
			prompts: []string{"Read the notes.", "Say something.", "Halted?"},
			before: map[int]func(*testing.T, string){2: func(t *testing.T, dir string) {
				write(t, filepath.Join(dir, "halt"), "")
			}},
			check: func(t *testing.T, dir string, bodies []string) {
				if got, _ := os.ReadFile(filepath.Join(dir, "turns.log")); string(got) != "turn 0 tool_use 1 results\nturn 1 end_turn 0 results\nturn 0  0 results\n" {
					t.Errorf("turns.log = %q", got)
				}
				if len(bodies) != 3 || !strings.Contains(bodies[0], "[checked]") || !strings.Contains(bodies[0], "task from a hook") {
					t.Errorf("the receive_input or compose_request transform did not reach the request:\n%s", tail(bodies[0]))
				}
			},
		},
		{
			name:  "compaction-tldr",
			files: map[string]string{},
			opts: func(o *strata.Options, dir string) {
				o.Compaction = &compact.Policy{ChunkMinMessages: 2, ChunkMinTokens: 1, KeepMinMessages: 2, KeepMinTokens: 1}
				o.CompactTLDR = true
			},
			replies: func(t *testing.T) *model {
				answers := []string{"One.", "Two.", "Three.", "Four."}
				n, k := 0, 0
				return &model{t: t, replies: func(i int, body string) replay.Response {
					if strings.Contains(body, "Summarize the following message") {
						k++
						return turn(t, llm.TextBlock(fmt.Sprintf("tl;dr %d", k)))
					}
					n++
					if n > len(answers) {
						t.Errorf("request %d past the script", n)
						n = len(answers)
					}
					return turn(t, llm.TextBlock(answers[n-1]))
				}}
			},
			prompts: []string{"first " + long, "second " + long, "third " + long, "fourth " + long},
			check: func(t *testing.T, dir string, bodies []string) {
				if last := bodies[len(bodies)-1]; !strings.Contains(last, "tl;dr 1") {
					t.Errorf("the last request shows no tl;dr:\n%s", tail(last))
				}
			},
		},
	}
}

// programHooks are a program's own hooks (Options.Hooks) at every stage
// but tool_call: transforms that change the input, the context and the
// rendered answer, a send_request guard, stream_response delta hooks (a
// transform that upper-cases, an observer that fails on some deltas, a
// guard that cuts a forbidden answer off) and observers.
func programHooks() []agent.Hook {
	pass := func(context.Context, *agent.Payload) (agent.Verdict, error) { return agent.Verdict{}, nil }
	return []agent.Hook{
		{Name: "mark-input", Stage: agent.StageReceiveInput, Phase: agent.PhasePre, Kind: agent.HookTransform,
			Func: func(_ context.Context, p *agent.Payload) (agent.Verdict, error) {
				*p.Input += " [checked]"
				return agent.Verdict{}, nil
			}},
		{Name: "task", Stage: agent.StageComposeRequest, Phase: agent.PhasePre, Kind: agent.HookTransform,
			Func: func(_ context.Context, p *agent.Payload) (agent.Verdict, error) {
				p.Context.System += "\n\nThe task from a hook: task from a hook."
				return agent.Verdict{}, nil
			}},
		{Name: "watch-request", Stage: agent.StageComposeRequest, Phase: agent.PhasePost, Kind: agent.HookObserver, Func: pass},
		{Name: "size-limit", Stage: agent.StageSendRequest, Phase: agent.PhasePre, Kind: agent.HookGuard,
			Func: func(_ context.Context, p *agent.Payload) (agent.Verdict, error) {
				if len(p.Request.Messages) > 50 {
					return agent.Verdict{Deny: true, Reason: "too long"}, nil
				}
				return agent.Verdict{}, nil
			}},
		{Name: "shout", Stage: agent.StageStreamResponse, Phase: agent.PhaseDelta, Kind: agent.HookTransform,
			Func: func(_ context.Context, p *agent.Payload) (agent.Verdict, error) {
				p.Delta.Text = strings.ToUpper(p.Delta.Text)
				return agent.Verdict{}, nil
			}},
		{Name: "delta-audit", Stage: agent.StageStreamResponse, Phase: agent.PhaseDelta, Kind: agent.HookObserver,
			Func: func(_ context.Context, p *agent.Payload) (agent.Verdict, error) {
				if p.CorrelationID == "" || p.Turn == nil {
					return agent.Verdict{}, errors.New("a delta without its correlation id or turn")
				}
				if strings.Contains(p.Delta.Text, "READ") {
					return agent.Verdict{}, fmt.Errorf("the audit log of turn %d is full", p.Turn.Index)
				}
				return agent.Verdict{}, nil
			}},
		{Name: "no-forbidden", Stage: agent.StageStreamResponse, Phase: agent.PhaseDelta, Kind: agent.HookGuard,
			Func: func(_ context.Context, p *agent.Payload) (agent.Verdict, error) {
				if strings.Contains(p.Delta.Text, "FORBIDDEN") {
					return agent.Verdict{Deny: true, Reason: "a forbidden word"}, nil
				}
				return agent.Verdict{}, nil
			}},
		{Name: "sign", Stage: agent.StageRender, Phase: agent.PhasePre, Kind: agent.HookTransform,
			Func: func(_ context.Context, p *agent.Payload) (agent.Verdict, error) {
				p.Response.Message.Content = append(p.Response.Message.Content, llm.TextBlock(" — signed"))
				return agent.Verdict{}, nil
			}},
		{Name: "audit", Stage: agent.StageRender, Phase: agent.PhasePost, Kind: agent.HookObserver, Func: pass},
	}
}

// registerMoving registers the session workflow on env and, under each
// activity's name, a function running that activity on the Activities
// pick returns at the time: the activities of two workers, between which
// a session moves.
func registerMoving(env *testsuite.TestWorkflowEnvironment, pick func() *Activities) {
	env.RegisterWorkflowWithOptions(SessionWorkflow, workflow.RegisterOptions{Name: SessionWorkflowName})
	for name, method := range map[string]string{PrepareActivity: "Prepare", ModelCallActivity: "ModelCall", ToolCallActivity: "ToolCall",
		RecordActivity: "Record", HookActivity: "Hook", GatherActivity: "Gather", TurnActivity: "Turn", SummarizeActivity: "Summarize"} {
		typ := reflect.ValueOf(pick()).MethodByName(method).Type()
		f := reflect.MakeFunc(typ, func(args []reflect.Value) []reflect.Value {
			return reflect.ValueOf(pick()).MethodByName(method).Call(args)
		})
		env.RegisterActivityWithOptions(f.Interface(), activity.RegisterOptions{Name: name})
	}
}

// newMovingHarness is a harness whose activities run on *on.
func newMovingHarness(t *testing.T, on **Activities) *harness {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(quietLogger)
	env := s.NewTestWorkflowEnvironment()
	env.SetStartTime(testStart)
	env.SetTestTimeout(2 * time.Minute)
	registerMoving(env, func() *Activities { return *on })
	return &harness{t: t, env: env}
}

// TestSessionMovedBetweenWorkersSendsTheSameRequests: a panels session
// with a kiro agent (its context-files refresher, the panels' console,
// log and git sources keep state between requests) runs its first prompt
// on worker A; worker B, its own workspace opened, first serves another
// session of the same workspace, then the session's second prompt. The
// requests equal an in-process session's: the hooks' state travelled with
// the workflow, not with a worker, and B's other session did not leak
// into it. (A worker-side state would show B's other command, or lose the
// console, in the second request.)
func TestSessionMovedBetweenWorkersSendsTheSameRequests(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	c := carryCases()[2] // panels with the kiro agent
	dir := t.TempDir()
	inProc := c.replies(t)
	runCaseInProcess(t, c, dir, inProc)

	writeFiles(t, dir, c.files, fixedTime)
	main, other := c.replies(t), script(t, bash("toolu_o1", "echo other-session"), []llm.Block{llm.TextBlock("Other.")})
	m := &model{t: t, replies: func(_ int, body string) replay.Response { // one provider on the workers: a request goes to its session's script
		if strings.Contains(body, "Run the other command.") {
			return other.respond(replay.Request{Body: []byte(body)})
		}
		return main.respond(replay.Request{Body: []byte(body)})
	}}
	o := options(dir, m, session.NewMemory()) // the workers share one store, as workers of one queue must
	c.opts(&o, dir)
	a, b := newActivities(WorkerOptions{Options: o}), newActivities(WorkerOptions{Options: o})
	t.Cleanup(func() { a.Close(); b.Close() })
	on := a
	h := newMovingHarness(t, &on)
	h.prompt(c.prompts[0])
	h.then(func() {
		c.before[1](t, dir)
		onB := b // worker B serves another session of the workspace first
		h2 := newMovingHarness(t, &onB)
		h2.prompt("Run the other command.")
		h2.run(Spec{SessionID: "s-other"})
		on = b
		h.next()
	})
	h.prompt(c.prompts[1])
	h.run(Spec{SessionID: "s-moved"})
	if len(b.ws) == 0 {
		t.Fatal("worker B ran none of the moved session's activities")
	}
	got := main.seen()
	sameRequests(t, inProc.seen(), got)
	if len(got) != 3 || !strings.Contains(got[2], "console-line") || strings.Contains(got[2], "other-session") {
		t.Errorf("the moved session's last request:\n%s", tail(got[len(got)-1]))
	}
	if o := other.seen(); len(o) != 2 || !strings.Contains(o[1], "other-session") || strings.Contains(o[1], "console-line") {
		t.Errorf("the other session sent %d requests, or its console shows the moved session's command", len(o))
	}
}

// TestCarriedHookStateSurvivesContinueAsNew: the panels session of
// TestCarriedCallbacksMatchInProcess continued as new after every prompt
// (the hooks' state travels in the Blueprint to the next run) sends the
// same requests as in process.
func TestCarriedHookStateSurvivesContinueAsNew(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	c := carryCases()[2]
	c.prompts = append(c.prompts, "Once more?")
	replies := func(t *testing.T) *model {
		return script(t, bash("toolu_p1", "echo console-line"), []llm.Block{llm.TextBlock("Ran.")},
			[]llm.Block{llm.TextBlock("Again.")}, []llm.Block{llm.TextBlock("Still.")})
	}
	dir := t.TempDir()
	inProc := replies(t)
	runCaseInProcess(t, c, dir, inProc)

	dur := replies(t)
	o := options(dir, dur, session.NewMemory())
	c.opts(&o, dir)
	writeFiles(t, dir, c.files, fixedTime)
	runs := 0
	newRun := func() *harness {
		h := newHarness(t, WorkerOptions{Options: o})
		h.env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
			if info.ActivityType.Name == PrepareActivity {
				runs++
			}
		})
		return h
	}
	h := newRun()
	in := SessionInput{Spec: Spec{SessionID: "s-can-panels", PromptsPerRun: 1}}
	for i, p := range c.prompts { // one run per prompt: the test environment runs one run, the next ones go on by hand
		if i > 0 {
			h = newRun()
		}
		if f := c.before[i]; f != nil {
			h.then(func() { f(t, dir); h.next() })
		}
		h.prompt(p)
		h.keep = true
		h.start(in)
		in = h.continued()
		if in.Blueprint == nil || len(in.Blueprint.HookStates) == 0 {
			t.Fatalf("run %d: the continue-as-new carries no hook state", i+1)
		}
	}
	sameRequests(t, inProc.seen(), dur.seen())
	if runs != 1 {
		t.Errorf("Prepare ran %d times, want once (the next runs take the blueprint)", runs)
	}
}
