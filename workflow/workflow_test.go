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
	"time"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/workflow"
)

const fixed = "package calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int { return a + b }\n"

// fixTestsModel scripts examples/workflows/fix-tests.yaml: the first
// implementation is wrong (a*b), the one after the failed tests is right.
func fixTestsModel(t *testing.T) *model {
	m := &model{t: t, markers: map[string]string{"plan": "You plan a change", "implement": "You implement this plan", "test": "Run the module's tests"}}
	m.next = func(stage, body string) replay.Reply {
		n := results(body)
		switch {
		case stage == "plan" && n == 0:
			return call("p1", "fs_read", `{"operations":[{"mode":"Line","path":"calc.go"}]}`)
		case stage == "plan":
			return complete("p2", `{"plan":"make Add return a + b"}`)
		case stage == "implement" && n == 0:
			code := "package calc\n\nfunc Add(a, b int) int { return a * b }\n"
			if strings.Contains(body, "The tests failed last time") {
				code = fixed
			}
			in, _ := json.Marshal(map[string]string{"command": "create", "path": "calc.go", "file_text": code})
			return call("i1", "fs_write", string(in))
		case stage == "implement":
			return complete("i2", `{"result":"wrote calc.go"}`)
		case stage == "test" && n == 0:
			return call("t1", "execute_bash", `{"command":"go test ./..."}`)
		case stage == "test":
			return complete("t2", `{"result":"tests ran"}`)
		}
		t.Errorf("unexpected request of stage %s", stage)
		return replay.Reply{Blocks: []llm.Block{llm.TextBlock("?")}}
	}
	return m
}

// "Assert receives the finalized transcript and decides ok, retry or
// fail": the test stage's Assert runs `go test ./...` in the workspace; the
// first implementation fails it (retry → implement, the test output as
// feedback), the second passes. "Exit writes what the SM authors durably
// into the SM's state slot": the slots are in the session store.
func TestWorkflowSequentialRetriesUntilTestsPass(t *testing.T) {
	dir := fixture(t)
	m := fixTestsModel(t)
	store := session.NewMemory()
	ws, s := open(t, dir, m, store)
	var rec recorder
	st, err := workflow.Run(t.Context(), ws, s, load(t, "fix-tests.yaml"), map[string]string{"goal": "make TestAdd pass"}, rec.options())
	if err != nil {
		t.Fatalf("run: %v\n%s", err, strings.Join(rec.trace(), "\n"))
	}
	if st.Outcome != workflow.OK {
		t.Fatalf("outcome %q; want ok", st.Outcome)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "calc.go")); string(b) != fixed {
		t.Errorf("calc.go is\n%s\nwant the fix", b)
	}
	var asserts []string
	for _, e := range rec.find(workflow.StageAssertOutcome, "test") {
		asserts = append(asserts, e.Outcome)
	}
	if !slices.Equal(asserts, []string{workflow.Retry, workflow.OK}) {
		t.Errorf("test stage's Assert outcomes %v; want [retry ok]", asserts)
	}
	if r := rec.find(workflow.StageAssertOutcome, "test")[0].Reason; !strings.Contains(r, "Add(2, 3) = 6") {
		t.Errorf("the retry's reason does not quote the failing test: %q", r)
	}
	if n := len(rec.find(workflow.StageEntered, "implement")); n != 2 {
		t.Errorf("implement entered %d times; want 2", n)
	}
	if got := m.requests("plan"); got != 2 {
		t.Errorf("plan made %d model calls; want 2", got)
	}
	// The stored state: slots and the end.
	saved, err := workflow.LoadState(t.Context(), store, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	if saved.Next != "" || saved.Outcome != workflow.OK || string(saved.Slots["plan"].Completion) != `{"plan":"make Add return a + b"}` {
		t.Errorf("stored state: next %q outcome %q plan slot %s", saved.Next, saved.Outcome, saved.Slots["plan"].Completion)
	}
	if saved.Attempts["implement"] != 2 || saved.RetriesUsed["test"] != 1 {
		t.Errorf("attempts %v retries %v", saved.Attempts, saved.RetriesUsed)
	}
	last := rec.find(workflow.WorkflowExit, "")
	if len(last) != 1 || last[0].Outcome != workflow.OK {
		t.Errorf("WorkflowExit events %+v", last)
	}
}

