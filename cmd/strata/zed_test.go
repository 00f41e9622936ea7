package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// zedSnippetRE finds the README's json code blocks.
var zedSnippetRE = regexp.MustCompile("(?s)```json\n(.*?)```")

// The README's Zed agent_servers snippet is valid JSON and its command works
// as Zed runs it: the binary ("strata" on $PATH, here the one under test)
// with the snippet's args and env, spoken to over ACP on stdio by the
// acp-go-sdk client: initialize, session/new, a prompt to end_turn.
func TestREADMEZedSnippet(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var settings struct {
		AgentServers map[string]struct {
			Type    string            `json:"type"`
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"agent_servers"`
	}
	for _, m := range zedSnippetRE.FindAllSubmatch(readme, -1) {
		if regexp.MustCompile(`"agent_servers"`).Match(m[1]) {
			if err := json.Unmarshal(m[1], &settings); err != nil {
				t.Fatalf("README's agent_servers snippet is not valid JSON: %v\n%s", err, m[1])
			}
		}
	}
	srv, ok := settings.AgentServers["strata"]
	if !ok {
		t.Fatal(`README has no json block with "agent_servers": {"strata": …}`)
	}
	if srv.Type != "custom" || srv.Command != "strata" || len(srv.Args) == 0 || srv.Args[0] != "acp" {
		t.Fatalf("snippet %+v: want type custom, command strata, args starting with acp", srv)
	}
	ws := t.TempDir()
	cmd := exec.Command(binary, srv.Args...) // "strata" on Zed's $PATH after go install: the binary under test
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "STRATA_DATA_DIR="+t.TempDir(), "STRATA_LOG_FILE=off", "OPENAI_API_KEY=")
	for k, v := range srv.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() }) })
	c := &sdkClient{answer: "allow_once"}
	conn := sdk.NewClientSideConnection(c, in, out)
	ctx := context.Background()
	init, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber,
		ClientCapabilities: sdk.ClientCapabilities{}})
	if err != nil || init.ProtocolVersion != sdk.ProtocolVersionNumber {
		t.Fatalf("initialize: %+v, %v", init, err)
	}
	s, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: ws, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("what is in this directory?")}})
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("prompt: %+v, %v; want end_turn", res, err)
	}
}
