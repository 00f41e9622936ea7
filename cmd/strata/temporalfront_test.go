package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/strata-agent/strata/durable"
	"github.com/strata-agent/strata/internal/temporaltest"
	"github.com/strata-agent/strata/internal/waterfall"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/workflow"
)

// The front ends on Temporal: chat, acp, the flag checks and the trace
// from client to workers (the rig and the crash test: temporal_test.go).

// TestTemporalChatApprovals: 'strata chat --temporal --approve ask' in line
// mode sends each line as a prompt to the session workflow, prints the
// events as they arrive, and answers the approvals the workflow waits for
// with the next line: "y" lets the first prompt's execute_bash run, "n"
// refuses the second's, which never runs and reaches the model refused;
// after "/mode all" the third prompt's call runs without asking.
func TestTemporalChatApprovals(t *testing.T) {
	r := newTemporalRig(t, func(body string, n int) replay.Reply {
		switch {
		case strings.Contains(body, "third prompt") && n == 2:
			in, _ := json.Marshal(map[string]string{"command": "echo unasked >> log.txt"})
			return replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock("toolu_third", "execute_bash", in)}}
		case strings.Contains(body, "third prompt"):
			return replay.Reply{Blocks: []llm.Block{llm.TextBlock("third answer")}}
		case strings.Contains(body, "second prompt") && n == 1:
			in, _ := json.Marshal(map[string]string{"command": "echo refused >> log.txt"})
			return replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock("toolu_second", "execute_bash", in)}}
		case strings.Contains(body, "second prompt"):
			return replay.Reply{Blocks: []llm.Block{llm.TextBlock("second answer")}}
		case n == 0:
			in, _ := json.Marshal(map[string]string{"command": "echo approved >> log.txt"})
			return replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock("toolu_first", "execute_bash", in)}}
		}
		return replay.Reply{Blocks: []llm.Block{llm.TextBlock("first answer")}}
	})
	r.startWorkers(t, 1)
	cl := r.client(t, "chat", "--approve", "ask")
	cl.Stdin = strings.NewReader("first prompt\ny\nsecond prompt\nn\n/mode all\nthird prompt\n")
	var stdout, stderr lockedBuffer
	cl.Stdout, cl.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cl.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cl.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("chat: %v\nstderr: %s\nworkers: %s", err, stderr.String(), r.workerLogs())
		}
	case <-time.After(2 * time.Minute):
		cl.Process.Kill()
		t.Fatalf("chat still running after 2 minutes\nstdout: %s\nstderr: %s\nworkers: %s", stdout.String(), stderr.String(), r.workerLogs())
	}
	out := stdout.String()
	for _, want := range []string{"⏺ execute_bash", "first answer", "second answer", "third answer"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if got := strings.Count(stderr.String(), "? allow execute_bash"); got != 2 {
		t.Errorf("asked %d approvals on stderr, want 2:\n%s", got, stderr.String())
	}
	if lines := readLines(t, filepath.Join(r.dir, "log.txt")); len(lines) != 2 || lines[0] != "approved" || lines[1] != "unasked" {
		t.Errorf("log.txt = %q, want the approved call's line and, after /mode all, the unasked one's", lines)
	}
	var refused *llm.Block
	for _, req := range r.model.Received() {
		for _, b := range toolResults(t, req.Body) {
			if b.ID == "toolu_second" {
				refused = &b
			}
		}
	}
	if refused == nil || !refused.IsError {
		t.Errorf("the refused call did not reach the model as an is_error result: %+v", refused)
	}
}

// TestTemporalFlagErrors: the --temporal commands refuse bad flags with
// exit 2 and a message naming the flag, before dialing anything; the help
// says that the embedded SQLite path stays the default.
func TestTemporalFlagErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"worker"}, "needs --temporal HOST:PORT"},
		{[]string{"worker", "--temporal", "nowhere"}, `--temporal "nowhere": want HOST:PORT`},
		{[]string{"run", "--temporal", "127.0.0.1:1", "--task-queue", "", "hi"}, "--task-queue: want a queue name"},
		{[]string{"run", "--temporal", "127.0.0.1:1", "-c", "hi"}, "-c/--continue with --temporal"},
		{[]string{"run", "--temporal", "127.0.0.1:1", "--format", "yaml", "hi"}, `unknown --format "yaml"`},
		{[]string{"bench", "temporal"}, "needs --temporal HOST:PORT"},
		{[]string{"bench", "temporal", "--temporal", "127.0.0.1:1", "--sessions", "0"}, "want at least 1 session"},
	} {
		r := runCLI(t, dir, nil, c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("strata %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(c.args, " "), r.code, r.stderr, c.want)
		}
	}
	for _, cmd := range []string{"run", "chat", "worker"} {
		r := runCLI(t, dir, nil, cmd, "--help")
		if r.code != 0 || !strings.Contains(r.stdout, "embedded SQLite") || !strings.Contains(r.stdout, "--temporal") {
			t.Errorf("strata %s --help does not say that the embedded SQLite path stays the default:\n%s", cmd, r.stdout)
		}
	}
}