// "The stage-local transcript is not written to session message history.
// A sequential stage execution is itself a session turn (SessionTurnStart
// at the stage's Setup, SessionTurnEnd at its Exit)."
func TestWorkflowStageTranscriptIsNotSessionHistory(t *testing.T) {
	dir := fixture(t)
	m := fixTestsModel(t)
	store := session.NewMemory()
	ws, s := open(t, dir, m, store)
	var rec recorder
	if _, err := workflow.Run(t.Context(), ws, s, load(t, "fix-tests.yaml"), map[string]string{"goal": "fix"}, rec.options()); err != nil {
		t.Fatal(err)
	}
	if h := s.History(); len(h) != 0 {
		t.Errorf("the session's history has %d messages; the stages' transcripts must stay out of it", len(h))
	}
	if loop, err := store.LatestLoop(t.Context(), s.ID()); err == nil {
		if h, _ := store.History(t.Context(), loop); len(h) != 0 {
			t.Errorf("the store holds %d messages of the session; want none", len(h))
		}
	}
	a := rec.find(workflow.StageAssertOutcome, "plan")[0]
	if len(a.Transcript) != 5 { // prompt, fs_read call, its result, the completion call, its result
		t.Errorf("plan's stage-local transcript has %d messages; want 5", len(a.Transcript))
	}
	// Each sequential stage execution is bracketed by a session turn.
	tr := rec.trace()
	want := []string{"session_turn_start plan", "stage_entered plan", "stage_assert_outcome plan ok", "stage_exited plan ok", "session_turn_end plan ok", "session_turn_start implement"}
	if !slices.Equal(tr[:len(want)], want) {
		t.Errorf("events\n%s\nwant them to start with\n%s", strings.Join(tr, "\n"), strings.Join(want, "\n"))
	}
}

// reviewModel scripts examples/workflows/review.yaml.
func reviewModel(t *testing.T, fail bool) *model {
	m := &model{t: t, markers: map[string]string{"review_correctness": "for correctness", "review_style": "for style", "merge": "Merge two reviews"}}
	m.next = func(stage, body string) replay.Reply {
		n := results(body)
		switch {
		case stage == "merge":
			if !strings.Contains(body, "Add subtracts") || !strings.Contains(body, "doc comment is fine") {
				t.Errorf("the join's body lacks the siblings' state slots")
			}
			return complete("m", `{"result":"1. Add subtracts"}`)
		case n == 0:
			return call(stage[:8]+"1", "fs_read", `{"operations":[{"mode":"Line","path":"calc.go"}]}`)
		case stage == "review_correctness":
			return complete("c2", `{"findings":["Add subtracts"]}`)
		case fail:
			return complete("s2", `{"wrong":"shape"}`) // never valid: the stage's turn cap ends it
		default:
			return complete("s2", `{"findings":["doc comment is fine"]}`)
		}
	}
	return m
}

// "A parallel fan-out group (siblings + optional join) is one compound turn
// (SessionTurnStart at the scheduler's fan-out spawn, SessionTurnEnd after
// the last sibling's or the join's Exit)."
func TestWorkflowParallelFanOutWithJoin(t *testing.T) {
	m := reviewModel(t, false)
	ws, s := open(t, fixture(t), m, session.NewMemory())
	var rec recorder
	st, err := workflow.Run(t.Context(), ws, s, load(t, "review.yaml"), nil, rec.options())
	if err != nil {
		t.Fatalf("run: %v\n%s", err, strings.Join(rec.trace(), "\n"))
	}
	if st.Outcome != workflow.OK || string(st.Slots["merge"].Completion) != `{"result":"1. Add subtracts"}` {
		t.Errorf("outcome %q, merge slot %s", st.Outcome, st.Slots["merge"].Completion)
	}
	tr := rec.trace()
	if tr[0] != "session_turn_start reviews" || tr[len(tr)-2] != "session_turn_end reviews ok" {
		t.Errorf("the group is not one compound turn:\n%s", strings.Join(tr, "\n"))
	}
	starts := 0
	for _, l := range tr {
		if strings.HasPrefix(l, "session_turn_start") {
			starts++
		}
	}
	if starts != 1 {
		t.Errorf("%d session turns; want 1 for the group", starts)
	}
	if i, j := slices.Index(tr, "stage_exited merge ok"), slices.Index(tr, "session_turn_end reviews ok"); i < 0 || j != i+1 {
		t.Errorf("SessionTurnEnd does not follow the join's Exit:\n%s", strings.Join(tr, "\n"))
	}
	for _, sib := range []string{"review_correctness", "review_style"} {
		if e := rec.find(workflow.StageExited, sib); len(e) != 1 || e[0].Group != "reviews" {
			t.Errorf("%s exits %+v", sib, e)
		}
	}
}

