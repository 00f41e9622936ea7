package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// On a terminal (a pseudo-terminal from util-linux script(1)), a line typed
// in line mode while a prompt runs is a steering message: the Rust
// agent-loop Turn's input messages include "pending steering messages",
// and "The inner loop in run_loop continues when there are tool calls or
// pending steering messages". Here the line is typed while the model gives
// its final answer (no tool calls), so the loop makes one more model call
// with it; the model server records both requests.
func TestChatLineTypedOnATerminalSteers(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script(1) not on PATH: no pseudo-terminal to type on")
	}
	ws := t.TempDir()
	inCall, release, finished := make(chan struct{}), make(chan struct{}), make(chan struct{})
	defer close(finished)
	var mu sync.Mutex
	var bodies []string
	srv, err := replay.NewResponder(func(r replay.Request) replay.Response {
		mu.Lock()
		bodies = append(bodies, string(r.Body))
		n := len(bodies)
		mu.Unlock()
		text := "the steered answer"
		if n == 1 {
			close(inCall)
			select { // held until the typed line has been taken
			case <-release:
			case <-finished:
			}
			text = "a final answer"
		}
		resp, err := replay.Turn(llm.APIAnthropic, replay.Reply{Blocks: []llm.Block{llm.TextBlock(text)}})
		if err != nil {
			return replay.Response{Status: 500, Body: []byte(err.Error())}
		}
		return resp
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	typed, out, exited := startPTY(t, ws, "chat --plain --format json --approve all",
		"HOME="+t.TempDir(), "STRATA_DATA_DIR="+dataDir, "XDG_CONFIG_HOME="+configDir,
		"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL="+srv.URL(), "OPENAI_API_KEY=")

	io.WriteString(typed, "list the files\n")
	<-inCall // the first prompt's only model call is running
	io.WriteString(typed, "only Go files\n")
	waitFor(t, "the steering notice on the terminal", func() bool {
		return strings.Contains(out.String(), "steering: queued for the next model call")
	})
	close(release)
	io.WriteString(typed, "/exit\n") // read while the prompt runs: kept until it ends
	if err := <-exited; err != nil {
		t.Fatalf("strata chat under script(1): %v\n%s", err, out)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 2 {
		t.Fatalf("%d model calls; want 2 (the prompt, then one more for the typed line)\n%s", len(bodies), out)
	}
	lastUser := func(body string) string {
		var req struct {
			Messages []struct {
				Role    string
				Content []struct{ Text string }
			}
		}
		if err := json.Unmarshal([]byte(body), &req); err != nil {
			t.Fatalf("request body: %v", err)
		}
		for i := len(req.Messages) - 1; i >= 0; i-- {
			if m := req.Messages[i]; m.Role == "user" {
				var s []string
				for _, c := range m.Content {
					s = append(s, c.Text)
				}
				return strings.Join(s, "|")
			}
		}
		return ""
	}
	if got := lastUser(bodies[0]); got != "list the files" {
		t.Errorf("first request's user message %q; want the prompt alone", got)
	}
	if got := lastUser(bodies[1]); got != "only Go files" {
		t.Errorf("second request's last user message %q; want the typed line", got)
	}
	if !strings.Contains(bodies[1], "a final answer") {
		t.Error("the second request lacks the first answer: it is not the same prompt's next turn")
	}
	var triggers []string
	for _, line := range strings.Split(out.String(), "\n") {
		var ev struct{ Kind, Trigger string }
		if json.Unmarshal([]byte(strings.TrimRight(line, "\r")), &ev) == nil && ev.Kind == "turn_start" {
			triggers = append(triggers, ev.Trigger)
		}
	}
	if got := strings.Join(triggers, " "); got != "user continuation" {
		t.Errorf("turn triggers %q; want \"user continuation\" (the typed line continues the running prompt)\n%s", got, out)
	}
}

// startPTY starts strata with args on a pseudo-terminal (script(1)) in dir
// with env added; it returns what is typed on it, its output and its exit
// (the process is killed when the test ends).
func startPTY(t *testing.T, dir, args string, env ...string) (io.WriteCloser, *lockedBuffer, <-chan error) {
	t.Helper()
	cmd := exec.Command("script", "-qec", binary+" "+args, "/dev/null")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	typed, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { typed.Close(); cmd.Process.Kill() })
	return typed, out, exited
}
