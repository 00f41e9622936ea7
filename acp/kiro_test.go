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

// kiroClient is an ACP client that records the standard session/update
// notifications and the kiro dialect's _kiro.dev/session/update ones.
type kiroClient struct {
	acpClient
	mu       sync.Mutex
	standard []sdk.SessionUpdate
	kiro     []map[string]any // the "update" objects
}

func (c *kiroClient) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	c.standard = append(c.standard, n.Update)
	c.mu.Unlock()
	return nil
}

func (c *kiroClient) HandleExtensionMethod(_ context.Context, method string, params json.RawMessage) (any, error) {
	if method != acp.KiroSessionUpdateMethod {
		return nil, sdk.NewMethodNotFound(method)
	}
	var p struct {
		SessionID string         `json:"sessionId"`
		Update    map[string]any `json:"update"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.SessionID == "" {
		return nil, sdk.NewInvalidParams(map[string]any{"error": "bad params"})
	}
	c.mu.Lock()
	c.kiro = append(c.kiro, p.Update)
	c.mu.Unlock()
	return nil, nil
}

// serve runs acp.Serve on ws over pipes and returns the real SDK client
// connection; the server stops when the test ends.
func serve(t *testing.T, ws *strata.Workspace, c sdk.Client) *sdk.ClientSideConnection {
	return serveWith(t, ws, c, acp.ServeOptions{Mode: agent.ModeAll})
}

// serveWith is serve with options.
func serveWith(t *testing.T, ws *strata.Workspace, c sdk.Client, o acp.ServeOptions) *sdk.ClientSideConnection {
	t.Helper()
	cr, aw := io.Pipe()
	ar, cw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- acp.ServeWith(ctx, ws, o, cr, cw) }()
	t.Cleanup(func() { cancel(); aw.Close(); <-served })
	return sdk.NewClientSideConnection(c, aw, ar)
}

// bashThenText is a model that runs one execute_bash call printing two
// lines, then answers "done".
func bashThenText(req replay.Request) replay.Response {
	blocks := []llm.Block{llm.ToolUseBlock("toolu_1", "execute_bash", json.RawMessage(`{"command":"printf 'one\\ntwo\\n'","summary":"print"}`))}
	if strings.Contains(string(req.Body), `"tool_result"`) {
		blocks = []llm.Block{llm.TextBlock("done")}
	}
	r, err := replay.Turn(llm.APIAnthropic, replay.Reply{Blocks: blocks})
	if err != nil {
		return replay.Response{Status: 500, Body: []byte(err.Error())}
	}
	return r
}

// The kiro dialect, asked for in the client's capabilities: the kiro-cli
// turn anatomy's TUI "receives updates via the kiro.dev/session/update
// notification method" and gets "one extension notification:
// tool_call_chunk, which streams incremental tool output". A client that
// sets both _meta keys gets every update on _kiro.dev/session/update and
// execute_bash's output lines as tool_call_chunk; a client that does not
// gets standard session/update only — unless the server is told to speak
// kiro's dialect to everyone (strata acp --kiro-dialect): then it sends what
// kiro-cli sends (crates/chat-cli-v2/src/agent/acp/acp_agent.rs): standard
// updates on session/update, tool_call_chunk alone on
// _kiro.dev/session/update.
func TestKiroDialectOnRequest(t *testing.T) {
	for _, tc := range []struct {
		name        string
		ask, forced bool
	}{{"asked", true, false}, {"standard", false, false}, {"forced", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			kiro := tc.ask || tc.forced
			ws, err := strata.Open(context.Background(), strata.Options{Dir: t.TempDir(), ProviderName: "anthropic", Respond: bashThenText})
			must(t, err)
			defer ws.Close()
			c := &kiroClient{}
			conn := serveWith(t, ws, c, acp.ServeOptions{Mode: agent.ModeAll, KiroDialect: tc.forced})
			caps := sdk.ClientCapabilities{}
			if tc.ask {
				caps.Meta = map[string]any{acp.MetaKiroSessionUpdate: true, acp.MetaKiroToolCallChunk: true}
			}
			init, err := conn.Initialize(context.Background(), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber, ClientCapabilities: caps})
			must(t, err)
			if init.AgentCapabilities.Meta[acp.MetaKiroSessionUpdate] != true || init.AgentCapabilities.Meta[acp.MetaKiroToolCallChunk] != true {
				t.Errorf("strata does not advertise the kiro dialect: %v", init.AgentCapabilities.Meta)
			}
			ns, err := conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []sdk.McpServer{}})
			must(t, err)
			res, err := conn.Prompt(context.Background(), sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("print two lines")}})
			must(t, err)
			if res.StopReason != sdk.StopReasonEndTurn {
				t.Fatalf("stop reason %s", res.StopReason)
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			kinds := map[string]int{}
			var chunks []string
			for _, u := range c.kiro {
				k, _ := u["sessionUpdate"].(string)
				kinds[k]++
				if k == "tool_call_chunk" {
					b, _ := json.Marshal(u["content"])
					chunks = append(chunks, string(b))
					if u["toolCallId"] != "toolu_1" || u["kind"] != "execute" {
						t.Errorf("tool_call_chunk without its call: %v", u)
					}
				}
			}
			if !kiro {
				if len(c.kiro) != 0 || len(c.standard) == 0 {
					t.Errorf("standard client: %d kiro updates, %d standard", len(c.kiro), len(c.standard))
				}
				return
			}
			if tc.forced {
				if len(c.standard) == 0 || len(kinds) != 1 || kinds["tool_call_chunk"] == 0 {
					t.Errorf("kiro-cli's dialect: %d standard updates, kiro updates by kind %v", len(c.standard), kinds)
				}
			} else if len(c.standard) != 0 {
				t.Errorf("kiro client got %d standard session/update notifications", len(c.standard))
			}
			if !tc.forced && (kinds["agent_message_chunk"] == 0 || kinds["tool_call"] != 1 || kinds["tool_call_update"] == 0) {
				t.Errorf("kiro updates by kind: %v", kinds)
			}
			if j := strings.Join(chunks, ""); !strings.Contains(j, "one") || !strings.Contains(j, "two") {
				t.Errorf("execute_bash's output lines did not stream as tool_call_chunk: %v (kinds %v)", chunks, kinds)
			}
		})
	}
}

// "/agent NAME" and the design's "/agent swap NAME" over ACP are kiro's
// agent swap (an unknown name is named without "swap"): the answer says which agent
// runs now and lists the commands again (the built-in /agent among them),
// and the next prompt's request carries the new agent's prompt.
func TestACPAgentCommandSwaps(t *testing.T) {
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, ".kiro", "agents"), 0o755))
	for _, a := range []string{"alpha", "beta"} {
		must(t, os.WriteFile(filepath.Join(dir, ".kiro", "agents", a+".json"), []byte(`{"name":"`+a+`","prompt":"you are `+a+`","tools":["fs_read"]}`), 0o644))
	}
	var mu sync.Mutex
	var bodies []string
	ws, err := strata.Open(context.Background(), strata.Options{Dir: dir, Agent: "alpha", Layout: "kiro", ProviderName: "anthropic",
		Respond: func(r replay.Request) replay.Response {
			mu.Lock()
			bodies = append(bodies, string(r.Body))
			mu.Unlock()
			resp, _ := replay.Turn(llm.APIAnthropic, replay.Reply{Blocks: []llm.Block{llm.TextBlock("ok")}})
			return resp
		}})
	must(t, err)
	defer ws.Close()
	c := &kiroClient{}
	conn := serve(t, ws, c)
	_, err = conn.Initialize(context.Background(), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	must(t, err)
	ns, err := conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{}})
	must(t, err)
	prompt := func(text string) error {
		_, err := conn.Prompt(context.Background(), sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
		return err
	}
	must(t, prompt("hi"))
	if err := prompt("/agent swap nosuch"); err == nil || !strings.Contains(err.Error(), `agent \"nosuch\" not found`) && !strings.Contains(err.Error(), `agent "nosuch" not found`) {
		t.Errorf("unknown agent: %v", err)
	}
	must(t, prompt("/agent swap beta")) // kiro's form of the swap; "/agent NAME" above
	must(t, prompt("again"))
	c.mu.Lock()
	var said string
	agentListed := false
	for _, u := range c.standard {
		if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
			said += u.AgentMessageChunk.Content.Text.Text
		}
		if u.AvailableCommandsUpdate != nil {
			for _, ac := range u.AvailableCommandsUpdate.AvailableCommands {
				agentListed = agentListed || ac.Name == "agent"
			}
		}
	}
	c.mu.Unlock()
	if !strings.Contains(said, "Switched to agent beta") || !agentListed {
		t.Errorf("swap not reported (said %q, /agent listed %v)", said, agentListed)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 2 || !strings.Contains(bodies[0], "you are alpha") || !strings.Contains(bodies[1], "you are beta") || strings.Contains(bodies[1], "you are alpha") {
		t.Errorf("requests before and after the swap: %d bodies", len(bodies))
	}
}