// "Strict cancellation (sibling failure or user interrupt) is separate
// from turnCap and does not run Exit." A sibling whose check gate blocks
// fails; the other sibling, in flight, is cancelled without Exit.
func TestWorkflowStrictCancellationOnSiblingFailure(t *testing.T) {
	d, err := workflow.Parse("strict.yaml", []byte(`
name: strict
stages:
  - name: g
    parallel:
      - name: broken
        check: {command: "test -f no-such-file"}
        body: never runs
      - name: slow
        body: You read slowly.
        turnCap: 5
`))
	if err != nil {
		t.Fatal(err)
	}
	failed := make(chan struct{})
	m := &model{t: t, markers: map[string]string{"slow": "You read slowly"}}
	m.next = func(stage, body string) replay.Reply {
		<-failed // the reply comes after the sibling failed
		return call("s1", "fs_read", `{"operations":[{"mode":"Line","path":"calc.go"}]}`)
	}
	ws, s := open(t, fixture(t), m, session.NewMemory())
	var rec recorder
	o := rec.options()
	on := o.OnEvent
	o.OnEvent = func(e workflow.Event) {
		on(e)
		if e.Kind == workflow.StageExited && e.Stage == "broken" {
			close(failed)
		}
	}
	st, err := workflow.Run(t.Context(), ws, s, d, nil, o)
	if !errors.Is(err, workflow.ErrFailed) {
		t.Fatalf("run: %v; want ErrFailed\n%s", err, strings.Join(rec.trace(), "\n"))
	}
	if c := rec.find(workflow.StageCancelled, "slow"); len(c) != 1 || !strings.Contains(c[0].Reason, "strict cancellation") {
		t.Errorf("slow's StageCancelled: %+v", c)
	}
	if e := rec.find(workflow.StageExited, "slow"); len(e) != 0 {
		t.Errorf("the cancelled sibling ran Exit: %+v", e)
	}
	if _, ok := st.Slots["slow"]; ok {
		t.Error("the cancelled sibling has a state slot")
	}
	if g := rec.find(workflow.StageCheckGateResult, "broken"); len(g) != 1 || g[0].Outcome != workflow.Blocked {
		t.Errorf("check gate results %+v", g)
	}
}

// "On cap, in-flight tool calls complete and their results go to the
// stage-local transcript but not back to the model; Act ends with
// capHit: true."
func TestWorkflowTurnCapHit(t *testing.T) {
	d, err := workflow.Parse("cap.yaml", []byte(`
name: cap
stages:
  - name: reader
    body: You keep reading.
    allowedTools: [fs_read]
    turnCap: 1
`))
	if err != nil {
		t.Fatal(err)
	}
	m := &model{t: t, markers: map[string]string{"reader": "You keep reading"}}
	m.next = func(stage, body string) replay.Reply {
		return call("r"+string(rune('0'+results(body))), "fs_read", `{"operations":[{"mode":"Line","path":"calc.go"}]}`)
	}
	ws, s := open(t, fixture(t), m, session.NewMemory())
	var rec recorder
	st, err := workflow.Run(t.Context(), ws, s, d, nil, rec.options())
	if !errors.Is(err, workflow.ErrFailed) {
		t.Fatalf("run: %v; want ErrFailed (no completion, no retries)", err)
	}
	if got := m.requests("reader"); got != 2 {
		t.Errorf("%d model calls; want 2 (turnCap 1: one continuation round)", got)
	}
	a := rec.find(workflow.StageAssertOutcome, "reader")
	if len(a) != 1 || !a[0].CapHit || a[0].Outcome != workflow.Fail {
		t.Fatalf("assert %+v; want capHit and fail", a)
	}
	tr := a[0].Transcript
	lastMsg := tr[len(tr)-1]
	if lastMsg.Role != llm.RoleUser || len(lastMsg.Content) == 0 || lastMsg.Content[0].Type != llm.BlockToolResult || !strings.Contains(blockText(lastMsg.Content[0]), "Add") {
		t.Errorf("the capped round's tool result is not the transcript's last message: %+v", lastMsg)
	}
	if !st.Slots["reader"].CapHit {
		t.Error("the state slot does not say capHit")
	}
}