// TestTemporalACP: 'strata acp --temporal --approve ask' under the
// acp-go-sdk's client: session/new starts a session workflow, the prompt's
// events arrive as session/updates (the tool call and its result, the
// answer), and the execute_bash approval goes to the client as
// session/request_permission (allowed: the command ran once); a second
// session/prompt sent while the command runs steers the first; the first
// prompt's image reaches the model; after session/set_mode all a call runs
// without asking.
func TestTemporalACP(t *testing.T) {
	answer := bashReply([]string{"sleep 1; echo via-acp >> log.txt"}, "acp answer")
	r := newTemporalRig(t, func(body string, n int) replay.Reply {
		if strings.Contains(body, "once more") && n == 1 {
			in, _ := json.Marshal(map[string]string{"command": "echo unasked >> log.txt"})
			return replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock("toolu_more", "execute_bash", in)}}
		}
		if strings.Contains(body, "mind the README") {
			return replay.Reply{Blocks: []llm.Block{llm.TextBlock("acp answer, steered")}}
		}
		return answer(body, n)
	})
	r.startWorkers(t, 1)
	c := &sdkClient{answer: "allow_once"}
	conn := startACP(t, r.dir, t.TempDir(), c, "--temporal", r.addr, "--task-queue", r.queue, "--approve", "ask")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a hang guard
	defer cancel()
	s, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: r.dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	// A second session/prompt while the approved command runs steers the
	// first and ends with it.
	steered := make(chan error, 1)
	go func() {
		for deadline := time.Now().Add(time.Minute); !c.seen(sdk.ToolCallStatusInProgress); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				steered <- errors.New("the command never showed as in progress")
				return
			}
		}
		res, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("mind the README")}})
		if err == nil && res.StopReason != sdk.StopReasonEndTurn {
			err = fmt.Errorf("steering prompt stopped %s", res.StopReason)
		}
		steered <- err
	}()
	img := sdk.ImageBlock("iVBORw0KGgo=", "image/png")
	res, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("run it"), img}})
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v, %v\nworkers: %s", res, err, r.workerLogs())
	}
	if first := string(r.model.Received()[0].Body); !strings.Contains(first, `"data":"iVBORw0KGgo="`) {
		t.Errorf("the prompt's image did not reach the model:\n%s", first)
	}
	if err := <-steered; err != nil {
		t.Errorf("the steering prompt: %v", err)
	}
	c.mu.Lock()
	var text strings.Builder
	var completed bool
	for _, u := range c.updates {
		if m := u.AgentMessageChunk; m != nil && m.Content.Text != nil {
			text.WriteString(m.Content.Text.Text)
		}
		if tc := u.ToolCallUpdate; tc != nil && tc.Status != nil && *tc.Status == sdk.ToolCallStatusCompleted {
			completed = true
		}
	}
	c.mu.Unlock()
	if !strings.Contains(text.String(), "acp answer, steered") || !completed {
		t.Errorf("updates lack the answer (got %q) or the completed tool call (%v)", text.String(), completed)
	}
	if lines := readLines(t, filepath.Join(r.dir, "log.txt")); len(lines) != 1 || lines[0] != "via-acp" {
		t.Errorf("log.txt = %q, want the approved command's one line", lines)
	}
	// session/set_mode all: the next prompt's call runs without asking.
	if _, err := conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: s.SessionId, ModeId: "bogus"}); err == nil {
		t.Error("session/set_mode bogus succeeded")
	}
	if _, err := conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: s.SessionId, ModeId: "all"}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("once more")}}); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	asked := c.asked
	c.mu.Unlock()
	if lines := readLines(t, filepath.Join(r.dir, "log.txt")); len(lines) != 2 || asked != 1 {
		t.Errorf("after set_mode all: log.txt = %q, permission requests %d; want the call run without asking (1 request in all)", lines, asked)
	}
}

