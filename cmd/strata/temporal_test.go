package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/temporaltest"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// The Temporal integration tests run built 'strata worker' processes
// against a real Temporal dev server (internal/temporaltest) and a scripted
// model on 127.0.0.1 (docs/durable.md, README "Running on Temporal").

// temporalRig is a Temporal server, a task queue of its own, a workspace,
// the workers' shared session store and a scripted model.
type temporalRig struct {
	addr, queue, dir, store string
	model                   *replay.Server
	workers                 []*workerProc
}

// newTemporalRig gets a server (or skips) and a scripted model that answers
// each request with reply(request body, tool_result blocks in it).
func newTemporalRig(t *testing.T, reply func(body string, results int) replay.Reply) *temporalRig {
	t.Helper()
	temporaltest.Address(t) // skip before serving anything when there is no server
	srv, err := replay.NewResponder(func(r replay.Request) replay.Response {
		body := string(r.Body)
		resp, err := replay.Turn(llm.APIAnthropic, reply(body, strings.Count(body, `"type":"tool_result"`)))
		if err != nil {
			t.Error(err)
		}
		return resp
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return temporalRigOn(t, srv)
}

// temporalRigOn is a rig whose workers are answered by the model server srv.
func temporalRigOn(t *testing.T, srv *replay.Server) *temporalRig {
	t.Helper()
	return &temporalRig{addr: temporaltest.Address(t), queue: fmt.Sprintf("strata-test-%s-%d", t.Name(), time.Now().UnixNano()),
		dir: t.TempDir(), store: filepath.Join(t.TempDir(), "sessions.db"), model: srv}
}

// startWorkers starts n workers named A, B, … (env STRATA_TEST_WORKER), all
// polling the rig's queue with the same store, answered by its model, with
// the extra worker flags.
func (r *temporalRig) startWorkers(t *testing.T, n int, extra ...string) {
	t.Helper()
	for i := range n {
		name := string(rune('A' + i))
		env := cliEnv([]string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + r.model.URL(), "STRATA_TEST_WORKER=" + name})
		args := append([]string{"--temporal", r.addr, "--task-queue", r.queue, "--store", r.store}, extra...)
		w, err := startWorker(binary, r.dir, name, env, args...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.kill(syscall.SIGTERM) })
		r.workers = append(r.workers, w)
	}
}

// client returns a 'strata ARGS… --temporal …' command for the rig's queue
// (no provider key: the workers answer).
// It is killed if still running after 3 minutes (a hang guard).
func (r *temporalRig) client(t *testing.T, args ...string) *exec.Cmd {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, binary, append(args, "--temporal", r.addr, "--task-queue", r.queue)...)
	cmd.Dir, cmd.Env = r.dir, cliEnv(nil)
	return cmd
}

// runningClient is a client command started in the background.
type runningClient struct {
	*exec.Cmd
	stdout, stderr lockedBuffer
	exited         chan error // gets Wait's error when it exits
}

// start starts r.client(args…) in the background.
func (r *temporalRig) start(t *testing.T, args ...string) *runningClient {
	t.Helper()
	c := &runningClient{Cmd: r.client(t, args...), exited: make(chan error, 1)}
	c.Stdout, c.Stderr = &c.stdout, &c.stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.exited <- c.Wait() }()
	return c
}

// bashReply scripts a model that asks for execute_bash with commands[n]
// (tool_use id toolu_<n+1>) while n < len(commands), then answers final.
func bashReply(commands []string, final string) func(string, int) replay.Reply {
	return func(_ string, n int) replay.Reply {
		if n >= len(commands) {
			return replay.Reply{Blocks: []llm.Block{llm.TextBlock(final)}}
		}
		in, _ := json.Marshal(map[string]string{"command": commands[n]})
		return replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock(fmt.Sprintf("toolu_%d", n+1), "execute_bash", in)}}
	}
}

