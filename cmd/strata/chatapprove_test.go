package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// In line mode on a terminal, the answer to a tool approval is read by the
// chat's one stdin reader: "y" typed at the question allows the call once,
// and is neither taken for a steering message nor lost to a second reader
// of the terminal (the approver used to read stdin itself, racing the
// chat's line reader, which took the "y" as steering while the question
// waited for ever).
func TestChatApprovalAnsweredOnATerminal(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script(1) not on PATH: no pseudo-terminal to type on")
	}
	ws := t.TempDir()
	var mu sync.Mutex
	var bodies []string
	srv, err := replay.NewResponder(func(r replay.Request) replay.Response {
		mu.Lock()
		bodies = append(bodies, string(r.Body))
		n := len(bodies)
		mu.Unlock()
		reply := replay.Reply{Blocks: []llm.Block{llm.TextBlock("the marker is written")}}
		if n == 1 {
			reply = replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock("toolu_mark", "execute_bash", json.RawMessage(`{"command":"echo approved >> marker"}`))}}
		}
		resp, err := replay.Turn(llm.APIAnthropic, reply)
		if err != nil {
			return replay.Response{Status: 500, Body: []byte(err.Error())}
		}
		return resp
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	typed, out, exited := startPTY(t, ws, "chat --plain --approve ask",
		"HOME="+t.TempDir(), "STRATA_DATA_DIR="+dataDir, "XDG_CONFIG_HOME="+configDir,
		"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL="+srv.URL(), "OPENAI_API_KEY=")
	io.WriteString(typed, "write the marker\n")
	waitFor(t, "the approval question", func() bool { return strings.Contains(out.String(), "? allow execute_bash") })
	io.WriteString(typed, "y\n")
	waitFor(t, "the final answer", func() bool { return strings.Contains(out.String(), "the marker is written") })
	io.WriteString(typed, "/exit\n")
	if err := <-exited; err != nil {
		t.Fatalf("strata chat under script(1): %v\n%s", err, out)
	}

	b, err := os.ReadFile(filepath.Join(ws, "marker"))
	if err != nil || string(b) != "approved\n" {
		t.Errorf("marker = %q, %v; want the approved command run once\n%s", b, err, out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 2 {
		t.Fatalf("%d model calls; want 2 (the tool call, then its result)\n%s", len(bodies), out)
	}
	if strings.Contains(out.String(), "steering:") || strings.Contains(bodies[1], `"text":"y"`) {
		t.Errorf("the answer was taken as a steering message\n%s", out)
	}
	if !strings.Contains(bodies[1], `"tool_use_id":"toolu_mark"`) || strings.Contains(bodies[1], `"is_error":true`) {
		t.Errorf("the second request lacks the call's successful result:\n%s", bodies[1])
	}
}
