package acp_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/acp"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// steerClient accepts every update and closes echoed when the agent echoes
// a user message chunk (a prompt taken as steering).
type steerClient struct {
	acpClient
	once   sync.Once
	echoed chan struct{}
}

func (c *steerClient) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	if n.Update.UserMessageChunk != nil {
		c.once.Do(func() { close(c.echoed) })
	}
	return nil
}

// steerSession serves ws over ACP to an acp-go-sdk client on pipes and
// opens a session in dir; stop ends the connection and waits for Serve
// (it may be called twice).
func steerSession(t *testing.T, ws *strata.Workspace, dir string) (context.Context, *sdk.ClientSideConnection, *sdk.NewSessionResponse, *steerClient, func()) {
	t.Helper()
	cr, aw := io.Pipe()
	ar, cw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- acp.Serve(ctx, ws, agent.ModeAll, cr, cw) }()
	client := &steerClient{echoed: make(chan struct{})}
	conn := sdk.NewClientSideConnection(client, aw, ar)
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); aw.Close(); <-served }) }
	_, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	if err == nil {
		var ns sdk.NewSessionResponse
		if ns, err = conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{}}); err == nil {
			return ctx, conn, &ns, client, stop
		}
	}
	stop()
	t.Fatal(err)
	return nil, nil, nil, nil, nil
}

// A session/prompt sent while another prompt of the session runs is queued
// as a steering message (the Rust agent-loop Turn: input messages include
// "pending steering messages", injected before the next model call): the
// running loop's next request carries it, and both requests end with the
// running prompt's stop reason. A prompt with an image cannot steer and is
// rejected with a clear error.
func TestPromptWhileRunningSteers(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644))
	var mu sync.Mutex
	var bodies []string
	srv, err := replay.NewResponder(func(req replay.Request) replay.Response {
		mu.Lock()
		bodies = append(bodies, string(req.Body))
		n := len(bodies)
		mu.Unlock()
		b := llm.TextBlock("done: only Go files")
		if n == 1 {
			b = llm.ToolUseBlock("toolu_1", "glob", json.RawMessage(`{"pattern":"*"}`))
		}
		r, err := replay.Turn(llm.APIAnthropic, replay.Reply{Blocks: []llm.Block{b}})
		if err != nil {
			return replay.Response{Status: 500, Body: []byte(err.Error())}
		}
		return r
	})
	must(t, err)
	defer srv.Close()
	inTool, release := make(chan struct{}), make(chan struct{})
	hold := agent.Hook{Name: "hold", Stage: agent.StageToolCall, Phase: agent.PhasePre, Kind: agent.HookObserver,
		Func: func(context.Context, *agent.Payload) (agent.Verdict, error) {
			close(inTool)
			<-release
			return agent.Verdict{}, nil
		}}
	ws, err := strata.Open(context.Background(), strata.Options{Dir: dir, Layout: "flat", ProviderName: "anthropic", APIKey: "test",
		BaseURL: srv.URL(), Model: "claude-sonnet-4-5", Hooks: []agent.Hook{hold}})
	must(t, err)
	defer ws.Close()

	ctx, conn, ns, client, stop := steerSession(t, ws, dir)
	defer stop()
	prompt := func(blocks ...sdk.ContentBlock) (sdk.PromptResponse, error) {
		return conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: blocks})
	}

	first := make(chan error, 1)
	go func() { r, err := prompt(sdk.TextBlock("list the files")); first <- checkEnd(r, err) }()
	<-inTool // the first prompt's tool call is running
	_, err = prompt(sdk.TextBlock("look"), sdk.ImageBlock("iVBORw0KGgo=", "image/png"))
	if err == nil || !strings.Contains(err.Error(), "cannot join it as a steering message") {
		t.Errorf("image prompt while running: err = %v; want a clear rejection", err)
	}
	second := make(chan error, 1)
	go func() { r, err := prompt(sdk.TextBlock("only Go files")); second <- checkEnd(r, err) }()
	<-client.echoed // taken as steering
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("first prompt: %v", err)
	}
	if err := <-second; err != nil {
		t.Fatalf("steering prompt: %v", err)
	}
	stop()

	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 2 || strings.Contains(bodies[0], "only Go files") || !strings.Contains(bodies[1], "only Go files") {
		t.Fatalf("%d requests; the steering message must reach the second request only", len(bodies))
	}
}

// checkEnd wants a prompt response with stop reason end_turn.
func checkEnd(r sdk.PromptResponse, err error) error {
	if err != nil {
		return err
	}
	if r.StopReason != sdk.StopReasonEndTurn {
		return &stopErr{r.StopReason}
	}
	return nil
}

type stopErr struct{ got sdk.StopReason }

func (e *stopErr) Error() string { return "stop reason " + string(e.got) + "; want end_turn" }

// The Rust agent-loop design: "The inner loop in run_loop continues when
// there are tool calls or pending steering messages; each iteration is one
// turn." A session/prompt sent while the running prompt's model gives its
// final answer (no tool calls) is taken as steering: the loop makes one
// more model call with it, and both requests answer with the running
// prompt's stop reason, that of the steered turn (max_tokens here).
func TestPromptDuringFinalResponseSteers(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	var bodies []string
	inFinal, release := make(chan struct{}), make(chan struct{})
	srv, err := replay.NewResponder(func(req replay.Request) replay.Response {
		mu.Lock()
		bodies = append(bodies, string(req.Body))
		n := len(bodies)
		mu.Unlock()
		reply := replay.Reply{Blocks: []llm.Block{llm.TextBlock("the steered answer")}, Stop: llm.StopMaxTokens}
		if n == 1 {
			close(inFinal)
			<-release
			reply = replay.Reply{Blocks: []llm.Block{llm.TextBlock("a final answer")}}
		}
		r, err := replay.Turn(llm.APIAnthropic, reply)
		if err != nil {
			return replay.Response{Status: 500, Body: []byte(err.Error())}
		}
		return r
	})
	must(t, err)
	defer srv.Close()
	ws, err := strata.Open(context.Background(), strata.Options{Dir: dir, Layout: "flat", ProviderName: "anthropic", APIKey: "test",
		BaseURL: srv.URL(), Model: "claude-sonnet-4-5"})
	must(t, err)
	defer ws.Close()

	ctx, conn, ns, client, stop := steerSession(t, ws, dir)
	defer stop()
	type out struct {
		r   sdk.PromptResponse
		err error
	}
	prompt := func(text string, c chan<- out) {
		r, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
		c <- out{r, err}
	}
	first, second := make(chan out, 1), make(chan out, 1)
	go prompt("say hello", first)
	<-inFinal // the model is answering without tool calls
	go prompt("and goodbye", second)
	<-client.echoed // taken as steering of the running prompt
	close(release)
	for name, c := range map[string]chan out{"first prompt": first, "steering prompt": second} {
		if o := <-c; o.err != nil || o.r.StopReason != sdk.StopReasonMaxTokens {
			t.Errorf("%s: stop reason %q, err %v; want max_tokens, the running prompt's after the steered turn", name, o.r.StopReason, o.err)
		}
	}
	stop()

	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 2 || strings.Contains(bodies[0], "and goodbye") || !strings.Contains(bodies[1], "and goodbye") {
		t.Fatalf("%d requests; want 2, the steering message in the second only", len(bodies))
	}
}
