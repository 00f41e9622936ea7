package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/peers"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/anthropic"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/prompt/flat"
	"github.com/strata-agent/strata/tool"
)

// stdio returns the config of a peer server run over stdio with the peers'
// Node 22 first on PATH.
func stdio(t *testing.T, bin string, args ...string) ServerConfig {
	t.Helper()
	dir := peers.Bin(t)
	return ServerConfig{Command: filepath.Join(dir, bin), Args: args, Timeout: time.Minute,
		Env: map[string]string{"PATH": dir + string(os.PathListSeparator) + os.Getenv("PATH")}}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func text(r any) string {
	b, _ := json.Marshal(r)
	return string(b)
}

// server-everything over stdio: tools and prompts listed, tools called
// (incl. progress notifications), stderr captured, a killed server gives a
// clear error and relaunches, and the set is frozen after init.
func TestServerEverything(t *testing.T) {
	ctx := context.Background()
	var stderr syncBuf
	m := NewManager(Options{Stderr: &stderr, Roots: []string{t.TempDir()}})
	defer m.Terminate()
	if err := m.LaunchServer(ctx, "everything", stdio(t, "mcp-server-everything")); err != nil {
		t.Fatal(err)
	}
	if err := m.LaunchServer(ctx, "everything", stdio(t, "mcp-server-everything")); !errors.Is(err, ErrServerAlreadyLaunched) {
		t.Errorf("second launch: %v", err)
	}
	m.Freeze()
	if err := m.LaunchServer(ctx, "other", stdio(t, "mcp-server-memory")); !errors.Is(err, ErrFrozen) {
		t.Errorf("launch after freeze: %v", err)
	}
	specs, err := m.GetToolSpecs("everything")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, s := range specs {
		names[s.Name] = true
		if len(s.Name) > MaxToolName || illegal.MatchString(s.Name) {
			t.Errorf("tool name %q is not provider-legal", s.Name)
		}
	}
	if len(specs) < 12 || !names["everything___echo"] || !names["everything___get-sum"] {
		t.Fatalf("%d tools: %v", len(specs), names)
	}
	r, err := m.ExecuteTool(ctx, "everything", "get-sum", json.RawMessage(`{"a":2,"b":3}`), nil)
	if err != nil || r.IsError || r.Content[0].Text != "The sum of 2 and 3 is 5." {
		t.Fatalf("get-sum: %+v %v", r, err)
	}
	// Progress notifications arrive while the call runs. The SDK handles
	// them apart from the response, so the last one can lose the race with
	// it; the manager drops notifications after the call returned (a tool's
	// updates must not follow its end).
	var pmu sync.Mutex
	var progress []string
	r, err = m.ExecuteTool(ctx, "everything", "trigger-long-running-operation", json.RawMessage(`{"duration":1,"steps":3}`),
		func(s string) { pmu.Lock(); progress = append(progress, s); pmu.Unlock() })
	if err != nil || r.IsError {
		t.Fatalf("long-running: %+v %v", r, err)
	}
	pmu.Lock()
	if len(progress) < 2 || progress[0] != "progress 1/3" || progress[1] != "progress 2/3" {
		t.Errorf("progress notifications %q; want 1/3, 2/3 (and usually 3/3)", progress)
	}
	pmu.Unlock()
	prompts, err := m.GetPrompts(ctx, "everything")
	if err != nil || len(prompts) < 4 {
		t.Fatalf("prompts %v %v", text(prompts), err)
	}
	var args *Prompt
	for i := range prompts {
		if prompts[i].Name == "args-prompt" {
			args = &prompts[i]
		}
	}
	if args == nil || len(args.Arguments) == 0 || args.Arguments[0].Name != "city" || !args.Arguments[0].Required || args.Description == "" {
		t.Errorf("args-prompt listed as %+v; want a description and a required first argument \"city\"", args)
	}
	msgs, err := m.GetPrompt(ctx, "everything", "args-prompt", map[string]string{"city": "Paris"})
	if err != nil || len(msgs) == 0 || !strings.Contains(msgs[0].Text(), "Paris") {
		t.Fatalf("args-prompt: %+v %v", msgs, err)
	}
	if !strings.Contains(stderr.String(), "[mcp everything] ") {
		t.Errorf("server stderr not captured: %q", stderr.String())
	}

	// Kill the server: the next call fails clearly, a relaunch recovers.
	m.mu.Lock()
	cmd := m.servers["everything"].cmd
	m.mu.Unlock()
	cmd.Process.Kill()
	time.Sleep(300 * time.Millisecond)
	_, err = m.ExecuteTool(ctx, "everything", "echo", json.RawMessage(`{"message":"hi"}`), nil)
	if !errors.Is(err, ErrNotRunning) || !strings.Contains(err.Error(), "everything") {
		t.Fatalf("call after kill: %v", err)
	}
	if st := m.Statuses()[0]; st.State != Crashed {
		t.Errorf("state after kill %s", st.State)
	}
	if err := m.Relaunch(ctx, "everything"); err != nil {
		t.Fatal(err)
	}
	r, err = m.ExecuteTool(ctx, "everything", "echo", json.RawMessage(`{"message":"back"}`), nil)
	if err != nil || r.Content[0].Text != "Echo: back" {
		t.Fatalf("echo after relaunch: %+v %v", r, err)
	}
}

// server-filesystem reads a file in its allowed directory; server-memory
// keeps a knowledge graph across calls.
func TestServerFilesystemAndMemory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("strata was here\n"), 0o644)
	m := NewManager(Options{})
	defer m.Terminate()
	if err := m.LaunchServer(ctx, "fs", stdio(t, "mcp-server-filesystem", dir)); err != nil {
		t.Fatal(err)
	}
	mem := stdio(t, "mcp-server-memory")
	mem.Env["MEMORY_FILE_PATH"] = filepath.Join(t.TempDir(), "memory.jsonl")
	if err := m.LaunchServer(ctx, "memory", mem); err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(map[string]string{"path": filepath.Join(dir, "notes.txt")})
	r, err := m.ExecuteTool(ctx, "fs", "read_text_file", in, nil)
	if err != nil || r.IsError || !strings.Contains(r.Content[0].Text, "strata was here") {
		t.Fatalf("read_text_file: %+v %v", r, err)
	}
	r, err = m.ExecuteTool(ctx, "memory", "create_entities",
		json.RawMessage(`{"entities":[{"name":"strata","entityType":"project","observations":["a turn engine"]}]}`), nil)
	if err != nil || r.IsError {
		t.Fatalf("create_entities: %+v %v", r, err)
	}
	r, err = m.ExecuteTool(ctx, "memory", "read_graph", json.RawMessage(`{}`), nil)
	if err != nil || !strings.Contains(text(r.Content), "a turn engine") {
		t.Fatalf("read_graph: %+v %v", r, err)
	}
	if n := len(m.Tools()); n < 15 {
		t.Errorf("%d tools from two servers", n)
	}
}

