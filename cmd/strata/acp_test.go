package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/strata-agent/strata/internal/peers"
	"github.com/strata-agent/strata/llm"
)

// acpxUpdates runs acpx against `strata acp ARGS` and returns the
// session/update kinds it printed (tool calls with their status) and the
// final stop reason.
func acpxUpdates(t *testing.T, ws string, approve string, prompt string, args ...string) ([]string, string, string) {
	return acpxRun(t, ws, 0, approve, prompt, args...)
}

// acpxRun is acpxUpdates expecting acpx to exit with exitCode (acpx exits 5,
// PERMISSION_DENIED, after --deny-all rejected a request).
func acpxRun(t *testing.T, ws string, exitCode int, approve string, prompt string, args ...string) ([]string, string, string) {
	t.Helper()
	agentCmd := binary + " acp " + strings.Join(args, " ")
	cmd := peers.Command(t, "acpx", "--agent", agentCmd, approve, "--format", "json", "exec", prompt)
	cmd.Dir = ws
	cmd.Env = append(cmd.Env, "STRATA_DATA_DIR="+filepath.Join(ws, ".data"), "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=")
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != exitCode {
		t.Fatalf("acpx: %v, want exit %d\n%s", err, exitCode, out)
	}
	var kinds []string
	stop := ""
	for _, line := range strings.Split(string(out), "\n") {
		var m struct {
			Method string
			Params struct {
				Update map[string]any
			}
			Result struct{ StopReason string }
		}
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		if m.Method == "session/update" {
			k, _ := m.Params.Update["sessionUpdate"].(string)
			if st, ok := m.Params.Update["status"].(string); ok {
				k += ":" + st
			}
			if len(kinds) == 0 || kinds[len(kinds)-1] != k || !strings.HasSuffix(k, "chunk") {
				kinds = append(kinds, k)
			}
		}
		if m.Method == "session/request_permission" {
			kinds = append(kinds, "request_permission")
		}
		if m.Result.StopReason != "" {
			stop = m.Result.StopReason
		}
	}
	return kinds, stop, string(out)
}

// acpx drives `strata acp` (offline demo) through a multi-step tool-using
// prompt: the updates come in the loop's order and the turn ends end_turn.
func TestACPXDrivesMultiStepPrompt(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "README.md"), []byte("# demo workspace\n"), 0o644)
	kinds, stop, out := acpxUpdates(t, ws, "--approve-all", "what is in this directory?")
	want := []string{"agent_message_chunk", "tool_call:pending", "tool_call_update:in_progress", "tool_call_update:completed",
		"agent_message_chunk", "tool_call:pending", "tool_call_update:in_progress", "tool_call_update:completed", "agent_message_chunk"}
	if strings.Join(kinds, " ") != strings.Join(want, " ") || stop != "end_turn" {
		t.Errorf("updates %v stop %q\nwant %v", kinds, stop, want)
	}
	if !strings.Contains(out, "# demo workspace") {
		t.Error("the fs_read result did not reach the client")
	}
	// acpx offers fs/read_text_file, so fs_read reads through the client.
	if !strings.Contains(out, `"method":"fs/read_text_file"`) {
		t.Error("fs_read did not use the client's fs/read_text_file")
	}
}

// execute_bash runs in the client's terminal when the client offers one:
// terminal/create, the terminal embedded in the tool call, wait, output,
// release; the exit status and output reach the model's tool_result.
func TestACPXClientTerminal(t *testing.T) {
	ws, streams := t.TempDir(), t.TempDir()
	u := llm.Usage{Input: 10, Output: 5}
	b := writeStream(t, streams, "b.sse", u, llm.StopToolUse,
		llm.ToolUseBlock("toolu_b1", "execute_bash", json.RawMessage(`{"command":"echo from-terminal; pwd; exit 3"}`)))
	f := writeStream(t, streams, "f.sse", u, llm.StopEndTurn, llm.TextBlock("done"))
	_, stop, out := acpxUpdates(t, ws, "--approve-all", "run it", "--replay", b+","+f)
	for _, want := range []string{`"method":"terminal/create"`, `"type":"terminal"`, `"method":"terminal/wait_for_exit"`,
		`"method":"terminal/output"`, `"method":"terminal/release"`, `exit status: 3\n--- output ---\nfrom-terminal\n` + ws} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s", want)
		}
	}
	if stop != "end_turn" {
		t.Errorf("stop %q\n%s", stop, out)
	}
}