// TestTemporalTraceAcrossClientAndWorker: with OTEL_* set on both, the
// client's invoke_agent span of a 'run --temporal' prompt and the worker's
// spans (the activities, their chat and execute_tool spans) reach a real
// OpenTelemetry Collector as one trace, carried in the workflow's headers.
func TestTemporalTraceAcrossClientAndWorker(t *testing.T) {
	bin := otelcol(t)
	out := filepath.Join(t.TempDir(), "otlp.json")
	httpPort, grpcPort := freePort(t), freePort(t)
	stop := startCollector(t, bin, out, httpPort, grpcPort)
	otelEnv := fmt.Sprintf("OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:%d", httpPort)
	r := newTemporalRig(t, bashReply([]string{"echo traced >> log.txt"}, "traced answer"))
	env := cliEnv([]string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + r.model.URL(), otelEnv, "OTEL_SERVICE_NAME=strata-worker"})
	w, err := startWorker(binary, r.dir, "A", env, "--temporal", r.addr, "--task-queue", r.queue, "--store", r.store)
	if err != nil {
		t.Fatal(err)
	}
	cl := r.client(t, "run", "--approve", "all", "trace this")
	cl.Env = append(cl.Env, otelEnv, "OTEL_SERVICE_NAME=strata-client")
	if b, err := cl.CombinedOutput(); err != nil {
		t.Fatalf("client: %v\n%s", err, b)
	}
	w.kill(syscall.SIGTERM) // the worker flushes its spans on the way out
	stop()
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	spans, _, err := waterfall.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	byTrace := map[string]map[string]bool{}
	for _, s := range spans {
		if byTrace[s.TraceID] == nil {
			byTrace[s.TraceID] = map[string]bool{}
		}
		byTrace[s.TraceID][s.Name] = true
	}
	for _, names := range byTrace {
		if names["invoke_agent"] {
			for _, want := range []string{"UpdateWorkflow:prompt", "RunActivity:strata.ModelCall", "RunActivity:strata.ToolCall", "execute_tool execute_bash"} {
				if !names[want] {
					t.Errorf("the prompt's trace lacks %q; it has %v", want, names)
				}
			}
			return
		}
	}
	t.Fatalf("no trace with the client's invoke_agent span among %d spans: %v", len(spans), byTrace)
}

// TestTemporalRunInterrupted: Ctrl-C stops 'run --temporal' from waiting
// (exit 130, a hint that the prompt goes on), while the prompt runs to its
// end on the worker: its tool finishes and the answer is stored.
func TestTemporalRunInterrupted(t *testing.T) {
	r := newTemporalRig(t, bashReply([]string{"echo start >> log.txt; sleep 2; echo end >> log.txt"}, "finished anyway"))
	r.startWorkers(t, 1)
	cl := r.start(t, "run", "--approve", "all", "--format", "json", "a slow one")
	stderr := &cl.stderr
	log := filepath.Join(r.dir, "log.txt")
	waitForLine(t, log, "start", cl.exited, stderr)
	cl.Process.Signal(os.Interrupt)
	<-cl.exited
	if code := cl.ProcessState.ExitCode(); code != 130 || !strings.Contains(stderr.String(), "runs to its end on the workers") {
		t.Fatalf("exit %d; want 130 and the hint\nstderr: %s", code, stderr.String())
	}
	var id string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if rest, ok := strings.CutPrefix(l, "strata: session "); ok {
			id, _, _ = strings.Cut(rest, " ")
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := openStore(r.store)
		if err != nil {
			t.Fatal(err)
		}
		d, err := st.LoadSession(context.Background(), id)
		st.Close()
		if err == nil && len(d.Messages) > 0 && fullText(d.Messages[len(d.Messages)-1].Content[0]) == "finished anyway" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s: no stored answer 30 s after the interrupt (%v); workers: %s", id, err, r.workerLogs())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if lines := readLines(t, log); len(lines) != 2 || lines[1] != "end" {
		t.Errorf("log.txt = %q: the tool did not run to its end", lines)
	}
}

// runFixTestsOnTemporal runs 'strata workflow run --temporal' with the
// fix-tests example on workers (a fixture module, a scripted model) with
// the extra flags, and returns the module's directory and stdout.
func runFixTestsOnTemporal(t *testing.T, workers int, flags ...string) (string, []byte) {
	t.Helper()
	temporaltest.Address(t)
	dir := workflowFixture(t)
	def, _ := filepath.Abs(filepath.Join("..", "..", "examples", "workflows", "fix-tests.yaml"))
	srv, _ := workflowModel(t, map[string]string{"plan": "You plan a change", "implement": "You implement this plan", "test": "Run the module's tests"}, fixTestsStep)
	t.Cleanup(func() { srv.Close() })
	r := temporalRigOn(t, srv)
	r.dir = dir
	r.startWorkers(t, workers)
	args := append([]string{"workflow", "run", def, "--input", "goal=make TestAdd pass", "--model", "claude-sonnet-4-5"}, flags...)
	out, err := r.client(t, args...).Output()
	if err != nil {
		t.Fatalf("workflow run: %v\n%s\nworkers: %s", err, out, r.workerLogs())
	}
	return dir, out
}