// "Out-of-envelope calls auto-issue a grantStageTool interaction to the
// active interactors; denied, deferred or no interactor → blocked as
// GrantDenied, and the mode gate never sees it." And a token from the
// definition's grants is consumed by one call ("token-consuming calls are
// SM-approved").
func TestWorkflowGrantAnsweredBothWays(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer workflow.GrantAnswer // "" = no interactor
		ran    bool
	}{{"granted", workflow.GrantOnce, true}, {"denied", workflow.GrantDeny, false}, {"deferred", workflow.GrantDeferred, false}, {"no interactor", "", false}} {
		t.Run(tc.name, func(t *testing.T) {
			m := &model{t: t, markers: map[string]string{"inspect": "You inspect a Go module"}}
			m.next = func(stage, body string) replay.Reply {
				switch results(body) {
				case 0:
					return call("g1", "glob", `{"pattern":"*.go"}`)
				case 1:
					return call("g2", "glob", `{"pattern":"*.mod"}`)
				case 2:
					return call("b1", "execute_bash", `{"command":"echo granted-and-ran"}`)
				}
				return complete("c", `{"result":"done"}`)
			}
			ws, s := open(t, fixture(t), m, session.NewMemory())
			var rec recorder
			o := rec.options()
			var asked []string
			if tc.answer != "" {
				o.Interactor = workflow.InteractorFunc(func(ctx context.Context, r workflow.GrantRequest) (workflow.GrantAnswer, error) {
					asked = append(asked, r.Call.Name)
					return tc.answer, nil
				})
			}
			if _, err := workflow.Run(t.Context(), ws, s, load(t, "grant.yaml"), nil, o); err != nil {
				t.Fatal(err)
			}
			var grants []string
			for _, e := range rec.find(workflow.StageGranted, "inspect") {
				grants = append(grants, e.Tool+" "+e.Outcome)
			}
			bashOutcome := workflow.GrantDenied
			if tc.ran {
				bashOutcome = workflow.Granted
			}
			want := []string{"glob granted", "glob " + bashGlobOutcome(tc.answer), "execute_bash " + bashOutcome}
			if !slices.Equal(grants, want) {
				t.Errorf("grants %v; want %v", grants, want)
			}
			if tc.answer != "" && !slices.Equal(asked, []string{"glob", "execute_bash"}) {
				t.Errorf("the interactor was asked about %v; want the second glob (token used up) and execute_bash", asked)
			}
			var bash *event.Event
			for _, e := range rec.loop["inspect"] {
				if e.ToolCall != nil && e.ToolCall.Name == "execute_bash" {
					if e.Kind == event.ToolCallModeInvoked {
						t.Errorf("the mode gate saw the call: %+v", e)
					}
					if e.Kind == event.ToolExecutionEnd {
						bash = &e
					}
				}
			}
			if bash == nil {
				t.Fatal("no ToolExecutionEnd for execute_bash")
			}
			out := blockText(*bash.ToolResult)
			if tc.ran != strings.Contains(out, "granted-and-ran") || !tc.ran && !strings.Contains(out, "GrantDenied") {
				t.Errorf("execute_bash result %q (ran: want %v)", out, tc.ran)
			}
		})
	}
}

func bashGlobOutcome(a workflow.GrantAnswer) string {
	if a == workflow.GrantOnce {
		return workflow.Granted
	}
	return workflow.GrantDenied
}