// A call outside the allowlist goes to the client as session/request_permission;
// acpx answers it both ways.
func TestACPXPermissionBothWays(t *testing.T) {
	for _, c := range []struct {
		approve string
		exit    int
		written bool
		status  string
	}{{"--approve-all", 0, true, "tool_call_update:completed"}, {"--deny-all", 5, false, "tool_call_update:failed"}} {
		ws, streams := t.TempDir(), t.TempDir()
		u := llm.Usage{Input: 10, Output: 5}
		w := writeStream(t, streams, "w.sse", u, llm.StopToolUse,
			llm.ToolUseBlock("toolu_w1", "fs_write", json.RawMessage(`{"command":"create","path":"out.txt","file_text":"written over ACP\n"}`)))
		f := writeStream(t, streams, "f.sse", u, llm.StopEndTurn, llm.TextBlock("done"))
		kinds, stop, out := acpxRun(t, ws, c.exit, c.approve, "write the file", "--replay", w+","+f)
		_, err := os.Stat(filepath.Join(ws, "out.txt"))
		if (err == nil) != c.written || stop != "end_turn" {
			t.Errorf("%s: written=%v stop=%q\n%s", c.approve, err == nil, stop, out)
		}
		joined := strings.Join(kinds, " ")
		if !strings.Contains(joined, "tool_call:pending request_permission ") || !strings.Contains(joined, c.status+" agent_message_chunk") || strings.Count(joined, c.status) != 1 {
			t.Errorf("%s: updates %v", c.approve, kinds)
		}
		if c.written && !strings.Contains(out, `"method":"fs/write_text_file"`) {
			t.Error("fs_write did not write through the client's fs/write_text_file")
		}
		if c.written && !strings.Contains(out, `{"newText":"written over ACP\n","path":"out.txt","type":"diff"}`) {
			t.Errorf("no ACP diff content for the created file:\n%s", out)
		}
	}
}

// sdkClient is the acp-go-sdk's own client side, recording updates.
type sdkClient struct {
	mu      sync.Mutex
	updates []sdk.SessionUpdate
	answer  sdk.PermissionOptionId
	asked   int // permission requests received
}

func (c *sdkClient) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, n.Update)
	c.mu.Unlock()
	return nil
}
func (c *sdkClient) RequestPermission(context.Context, sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.asked++
	c.mu.Unlock()
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(c.answer)}, nil
}
func (c *sdkClient) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, sdk.NewMethodNotFound("fs/read_text_file")
}
func (c *sdkClient) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, sdk.NewMethodNotFound("fs/write_text_file")
}
func (c *sdkClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, sdk.NewMethodNotFound("terminal/create")
}
func (c *sdkClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, sdk.NewMethodNotFound("terminal/kill")
}
func (c *sdkClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, sdk.NewMethodNotFound("terminal/output")
}
func (c *sdkClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, sdk.NewMethodNotFound("terminal/release")
}
func (c *sdkClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, sdk.NewMethodNotFound("terminal/wait_for_exit")
}

// startACP runs `strata acp ARGS` with the SDK's client connected to it.
func startACP(t *testing.T, ws, data string, c *sdkClient, args ...string) *sdk.ClientSideConnection {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"acp"}, args...)...)
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "STRATA_DATA_DIR="+data, "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() { once.Do(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() }) }
	t.Cleanup(stop)
	conn := sdk.NewClientSideConnection(c, in, out)
	acpStops.Store(conn, stop)
	if _, err := conn.Initialize(context.Background(), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	return conn
}

// acpStops maps a connection startACP made to the function that ends its
// server process.
var acpStops sync.Map

// stopACP ends conn's server process (and waits for it), releasing the
// writer leases of the sessions it had open, as an editor closing its agent.
func stopACP(conn *sdk.ClientSideConnection) {
	if f, ok := acpStops.Load(conn); ok {
		f.(func())()
	}
}