// TestTemporalWorkflowRun: 'strata workflow run --temporal' runs the
// fix-tests example's plan → implement → test stages on two workers (each
// stage a child workflow): the outcome is ok, every stage's slot is
// written, and the implement stage's fs_write fixed the module.
func TestTemporalWorkflowRun(t *testing.T) {
	dir, out := runFixTestsOnTemporal(t, 2, "--format", "json")
	var st workflow.State
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("not a state: %v\n%s", err, out)
	}
	if st.Outcome != "ok" || len(st.Slots) != 3 {
		t.Fatalf("state: outcome %q, slots %v; want ok and plan, implement, test", st.Outcome, st.Slots)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "calc.go")); !strings.Contains(string(b), "return a + b") {
		t.Errorf("calc.go was not fixed:\n%s", b)
	}
}

// TestTemporalWorkflowRunPrintsProgress: in text, 'strata workflow run
// --temporal' prints the audit events and the stages' tool calls as the
// in-process run prints them (read from the workflows' queries).
func TestTemporalWorkflowRunPrintsProgress(t *testing.T) {
	_, out := runFixTestsOnTemporal(t, 1)
	for _, want := range []string{"▸ session_turn_start stage=plan", "▸ stage_entered stage=plan attempt=1", "▸ stage_exited stage=plan outcome=ok attempt=1",
		"  implement: fs_write ", "▸ stage_assert_outcome stage=test outcome=ok attempt=1", "▸ workflow_exit outcome=ok"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
}

// seen reports whether a tool_call_update with status arrived.
func (c *sdkClient) seen(status sdk.ToolCallStatus) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, u := range c.updates {
		if tc := u.ToolCallUpdate; tc != nil && tc.Status != nil && *tc.Status == status {
			return true
		}
	}
	return false
}

// TestTemporalWorkerDefaultsApply: a client that gives no --approve leaves
// the worker's --approve all in force (the call runs without asking); one
// that gives --approve ask overrides it (the call is asked, and refused:
// no terminal).
func TestTemporalWorkerDefaultsApply(t *testing.T) {
	r := newTemporalRig(t, bashReply([]string{"echo ran >> log.txt"}, "done"))
	r.startWorkers(t, 1, "--approve", "all")
	if out, err := r.client(t, "run", "first").CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	out, _ := r.client(t, "run", "--approve", "ask", "second").CombinedOutput()
	if !strings.Contains(string(out), "needs approval but stdin is not a terminal") {
		t.Errorf("--approve ask did not ask (and refuse):\n%s", out)
	}
	if lines := readLines(t, filepath.Join(r.dir, "log.txt")); len(lines) != 1 {
		t.Errorf("log.txt = %q; want the first run's line only", lines)
	}
}

// TestTemporalNoWorkerHint: with no worker polling the queue, 'run
// --temporal' says so (naming the worker command to start) instead of
// waiting in silence.
func TestTemporalNoWorkerHint(t *testing.T) {
	r := newTemporalRig(t, bashReply(nil, "never asked"))
	cl := r.start(t, "run", "anyone there?")
	defer cl.Process.Kill()
	want := "no worker has taken session"
	for deadline := time.Now().Add(time.Minute); !strings.Contains(cl.stderr.String(), want); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no hint after a minute; stderr: %s", cl.stderr.String())
		}
	}
	if !strings.Contains(cl.stderr.String(), "strata worker --temporal "+r.addr+" --task-queue "+r.queue) {
		t.Errorf("the hint does not name the worker command: %s", cl.stderr.String())
	}
	// Leave no session workflow waiting on a shared server.
	_, rest, _ := strings.Cut(cl.stderr.String(), "strata: session ")
	id, _, _ := strings.Cut(rest, " ")
	c, err := temporalFlags{addr: r.addr, taskQueue: r.queue, namespace: temporaltest.Namespace}.dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.TerminateWorkflow(context.Background(), durable.WorkflowID(id), "", "test over"); err != nil {
		t.Errorf("terminating session %q's workflow: %v", id, err)
	}
}