// TestTemporalWorkerCrashContinuesSession: two worker processes serve a
// three-tool session; the worker running the long second tool is killed
// with SIGKILL mid-tool. The other worker continues the session to the
// end: each side-effecting execute_bash ran exactly once (one line each in
// log.txt), the interrupted call reached the model as an interrupted
// is_error tool_result and was not run again, and the session stored by the
// workers holds the assistant messages and tool results the client printed.
func TestTemporalWorkerCrashContinuesSession(t *testing.T) {
	commands := []string{
		"echo step1 $STRATA_TEST_WORKER >> log.txt",
		"echo long-start $STRATA_TEST_WORKER >> log.txt; exec sleep 300",
		"echo step3 $STRATA_TEST_WORKER >> log.txt",
	}
	r := newTemporalRig(t, bashReply(commands, "all three ran"))
	r.startWorkers(t, 2)
	began := time.Now()
	cl := r.start(t, "run", "--approve", "all", "--format", "json", "run the three commands")
	exited, stdout, stderr := cl.exited, &cl.stdout, &cl.stderr

	log := filepath.Join(r.dir, "log.txt")
	victim := waitForLine(t, log, "long-start ", exited, stderr)
	var killed *workerProc
	for _, w := range r.workers {
		if w.name == victim {
			killed = w
		}
	}
	if killed == nil {
		t.Fatalf("log.txt names worker %q, not one of the test's", victim)
	}
	killed.kill(syscall.SIGKILL)
	killedAt := time.Since(began)

	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("client: %v\nstderr: %s\nworkers: %s", err, stderr.String(), r.workerLogs())
		}
	case <-time.After(3 * time.Minute):
		cl.Process.Kill()
		t.Fatalf("client still running 3 minutes after the kill\nstderr: %s\nworkers: %s", stderr.String(), r.workerLogs())
	}
	t.Logf("worker %s killed %.1fs after submitting; the session ended %.1fs after submitting", victim, killedAt.Seconds(), time.Since(began).Seconds())

	// Each side-effecting call ran exactly once, the last on the survivor.
	lines := readLines(t, log)
	survivor := "A"
	if victim == "A" {
		survivor = "B"
	}
	want := []string{"step1 ", "long-start " + victim, "step3 " + survivor}
	if len(lines) != 3 {
		t.Fatalf("log.txt has %d lines, want 3 (each command once):\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("log.txt line %d = %q, want it to start with %q", i+1, lines[i], w)
		}
	}

	// The model got the second call back as interrupted, not re-run.
	interrupted := r.toolResult(t, "toolu_2")
	if interrupted == nil || !interrupted.IsError || !strings.Contains(fullText(*interrupted), "interrupted") {
		t.Fatalf("the model did not get toolu_2 as an interrupted is_error result: %+v", interrupted)
	}

	// The client's events and the workers' stored session agree.
	evs, res := clientEvents(t, stdout.String())
	if res.Answer != "all three ran" || res.Error != "" || res.LoopID == "" {
		t.Fatalf("client result: %+v", res)
	}
	seen := map[string]llm.Block{}
	for _, e := range evs {
		if e.Kind == event.ToolExecutionEnd && e.ToolResult != nil {
			seen[e.ToolResult.ID] = *e.ToolResult
		}
	}
	var answers []string
	for _, e := range evs {
		if e.Kind == event.MessageEnd && e.Message != nil && e.Message.Role == llm.RoleAssistant {
			answers = append(answers, assistantLine(*e.Message))
		}
	}
	stored, storedAnswers := workersSession(t, r.store, res.SessionID)
	if want := []string{"tool_use toolu_1", "tool_use toolu_2", "tool_use toolu_3", "text all three ran"}; !slices.Equal(answers, want) || !slices.Equal(storedAnswers, want) {
		t.Errorf("assistant messages: the client saw %q, the store has %q; want %q", answers, storedAnswers, want)
	}
	for _, id := range []string{"toolu_1", "toolu_2", "toolu_3"} {
		c, s := seen[id], stored[id]
		if c.ID == "" || s.ID == "" || c.IsError != s.IsError || fullText(c) != fullText(s) {
			t.Errorf("%s: client saw %+v, the store has %+v", id, c, s)
		}
	}
	if len(stored) != 3 {
		t.Errorf("the store has %d tool results, want 3: %v", len(stored), stored)
	}
}