// Streamable HTTP: server-everything on a free 127.0.0.1 port.
func TestStreamableHTTP(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := peers.Command(t, "mcp-server-everything", "streamableHttp")
	cmd.Env = append(cmd.Env, fmt.Sprintf("PORT=%d", port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	for i := 0; i < 100; i++ { // wait for the port
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	m := NewManager(Options{})
	defer m.Terminate()
	if err := m.LaunchServer(context.Background(), "remote", ServerConfig{URL: url}); err != nil {
		t.Fatal(err)
	}
	r, err := m.ExecuteTool(context.Background(), "remote", "echo", json.RawMessage(`{"message":"over http"}`), nil)
	if err != nil || r.Content[0].Text != "Echo: over http" {
		t.Fatalf("echo over http: %+v %v", r, err)
	}
	_ = exec.ErrNotFound
}

// A loop turn through the replay provider where the recorded model calls an
// MCP tool: the tool runs on the real server and its result goes back to the
// model in the next request.
func TestLoopCallsMCPTool(t *testing.T) {
	ctx := context.Background()
	m := NewManager(Options{})
	defer m.Terminate()
	if err := m.LaunchServer(ctx, "everything", stdio(t, "mcp-server-everything")); err != nil {
		t.Fatal(err)
	}
	u := llm.Usage{Input: 50, Output: 10}
	m1, err1 := replay.AnthropicStream("msg_1", u, llm.StopToolUse, llm.ToolUseBlock("toolu_m1", ToolName("everything", "get-sum"), json.RawMessage(`{"a":20,"b":22}`)))
	m2, err2 := replay.AnthropicStream("msg_2", u, llm.StopEndTurn, llm.TextBlock("It is 42."))
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	srv, err := replay.NewServer(m1, m2)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var tools []tool.Tool
	for _, x := range m.Tools() {
		tools = append(tools, x)
	}
	bus := event.NewBus()
	a, err := agent.New(agent.Config{Provider: anthropic.New(anthropic.Config{APIKey: "k", BaseURL: srv.URL()}),
		Layout: flat.Layout{}, Tools: tool.NewRegistry(tools...), Model: "m", Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Prompt(ctx, "what is 20+22?")
	bus.Close()
	if err != nil || res.Message.Text() != "It is 42." {
		t.Fatalf("%v %+v", err, res)
	}
	if body := string(srv.Received()[1].Body); !strings.Contains(body, "The sum of 20 and 22 is 42.") ||
		!strings.Contains(string(srv.Received()[0].Body), `"everything___echo"`) {
		t.Errorf("second request lacks the MCP result, or the first lacks the MCP tools")
	}
}
