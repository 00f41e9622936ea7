package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/workflow"
)

// "/workflow FILE" over ACP runs a stage workflow in the session: its audit
// events stream as agent message lines, and a call outside the stage's
// allowedTools asks the client through session/request_permission (this
// client allows once), so it is granted and runs.
func TestACPWorkflowCommand(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("..", "examples", "workflows", "grant.yaml"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "grant.yaml"), src, 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "notes.go"), []byte("package notes\n"), 0o644))
	ws, err := strata.Open(context.Background(), strata.Options{Dir: dir, NoProjectFiles: true, ProviderName: "anthropic",
		Respond: func(r replay.Request) replay.Response {
			name, in := workflow.CompletionTool, `{"result":"done"}`
			switch strings.Count(string(r.Body), `"type":"tool_result"`) {
			case 0:
				name, in = "glob", `{"pattern":"*.go"}`
			case 1:
				name, in = "execute_bash", `{"command":"echo ran-after-grant"}`
			}
			resp, _ := replay.Turn(llm.APIAnthropic, replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock(fmt.Sprintf("c%d", len(r.Body)), name, json.RawMessage(in))}})
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
	prompt := func(text string) (sdk.PromptResponse, error) {
		return conn.Prompt(context.Background(), sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
	}
	if _, err := prompt("/workflow no-such.yaml"); err == nil || !strings.Contains(err.Error(), "no-such.yaml") {
		t.Errorf("/workflow of a missing file: %v", err)
	}
	resp, err := prompt("/workflow grant.yaml")
	must(t, err)
	if resp.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("stop reason %s", resp.StopReason)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var said string
	for _, u := range c.standard {
		if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
			said += u.AgentMessageChunk.Content.Text.Text
		}
	}
	for _, want := range []string{"stage_entered stage=inspect", "stage_granted stage=inspect tool=glob outcome=granted (grantStageTool token)",
		"stage_granted stage=inspect tool=execute_bash outcome=granted (interactor: once)", "inspect: execute_bash → succeeded", "Workflow inspect ended: ok."} {
		if !strings.Contains(said, want) {
			t.Errorf("the client was not told %q:\n%s", want, said)
		}
	}
}
