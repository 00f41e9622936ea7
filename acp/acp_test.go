package acp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
)

// Lines that are not JSON objects are answered on out and not forwarded;
// good lines pass through unchanged; an over-long line is a parse error and
// the next line still gets through.
func TestFilterLines(t *testing.T) {
	long := `{"x":"` + strings.Repeat("a", maxLine) + `"}`
	in := strings.Join([]string{`{"jsonrpc":"2.0","id":1,"method":"initialize"}`, `{"broken":`, `[1,2]`, `{"jsonrpc":"2.0","id":7}`, ``, long,
		`{"jsonrpc":"2.0","id":2,"method":"session/new"}`}, "\n") + "\n"
	var out bytes.Buffer
	got, err := io.ReadAll(filterLines(strings.NewReader(in), &lockedWriter{w: &out}))
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/new\"}\n"; string(got) != want {
		t.Errorf("forwarded %q", got)
	}
	if want := string(parseError) + string(invalidRequest) + string(notAMessage) + string(parseError); out.String() != want {
		t.Errorf("answered %q", out.String())
	}
}

// The client's stdio and HTTP servers convert to agent-config servers; other
// transports, empty and repeated names are invalid params.
func TestMCPServers(t *testing.T) {
	got, err := mcpServers([]sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "fs", Command: "npx", Args: []string{"-y", "server"}, Env: []sdk.EnvVariable{{Name: "K", Value: "v"}}}},
		{Http: &sdk.McpServerHttpInline{Name: "web", Url: "http://127.0.0.1:9/mcp", Headers: []sdk.HttpHeader{{Name: "Authorization", Value: "Bearer x"}}}},
	})
	if err != nil || len(got) != 2 || got[0].Server.Command != "npx" || got[0].Server.Env["K"] != "v" ||
		got[1].Server.Type != "http" || got[1].Server.Headers["Authorization"] != "Bearer x" || got[1].Source != "ACP client" {
		t.Fatalf("%+v %v", got, err)
	}
	for _, bad := range [][]sdk.McpServer{
		{{Sse: &sdk.McpServerSseInline{Name: "s", Url: "http://127.0.0.1:9"}}},
		{{Stdio: &sdk.McpServerStdio{Name: ""}}},
		{{Stdio: &sdk.McpServerStdio{Name: "a", Command: "x"}}, {Stdio: &sdk.McpServerStdio{Name: "a", Command: "y"}}},
	} {
		var re *sdk.RequestError
		if _, err := mcpServers(bad); !errors.As(err, &re) || re.Code != -32602 {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// Loop outcomes map to ACP stop reasons; only unexpected failures are
// JSON-RPC errors.
func TestStopReasons(t *testing.T) {
	live, cancelled := context.Background(), func() context.Context {
		c, cancel := context.WithCancel(context.Background())
		cancel()
		return c
	}()
	for _, c := range []struct {
		res  *agent.Result
		err  error
		ctx  context.Context
		want sdk.StopReason
		fail bool
	}{
		{&agent.Result{StopReason: llm.StopEndTurn}, nil, live, sdk.StopReasonEndTurn, false},
		{&agent.Result{StopReason: llm.StopMaxTokens}, nil, live, sdk.StopReasonMaxTokens, false},
		{&agent.Result{StopReason: llm.StopRefusal}, nil, live, sdk.StopReasonRefusal, false},
		{nil, agent.ErrMaxTurns, live, sdk.StopReasonMaxTurnRequests, false},
		{nil, context.Canceled, cancelled, sdk.StopReasonCancelled, false},
		{nil, errors.New("provider down"), live, sdk.StopReasonEndTurn, true},
	} {
		if got := stopReason(c.res, c.err, c.ctx); got != c.want {
			t.Errorf("%v %v: %s, want %s", c.res, c.err, got, c.want)
		}
		if err := promptErr(c.err, c.ctx); (err != nil) != c.fail {
			t.Errorf("%v: promptErr %v", c.err, err)
		}
	}
}

// A todo_list result becomes a plan with one in_progress entry; other tools
// and failed calls give none.
func TestPlan(t *testing.T) {
	call := llm.ToolUseBlock("t1", "todo_list", json.RawMessage(`{"command":"complete"}`))
	res := llm.ToolResultBlock("t1", `{"id":"1","description":"d","tasks":[{"task_description":"a","completed":true},{"task_description":"b","completed":false},{"task_description":"c","completed":false}]}`+"\nID: 1", false)
	u, ok := plan(call, res)
	if !ok || u.Plan == nil || len(u.Plan.Entries) != 3 || u.Plan.Entries[0].Status != sdk.PlanEntryStatusCompleted ||
		u.Plan.Entries[1].Status != sdk.PlanEntryStatusInProgress || u.Plan.Entries[2].Status != sdk.PlanEntryStatusPending {
		t.Errorf("%+v", u.Plan)
	}
	if _, ok := plan(llm.ToolUseBlock("x", "fs_read", nil), res); ok {
		t.Error("plan from fs_read")
	}
	res.IsError = true
	if _, ok := plan(call, res); ok {
		t.Error("plan from a failed call")
	}
}

// Prompt images become llm image blocks (bad base64 is an error naming the
// block); a stored user image is replayed as a user_message_chunk.
func TestPromptImages(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n")
	blocks := []sdk.ContentBlock{sdk.TextBlock("what is this?"), sdk.ImageBlock(base64.StdEncoding.EncodeToString(png), "image/png")}
	imgs, err := promptImages(blocks)
	if err != nil || len(imgs) != 1 || imgs[0].MediaType != "image/png" || !bytes.Equal(imgs[0].Data, png) || promptText(blocks) != "what is this?" {
		t.Fatalf("%+v %v", imgs, err)
	}
	if _, err := promptImages([]sdk.ContentBlock{sdk.ImageBlock("not base64!", "image/png")}); err == nil || !strings.Contains(err.Error(), "prompt[0]") {
		t.Errorf("bad data: %v", err)
	}
	ups := historyUpdates([]llm.Message{{Role: llm.RoleUser, Content: append([]llm.Block{llm.TextBlock("what is this?")}, imgs...)}})
	if len(ups) != 2 || ups[1].UserMessageChunk == nil || ups[1].UserMessageChunk.Content.Image == nil ||
		ups[1].UserMessageChunk.Content.Image.MimeType != "image/png" {
		t.Errorf("%+v", ups)
	}
}

// TestInputEndStillAnswersRequests: `echo INITIALIZE | strata acp` — the
// client's input ends right after a request — still gets the answer (the
// end of input drains answers being computed). Without the drain the SDK's
// connection ended first and the answer was dropped in some runs.
func TestInputEndStillAnswersRequests(t *testing.T) {
	ws, err := strata.Open(context.Background(), strata.Options{Dir: t.TempDir(), ProviderName: "anthropic", APIKey: "test", BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	for i := range 20 {
		var out bytes.Buffer
		in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n")
		if err := Serve(context.Background(), ws, agent.ModeAll, in, &out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), `"protocolVersion":1`) {
			t.Fatalf("run %d: no initialize answer before the server ended: %q", i, out.String())
		}
	}
}