// waitForLine waits (up to 60 s) until file has a line starting with
// prefix and returns the rest of that line.
func waitForLine(t *testing.T, file, prefix string, exited <-chan error, stderr *lockedBuffer) string {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		for _, l := range readLines(t, file) {
			if rest, ok := strings.CutPrefix(l, prefix); ok {
				return strings.TrimSpace(rest)
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("client exited (%v) before %q was logged; stderr: %s", err, prefix, stderr.String())
		case <-deadline:
			t.Fatalf("no %q line in %s after 60 s; client stderr: %s", prefix, file, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// readLines returns file's lines (none when it does not exist yet).
func readLines(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// toolResults returns the tool_result blocks of an Anthropic request body.
func toolResults(t *testing.T, body []byte) []llm.Block {
	t.Helper()
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("request body: %v", err)
	}
	var out []llm.Block
	for _, m := range req.Messages {
		var blocks []struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			IsError   bool            `json:"is_error"`
			Content   json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue // a plain string content
		}
		for _, b := range blocks {
			if b.Type != "tool_result" {
				continue
			}
			var text string
			if json.Unmarshal(b.Content, &text) != nil {
				var parts []struct{ Text string }
				_ = json.Unmarshal(b.Content, &parts)
				for _, p := range parts {
					text += p.Text
				}
			}
			out = append(out, llm.ToolResultBlock(b.ToolUseID, text, b.IsError))
		}
	}
	return out
}

// clientEvents parses 'run --format json' output: the events and the
// result line.
func clientEvents(t *testing.T, out string) ([]event.Event, runResult) {
	t.Helper()
	var evs []event.Event
	var res runResult
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		var probe struct{ Kind string }
		if err := json.Unmarshal(sc.Bytes(), &probe); err != nil {
			t.Fatalf("not JSON: %q", sc.Text())
		}
		if probe.Kind == "result" {
			if err := json.Unmarshal(sc.Bytes(), &res); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var e event.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e)
	}
	return evs, res
}

// workersSession opens the workers' store and returns the session's stored
// tool_result blocks by tool_use id and its assistant messages
// (assistantLine), in order.
func workersSession(t *testing.T, store, id string) (map[string]llm.Block, []string) {
	t.Helper()
	st, err := openStore(store)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d, err := st.LoadSession(context.Background(), id)
	if err != nil {
		t.Fatalf("session %s in the workers' store %s: %v", id, store, err)
	}
	out := map[string]llm.Block{}
	var answers []string
	for _, m := range d.Messages {
		if m.Role == llm.RoleAssistant {
			answers = append(answers, assistantLine(llm.Message{Role: m.Role, Content: m.Content}))
		}
		for _, b := range m.Content {
			if b.Type == llm.BlockToolResult {
				if _, dup := out[b.ID]; dup {
					t.Errorf("tool result %s stored twice", b.ID)
				}
				out[b.ID] = b
			}
		}
	}
	return out, answers
}

// assistantLine sums up an assistant message: "tool_use ID…" for its
// calls, else "text TEXT".
func assistantLine(m llm.Message) string {
	var ids []string
	for _, c := range m.ToolUses() {
		ids = append(ids, c.ID)
	}
	if len(ids) > 0 {
		return "tool_use " + strings.Join(ids, " ")
	}
	return "text " + m.Text()
}

// workerLogs is every worker's stderr, for failure messages.
func (r *temporalRig) workerLogs() string {
	var sb strings.Builder
	for _, w := range r.workers {
		fmt.Fprintf(&sb, "\n--- worker %s (pid %d):\n%s", w.name, w.pid(), w.stderr)
	}
	return sb.String()
}

// TestTemporalFiftySessionsTwoWorkers: 50 concurrent sessions on two worker
// processes all end with their own answer, each of their side-effecting
// tool calls wrote its line exactly once, in both the Temporal run and the
// in-process run 'strata bench temporal' compares it with.
func TestTemporalFiftySessionsTwoWorkers(t *testing.T) {
	addr := temporaltest.Address(t)
	b := temporalBench{temporal: temporalFlags{addr: addr, taskQueue: defaultTaskQueue, namespace: temporaltest.Namespace},
		sessions: 50, workers: 2, tools: 2, binary: binary, format: "table"}
	var progress lockedBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hang guard
	defer cancel()
	rep, err := runTemporalBench(ctx, b, &progress)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	for name, f := range map[string]benchFigures{"temporal": rep.Temporal, "in-process": rep.InProcess} {
		if f.Sessions != 50 || f.ModelCalls != 50*3 || f.ToolCalls != 100 {
			t.Errorf("%s run: %+v; want 50 sessions, 150 model calls, 100 tool calls", name, f)
		}
	}
	var table strings.Builder
	if err := writeTemporalBench(&table, b, rep); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", table.String())
}

// BenchmarkTemporalVsInProcess is 'strata bench temporal' under go test:
// b.N rounds of 50 concurrent sessions (2 execute_bash calls each) on two
// workers, then in-process, reporting both throughputs and their ratio.
//
//	STRATA_TEST_TEMPORAL=$(scripts/temporal-dev start) go test ./cmd/strata -run '^$' -bench TemporalVsInProcess -benchtime 3x
func BenchmarkTemporalVsInProcess(b *testing.B) {
	addr := temporaltest.Address(b)
	o := temporalBench{temporal: temporalFlags{addr: addr, taskQueue: defaultTaskQueue, namespace: temporaltest.Namespace},
		sessions: 50, workers: 2, tools: 2, binary: binary, format: "table"}
	var onTemporal, inProcess float64
	for b.Loop() {
		var progress lockedBuffer
		rep, err := runTemporalBench(context.Background(), o, &progress)
		if err != nil {
			b.Fatalf("%v\n%s", err, progress.String())
		}
		onTemporal += rep.Temporal.SessionsPerSec
		inProcess += rep.InProcess.SessionsPerSec
	}
	n := float64(b.N)
	b.ReportMetric(onTemporal/n, "temporal-sessions/s")
	b.ReportMetric(inProcess/n, "inprocess-sessions/s")
	b.ReportMetric(onTemporal/inProcess, "ratio")
}