// Under the SDK's client: cancelling mid-stream ends the prompt "cancelled";
// session/load of the stored session replays it as updates.
func TestACPCancelAndLoad(t *testing.T) {
	ws, data := t.TempDir(), t.TempDir()
	ctx := context.Background()
	c := &sdkClient{answer: "allow_once"}
	conn := startACP(t, ws, data, c)
	s, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: ws, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("list this directory")}})
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	n := len(c.updates)

	// session/load in a new server process replays the stored turns (once
	// the first process, which holds the session, has ended).
	stopACP(conn)
	c2 := &sdkClient{}
	conn2 := startACP(t, ws, data, c2)
	if _, err := conn2.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: s.SessionId, Cwd: ws, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	var replayed []string
	for _, u := range c2.updates {
		b, _ := json.Marshal(u)
		var m map[string]any
		json.Unmarshal(b, &m)
		replayed = append(replayed, m["sessionUpdate"].(string))
	}
	got := strings.Join(replayed, " ")
	if !strings.HasPrefix(got, "user_message_chunk agent_message_chunk tool_call tool_call_update") || strings.Count(got, "tool_call ") != 2 || n == 0 {
		t.Errorf("load replayed %v", replayed)
	}

	// Cancellation mid-stream: a slow recorded stream, cancelled after the
	// first update.
	streams := t.TempDir()
	slow := writeStream(t, streams, "slow.sse", llm.Usage{Input: 5, Output: 5}, llm.StopEndTurn,
		llm.TextBlock("one "), llm.TextBlock("two "), llm.TextBlock("three "), llm.TextBlock("four"))
	c3 := &sdkClient{}
	conn3 := startACP(t, ws, data, c3, "--replay", slow, "--replay-delay", "300ms")
	s3, _ := conn3.NewSession(ctx, sdk.NewSessionRequest{Cwd: ws, McpServers: []sdk.McpServer{}})
	go func() {
		for i := 0; i < 100; i++ {
			time.Sleep(20 * time.Millisecond)
			c3.mu.Lock()
			k := len(c3.updates)
			c3.mu.Unlock()
			if k > 0 {
				break
			}
		}
		conn3.Cancel(ctx, sdk.CancelNotification{SessionId: s3.SessionId})
	}()
	res, err = conn3.Prompt(ctx, sdk.PromptRequest{SessionId: s3.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("count")}})
	if err != nil || res.StopReason != sdk.StopReasonCancelled {
		t.Fatalf("cancel: %+v %v", res, err)
	}
	if len(c3.updates) >= 4 { // the stream holds 4 text blocks, 300 ms apart
		t.Errorf("cancel did not stop the stream: %d updates", len(c3.updates))
	}
}

// Bad JSON-RPC gets JSON-RPC errors and the server keeps serving.
func TestACPBadInput(t *testing.T) {
	cmd := exec.Command(binary, "acp")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "STRATA_DATA_DIR="+t.TempDir(), "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); cmd.Process.Kill(); cmd.Wait() }()
	r := bufio.NewReader(out)
	ask := func(line string) map[string]any {
		io.WriteString(in, line+"\n")
		s, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("after %s: %v", line, err)
		}
		var m map[string]any
		json.Unmarshal([]byte(s), &m)
		return m
	}
	code := func(m map[string]any) float64 {
		e, _ := m["error"].(map[string]any)
		c, _ := e["code"].(float64)
		return c
	}
	if m := ask(`{"jsonrpc":"2.0","id":1,"method":"initialize",`); code(m) != -32700 {
		t.Errorf("malformed JSON: %v", m)
	}
	if m := ask(`[1,2]`); code(m) != -32600 {
		t.Errorf("not an object: %v", m)
	}
	if m := ask(`{"jsonrpc":"2.0","id":2,"method":"session/teleport","params":{}}`); code(m) != -32601 {
		t.Errorf("unknown method: %v", m)
	}
	if m := ask(`{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":42,"mcpServers":"none"}}`); code(m) != -32602 {
		t.Errorf("wrong param types: %v", m)
	}
	if m := ask(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"nope","prompt":[{"type":"text","text":"hi"}]}}`); code(m) != -32602 {
		t.Errorf("unknown session: %v", m)
	}
	if m := ask(`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":1}}`); m["result"] == nil {
		t.Errorf("server stopped answering: %v", m)
	}
}

