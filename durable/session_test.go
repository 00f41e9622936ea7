package durable

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/compact"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/session"
)

// multiTool is a session of two prompts whose first makes three rounds of
// tool calls (read, run a command, write a file) before answering.
func multiTool(t *testing.T) *model {
	return script(t,
		[]llm.Block{llm.TextBlock("Reading first."), use("toolu_01", "fs_read", `{"operations":[{"mode":"Line","path":"notes.txt"}]}`)},
		[]llm.Block{use("toolu_02", "execute_bash", `{"command":"echo ran >> log.txt && cat log.txt","summary":"log"}`),
			use("toolu_03", "fs_read", `{"operations":[{"mode":"Line","path":"log.txt"}]}`)},
		[]llm.Block{use("toolu_04", "fs_write", `{"command":"create","path":"out.txt","file_text":"written\n"}`)},
		[]llm.Block{llm.TextBlock("All done.")},
		[]llm.Block{llm.TextBlock("Second answer.")},
	)
}

// TestSessionWorkflowMatchesInProcessPrompt runs the same two-prompt,
// multi-tool session in process (Session.Prompt) and as a session workflow
// with the real activities: the requests sent on the wire, the results,
// the files the tools wrote and the stored history are the same.
func TestSessionWorkflowMatchesInProcessPrompt(t *testing.T) {
	dir := t.TempDir()
	reset := func() {
		os.Remove(filepath.Join(dir, "log.txt"))
		os.Remove(filepath.Join(dir, "out.txt"))
		write(t, filepath.Join(dir, "notes.txt"), "the notes\n")
	}
	prompts := []string{"Read notes.txt, log a line, write out.txt.", "And now?"}

	reset()
	inProc := multiTool(t)
	want, wantHistory := runInProcess(t, options(dir, inProc, session.NewMemory()), strata.SessionOptions{}, prompts...)
	wantLog, _ := os.ReadFile(filepath.Join(dir, "log.txt"))

	reset()
	dur := multiTool(t)
	store := session.NewMemory()
	h := newHarness(t, WorkerOptions{Options: options(dir, dur, store)})
	for _, p := range prompts {
		h.prompt(p)
	}
	h.run(Spec{SessionID: "s1"})

	if len(h.results) != len(prompts) {
		t.Fatalf("got %d prompt results, want %d", len(h.results), len(prompts))
	}
	for i, r := range h.results {
		if r.Error != nil {
			t.Fatalf("prompt %d: %v", i, r.Error)
		}
		if got := r.Result.Message.Text(); got != want[i] {
			t.Errorf("prompt %d: answer %q, want %q", i, got, want[i])
		}
	}
	a, b := inProc.seen(), dur.seen()
	t.Logf("comparing %d requests", len(a))
	sameRequests(t, a, b)
	if got, _ := os.ReadFile(filepath.Join(dir, "log.txt")); string(got) != string(wantLog) || string(got) != "ran\n" {
		t.Errorf("log.txt = %q, want %q (execute_bash ran once)", got, wantLog)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "out.txt")); string(got) != "written\n" {
		t.Errorf("out.txt = %q, want the fs_write content", got)
	}
	loop, err := store.LatestLoop(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	hist, err := store.History(t.Context(), loop)
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, hist, wantHistory) {
		t.Errorf("stored history differs from the in-process session's")
	}
}

// TestRecordIsIdempotent: recording a session's events again (a retried
// record activity) stores no turn twice.
func TestRecordIsIdempotent(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "notes.txt"), "the notes\n")
	store := session.NewMemory()
	spec := Spec{SessionID: "s-rec"}
	h := newHarness(t, WorkerOptions{Options: options(dir, multiTool(t), store)})
	h.prompt("Read notes.txt, log a line, write out.txt.")
	h.prompt("And now?")
	h.run(spec)
	evs, err := h.allEvents()
	if err != nil {
		t.Fatal(err)
	}
	before, err := store.LoadSession(t.Context(), "s-rec")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.acts.Record(t.Context(), RecordInput{Spec: spec, Events: evs}); err != nil {
		t.Fatal(err)
	}
	after, err := store.LoadSession(t.Context(), "s-rec")
	if err != nil {
		t.Fatal(err)
	}
	if len(before.Loops) != 2 || len(before.Turns) != 5 || !sameJSON(t, after.Turns, before.Turns) || !sameJSON(t, after.Messages, before.Messages) {
		t.Errorf("recording the %d events again changed the stored session (%d loops before)", len(evs), len(before.Loops))
	}
}

// TestBadSpecFailsNamingTheWorkspace: a spec naming an unknown layout
// fails the session at Prepare, once (a configuration error is not
// retried), with an error naming the workspace and the layout; the prompt
// waiting for it fails too.
func TestBadSpecFailsNamingTheWorkspace(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, WorkerOptions{Options: options(dir, script(t), session.NewMemory())})
	prepares := 0
	h.env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if info.ActivityType.Name == PrepareActivity {
			prepares++
		}
	})
	h.prompt("Hello?")
	h.keep = true
	h.start(SessionInput{Spec: Spec{SessionID: "s-bad", Dir: dir, Layout: "no-such-layout"}})
	err := h.env.GetWorkflowError()
	if err == nil || !strings.Contains(err.Error(), "prepare the workspace") || !strings.Contains(err.Error(), dir) ||
		!strings.Contains(err.Error(), "no-such-layout") {
		t.Errorf("workflow error %v, want one naming the workspace and the layout", err)
	}
	if prepares != 1 {
		t.Errorf("Prepare ran %d times, want once (a configuration error is not retried)", prepares)
	}
	if len(h.results) != 0 || len(h.errs) != 1 {
		t.Errorf("the waiting prompt: results %v, errors %v; want one error", h.results, h.errs)
	}
}

// TestCompactionRunsInTheWorkflow: a compaction policy without a tl;dr
// summariser is carried into the workflow: over four prompts old messages
// are detached into chunks exactly as in process (the same requests).
func TestCompactionRunsInTheWorkflow(t *testing.T) {
	policy := &compact.Policy{ChunkMinMessages: 2, ChunkMinTokens: 1, KeepMinMessages: 2, KeepMinTokens: 1}
	replies := func() *model {
		return script(t, []llm.Block{llm.TextBlock("One.")}, []llm.Block{llm.TextBlock("Two.")},
			[]llm.Block{llm.TextBlock("Three.")}, []llm.Block{llm.TextBlock("Four.")})
	}
	prompts := []string{"first", "second", "third", "fourth"}
	dir := t.TempDir()
	inProc := replies()
	o := options(dir, inProc, session.NewMemory())
	o.Compaction = policy
	runInProcess(t, o, strata.SessionOptions{}, prompts...)

	dur := replies()
	o = options(dir, dur, session.NewMemory())
	o.Compaction = policy
	h := newHarness(t, WorkerOptions{Options: o})
	for _, p := range prompts {
		h.prompt(p)
	}
	h.run(Spec{SessionID: "s-compact"})
	a, b := inProc.seen(), dur.seen()
	sameRequests(t, a, b)
	if len(b) != 4 || strings.Contains(b[3], `"text":"first"`) {
		t.Errorf("the last request still sends the first prompt as a message: compaction did not run")
	}
}