// TestTemporalACPLoadSession: 'strata acp --temporal' sends the prompt's
// usage_update, and advertises and serves session/load (it used to refuse
// it): a session whose workflow has
// ended is continued from the workers' store in a new workflow run, its
// conversation replayed to the client as updates first, and its next prompt
// carries the earlier turns to the model; an id the store lacks is refused
// naming it, not created.
func TestTemporalACPLoadSession(t *testing.T) {
	r := newTemporalRig(t, func(body string, n int) replay.Reply {
		if strings.Contains(body, "second question") {
			return replay.Reply{Blocks: []llm.Block{llm.TextBlock("second answer")}}
		}
		return replay.Reply{Blocks: []llm.Block{llm.TextBlock("first answer")}, Usage: llm.Usage{Input: 1000, Output: 20}}
	})
	r.startWorkers(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a hang guard
	defer cancel()
	first := &sdkClient{answer: "allow_once"}
	conn := startACP(t, r.dir, t.TempDir(), first, "--temporal", r.addr, "--task-queue", r.queue)
	s, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: r.dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("first question")}}); err != nil {
		t.Fatal(err)
	}
	// The prompt's usage_update, read from the workflow's events (none was
	// sent over Temporal before): the context the conversation holds, the
	// model's window, the cost.
	first.mu.Lock()
	var usage *sdk.SessionUsageUpdate
	for _, u := range first.updates {
		if u.UsageUpdate != nil {
			usage = u.UsageUpdate
		}
	}
	first.mu.Unlock()
	if usage == nil || usage.Used != 1020 || usage.Size <= 0 || usage.Cost == nil || usage.Cost.Amount <= 0 {
		t.Errorf("usage_update %+v; want 1,020 tokens used of a known window, priced", usage)
	}
	if err := conn.Cancel(ctx, sdk.CancelNotification{SessionId: s.SessionId}); err != nil {
		t.Fatal(err)
	}
	tc, err := client.Dial(client.Options{HostPort: r.addr, DataConverter: durable.DataConverter(), Logger: tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	if err := tc.GetWorkflow(ctx, durable.WorkflowID(string(s.SessionId)), "").Get(ctx, nil); err != nil {
		t.Fatalf("the first session workflow did not end cleanly: %v", err)
	}

	again := &sdkClient{answer: "allow_once"}
	conn2 := startACP(t, r.dir, t.TempDir(), again, "--temporal", r.addr, "--task-queue", r.queue)
	init, err := conn2.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	if err != nil || !init.AgentCapabilities.LoadSession {
		t.Fatalf("initialize: loadSession %v, %v; want advertised", init.AgentCapabilities.LoadSession, err)
	}
	if _, err := conn2.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: s.SessionId, Cwd: r.dir, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatalf("session/load: %v\nworkers: %s", err, r.workerLogs())
	}
	again.mu.Lock()
	var user, agentText strings.Builder
	for _, u := range again.updates {
		if m := u.UserMessageChunk; m != nil && m.Content.Text != nil {
			user.WriteString(m.Content.Text.Text)
		}
		if m := u.AgentMessageChunk; m != nil && m.Content.Text != nil {
			agentText.WriteString(m.Content.Text.Text)
		}
	}
	again.mu.Unlock()
	if !strings.Contains(user.String(), "first question") || !strings.Contains(agentText.String(), "first answer") {
		t.Errorf("session/load replayed user %q and agent %q; want the first turn", user.String(), agentText.String())
	}
	if _, err := conn2.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("second question")}}); err != nil {
		t.Fatal(err)
	}
	got := r.model.Received()
	if last := string(got[len(got)-1].Body); !strings.Contains(last, "first question") || !strings.Contains(last, "first answer") {
		t.Errorf("the loaded session's request lacks the earlier turn:\n%s", last)
	}
	_, err = conn2.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: "0123456789abcdef", Cwd: r.dir, McpServers: []sdk.McpServer{}})
	if err == nil || !strings.Contains(err.Error(), "not in the workers' store") {
		t.Errorf("session/load of an unknown id: %v; want refused naming the store", err)
	}
}

// TestTemporalRunUnknownSession: 'run --temporal --session ID' continues a
// stored session; an id the workers' store lacks fails naming it (exit 1)
// instead of starting a new, empty session under that id, as it used to.
func TestTemporalRunUnknownSession(t *testing.T) {
	r := newTemporalRig(t, func(string, int) replay.Reply {
		return replay.Reply{Blocks: []llm.Block{llm.TextBlock("should not answer")}}
	})
	r.startWorkers(t, 1)
	cl := r.client(t, "run", "--session", "0123456789abcdef", "hello")
	out, err := cl.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "0123456789abcdef is not in the workers' store") {
		t.Errorf("run --session with an unknown id: %v\n%s\nwant exit 1 naming the id and the store", err, out)
	}
	if n := len(r.model.Received()); n != 0 {
		t.Errorf("the model got %d requests for a session that does not exist", n)
	}
}