// The SDK module's own JSON examples (testdata/json_golden) decode into the
// SDK types strata sends and receives and encode back to the same JSON.
func TestACPGoldenExamples(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/coder/acp-go-sdk").Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "testdata", "json_golden")
	types := map[string]func() any{
		"initialize_request": func() any { return &sdk.InitializeRequest{} }, "initialize_response": func() any { return &sdk.InitializeResponse{} },
		"new_session_request": func() any { return &sdk.NewSessionRequest{} }, "new_session_response": func() any { return &sdk.NewSessionResponse{} },
		"prompt_request": func() any { return &sdk.PromptRequest{} }, "cancel_notification": func() any { return &sdk.CancelNotification{} },
		"request_permission_request":           func() any { return &sdk.RequestPermissionRequest{} },
		"request_permission_response_selected": func() any { return &sdk.RequestPermissionResponse{} },
		"permission_outcome_selected":          func() any { return &sdk.RequestPermissionOutcome{} },
		"permission_outcome_cancelled":         func() any { return &sdk.RequestPermissionOutcome{} },
		"content_text":                         func() any { return &sdk.ContentBlock{} }, "content_image": func() any { return &sdk.ContentBlock{} },
		"content_resource_link": func() any { return &sdk.ContentBlock{} }, "content_resource_text": func() any { return &sdk.ContentBlock{} },
		"tool_content_content_text": func() any { return &sdk.ToolCallContent{} }, "tool_content_diff": func() any { return &sdk.ToolCallContent{} },
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	checked := 0
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		newT, ok := types[name]
		if strings.HasPrefix(name, "session_update_") {
			newT, ok = func() any { return &sdk.SessionUpdate{} }, true
		}
		if !ok {
			continue
		}
		raw, _ := os.ReadFile(f)
		v := newT()
		if err := json.Unmarshal(raw, v); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		back, _ := json.Marshal(v)
		var a, b any
		json.Unmarshal(raw, &a)
		json.Unmarshal(back, &b)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: round trip differs:\n%s\n%s", name, raw, back)
		}
		checked++
	}
	if checked < 20 {
		t.Errorf("checked %d golden examples; want ≥ 20", checked)
	}
}

// The client's MCP servers in session/new run for that session: the real
// server-everything peer over stdio, its echo tool called by a recorded turn.
func TestACPClientMCPServer(t *testing.T) {
	bin := peers.Bin(t)
	ws, data, streams := t.TempDir(), t.TempDir(), t.TempDir()
	u := llm.Usage{Input: 10, Output: 5}
	a := writeStream(t, streams, "a.sse", u, llm.StopToolUse,
		llm.ToolUseBlock("toolu_m1", "everything___echo", json.RawMessage(`{"message":"from the client's server"}`)))
	b := writeStream(t, streams, "b.sse", u, llm.StopEndTurn, llm.TextBlock("echoed"))
	w := writeStream(t, streams, "w.sse", u, llm.StopEndTurn, llm.TextBlock("sunny"))
	c := &sdkClient{}
	conn := startACP(t, ws, data, c, "--replay", a+","+b+","+w, "--approve", "all")
	ctx := context.Background()
	s, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: ws, McpServers: []sdk.McpServer{{Stdio: &sdk.McpServerStdio{
		Name: "everything", Command: filepath.Join(bin, "mcp-server-everything"), Args: []string{},
		Env: []sdk.EnvVariable{{Name: "PATH", Value: bin + ":" + os.Getenv("PATH")}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("echo")}})
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	var done bool
	for _, u := range c.updates {
		if tc := u.ToolCallUpdate; tc != nil && tc.Status != nil && *tc.Status == sdk.ToolCallStatusCompleted {
			b, _ := json.Marshal(tc.Content)
			done = strings.Contains(string(b), "Echo: from the client's server")
		}
	}
	if !done {
		b, _ := json.Marshal(c.updates)
		t.Errorf("the client's MCP tool did not complete with its echo:\n%s", b)
	}

	// The server's prompts are slash commands; /args-prompt expands through
	// prompts/get into the user message the model gets.
	var cmds []string
	for _, u := range c.updates {
		if u.AvailableCommandsUpdate != nil {
			for _, ac := range u.AvailableCommandsUpdate.AvailableCommands {
				cmds = append(cmds, ac.Name)
			}
		}
	}
	if !strings.Contains(" "+strings.Join(cmds, " ")+" ", " args-prompt ") {
		t.Errorf("available commands %v", cmds)
	}
	if _, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("/args-prompt state=Texas")}}); err == nil ||
		!strings.Contains(err.Error(), "city") {
		t.Errorf("missing required argument: %v", err)
	}
	if _, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("/args-prompt city=Paris")}}); err != nil {
		t.Fatal(err)
	}
	stopACP(conn) // it holds the session
	c2 := &sdkClient{}
	conn = startACP(t, ws, data, c2)
	if _, err := conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: s.SessionId, Cwd: ws, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, u := range c2.updates {
		if m := u.UserMessageChunk; m != nil && m.Content.Text != nil {
			users = append(users, m.Content.Text.Text)
		}
	}
	if len(users) != 2 || !strings.Contains(users[1], "Paris") || strings.HasPrefix(users[1], "/") {
		t.Errorf("stored user messages %q", users)
	}

	// A transport strata does not advertise is refused with invalid params.
	_, err = conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: ws, McpServers: []sdk.McpServer{{Sse: &sdk.McpServerSseInline{Name: "x", Url: "http://127.0.0.1:1/sse", Type: "sse", Headers: []sdk.HttpHeader{}}}}})
	if re, ok := err.(*sdk.RequestError); !ok || re.Code != -32602 {
		t.Errorf("sse server: %v", err)
	}
}