// "Strict cancellation (sibling failure or user interrupt) ... does not
// run Exit": an interrupt during a stage leaves the state at that stage;
// Resume runs it and what follows, not the stages that completed.
func TestWorkflowInterruptThenResume(t *testing.T) {
	dir := fixture(t)
	m := fixTestsModel(t)
	inner := m.next
	ctx, cancel := context.WithCancel(t.Context())
	interrupted := false
	m.next = func(stage, body string) replay.Reply {
		if stage == "implement" && !interrupted {
			interrupted = true
			cancel()
		}
		return inner(stage, body)
	}
	store := session.NewMemory()
	ws, s := open(t, dir, m, store)
	var rec recorder
	_, err := workflow.Run(ctx, ws, s, load(t, "fix-tests.yaml"), map[string]string{"goal": "fix"}, rec.options())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v; want context.Canceled", err)
	}
	if c := rec.find(workflow.StageCancelled, "implement"); len(c) != 1 {
		t.Errorf("StageCancelled of implement: %+v", c)
	}
	if e := rec.find(workflow.StageExited, "implement"); len(e) != 0 {
		t.Errorf("the interrupted stage ran Exit: %+v", e)
	}
	saved, err := workflow.LoadState(t.Context(), store, s.ID())
	if err != nil || saved.Next != "implement" {
		t.Fatalf("stored state next %q, err %v; want implement", saved.Next, err)
	}
	plans := m.requests("plan")
	var rec2 recorder
	st, err := workflow.Resume(t.Context(), ws, s, rec2.options())
	if err != nil || st.Outcome != workflow.OK {
		t.Fatalf("resume: %v, outcome %q", err, st.Outcome)
	}
	if m.requests("plan") != plans || len(rec2.find(workflow.StageEntered, "plan")) != 0 {
		t.Error("resume ran the completed plan stage again")
	}
}

// blockText is a block's text, a tool_result's content included.
func blockText(b llm.Block) string {
	t := b.Text
	for _, c := range b.Content {
		t += c.Text
	}
	return t
}

// A group interrupted after one sibling's Exit resumes with the other
// sibling and the join only: the sibling that exited is not run again.
func TestWorkflowGroupResumeRunsOnlyUnfinishedSiblings(t *testing.T) {
	m := reviewModel(t, false)
	inner := m.next
	ctx, cancel := context.WithCancel(t.Context())
	exited := make(chan struct{})
	var once sync.Once
	m.next = func(stage, body string) replay.Reply {
		if stage == "review_style" {
			once.Do(func() {
				<-exited
				cancel()
			})
		}
		return inner(stage, body)
	}
	store := session.NewMemory()
	ws, s := open(t, fixture(t), m, store)
	var rec recorder
	o := rec.options()
	on := o.OnEvent
	o.OnEvent = func(e workflow.Event) {
		on(e)
		if e.Kind == workflow.StageExited && e.Stage == "review_correctness" {
			close(exited)
		}
	}
	if _, err := workflow.Run(ctx, ws, s, load(t, "review.yaml"), nil, o); !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v; want context.Canceled", err)
	}
	saved, err := workflow.LoadState(t.Context(), store, s.ID())
	if err != nil || saved.Next != "reviews" || !slices.Equal(saved.Done, []string{"review_correctness"}) {
		t.Fatalf("stored next %q done %v (%v); want reviews, [review_correctness]", saved.Next, saved.Done, err)
	}
	before := m.requests("review_correctness")
	var rec2 recorder
	st, err := workflow.Resume(t.Context(), ws, s, rec2.options())
	if err != nil || st.Outcome != workflow.OK {
		t.Fatalf("resume: %v, outcome %q", err, st.Outcome)
	}
	if m.requests("review_correctness") != before || len(rec2.find(workflow.StageEntered, "review_correctness")) != 0 {
		t.Error("resume ran the sibling that had exited")
	}
	if len(rec2.find(workflow.StageExited, "review_style")) != 1 || len(rec2.find(workflow.StageExited, "merge")) != 1 {
		t.Errorf("resume events:\n%s", strings.Join(rec2.trace(), "\n"))
	}
}

// "A parallel fan-out group (siblings + optional join)": the siblings'
// loops run concurrently, each on its own fork: each sibling's first model
// call waits until the other's has arrived too.
func TestWorkflowSiblingsRunConcurrently(t *testing.T) {
	m := reviewModel(t, false)
	inner := m.next
	var wg sync.WaitGroup
	wg.Add(2)
	var mu sync.Mutex
	first := map[string]bool{}
	m.next = func(stage, body string) replay.Reply {
		mu.Lock()
		isFirst := stage != "merge" && !first[stage]
		first[stage] = true
		mu.Unlock()
		if isFirst {
			wg.Done()
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(time.Minute): // a hang guard, not a timing assertion
				t.Errorf("sibling %s's first call came alone: the siblings did not run concurrently", stage)
			}
		}
		return inner(stage, body)
	}
	ws, s := open(t, fixture(t), m, session.NewMemory())
	if _, err := workflow.Run(t.Context(), ws, s, load(t, "review.yaml"), nil, workflow.Options{}); err != nil {
		t.Fatal(err)
	}
}