// A todo_list call becomes an ACP plan: tasks in order, the completed one
// completed, the first open one in_progress.
func TestACPPlanFromTodoList(t *testing.T) {
	ws, data, streams := t.TempDir(), t.TempDir(), t.TempDir()
	u := llm.Usage{Input: 10, Output: 5}
	a := writeStream(t, streams, "a.sse", u, llm.StopToolUse, llm.ToolUseBlock("toolu_t1", "todo_list",
		json.RawMessage(`{"command":"create","tasks":["read","fix","test"],"todo_list_description":"fix it"}`)))
	b := writeStream(t, streams, "b.sse", u, llm.StopEndTurn, llm.TextBlock("planned"))
	c := &sdkClient{}
	conn := startACP(t, ws, data, c, "--replay", a+","+b, "--approve", "all")
	ctx := context.Background()
	s, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: ws, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("plan")}}); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	var got []string
	for _, u := range c.updates {
		if u.Plan != nil {
			for _, e := range u.Plan.Entries {
				got = append(got, e.Content+":"+string(e.Status))
			}
		}
	}
	if strings.Join(got, " ") != "read:in_progress fix:pending test:pending" {
		t.Errorf("plan %v", got)
	}
}

// An image in session/prompt reaches the conversation (and the store): a
// fresh server's session/load replays it as an image user_message_chunk.
func TestACPPromptImage(t *testing.T) {
	ws, data, streams := t.TempDir(), t.TempDir(), t.TempDir()
	a := writeStream(t, streams, "a.sse", llm.Usage{Input: 10, Output: 5}, llm.StopEndTurn, llm.TextBlock("a PNG header"))
	conn := startACP(t, ws, data, &sdkClient{}, "--replay", a)
	ctx := context.Background()
	s, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: ws, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	img := sdk.ImageBlock("iVBORw0KGgo=", "image/png")
	if _, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("what is this?"), img}}); err != nil {
		t.Fatal(err)
	}
	stopACP(conn) // it holds the session
	c2 := &sdkClient{}
	if _, err := startACP(t, ws, data, c2).LoadSession(ctx, sdk.LoadSessionRequest{SessionId: s.SessionId, Cwd: ws, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, u := range c2.updates {
		if m := u.UserMessageChunk; m != nil && m.Content.Image != nil && m.Content.Image.Data == "iVBORw0KGgo=" && m.Content.Image.MimeType == "image/png" {
			found = true
		}
	}
	if !found {
		b, _ := json.Marshal(c2.updates)
		t.Errorf("image not replayed:\n%s", b)
	}
}
