package remote_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/durable"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/remote"
	"github.com/strata-agent/strata/internal/temporaltest"
	"github.com/strata-agent/strata/llm"
	_ "github.com/strata-agent/strata/llm/anthropic" // the scripted model speaks the Anthropic wire
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session"
)

// TestPromptApprovesSteersAndObservesEachEventOnce drives a durable session
// on a real Temporal dev server and an in-process worker: the approval the
// workflow waits for reaches the Approver (which also types a steering
// line), the steering line reaches the model's next request (it is sent
// while the approved one-second command runs), and every event of the
// prompt is observed exactly once, in order.
func TestPromptApprovesSteersAndObservesEachEventOnce(t *testing.T) {
	addr := temporaltest.Address(t)
	dir := t.TempDir()
	model, err := replay.NewResponder(func(r replay.Request) replay.Response {
		body := string(r.Body)
		reply := replay.Reply{Blocks: []llm.Block{llm.TextBlock("no steering seen")}}
		switch {
		case strings.Contains(body, "check the output too"):
			reply = replay.Reply{Blocks: []llm.Block{llm.TextBlock("steering seen")}}
		case !strings.Contains(body, `"type":"tool_result"`):
			in, _ := json.Marshal(map[string]string{"command": "sleep 1; echo ran >> log.txt"})
			reply = replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock("toolu_a", "execute_bash", in)}}
		}
		resp, err := replay.Turn(llm.APIAnthropic, reply)
		if err != nil {
			t.Error(err)
		}
		return resp
	})
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()

	quiet := tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	c, err := client.Dial(client.Options{HostPort: addr, Logger: quiet, DataConverter: durable.DataConverter()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	queue := fmt.Sprintf("remote-test-%d", time.Now().UnixNano())
	w := worker.New(c, queue, worker.Options{})
	acts := durable.Register(w, durable.WorkerOptions{Options: strata.Options{ProviderName: "anthropic", APIKey: "test",
		BaseURL: model.URL(), Store: session.NewMemory()}})
	defer acts.Close()
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	ctx := context.Background()
	dc := durable.NewClient(c, queue)
	id, err := dc.Start(ctx, durable.Spec{Dir: dir, Mode: agent.ModeAsk})
	if err != nil {
		t.Fatal(err)
	}
	defer dc.End(ctx, id)
	steer := make(chan string, 1)
	var asked []string
	var seqs []int64
	var ends int
	s := &remote.Session{Service: dc, ID: id, PollEvery: 20 * time.Millisecond,
		Observe: func(e event.Event) {
			seqs = append(seqs, e.Seq)
			if e.Kind == event.ToolExecutionEnd {
				ends++
			}
		},
		Approver: agent.ApproverFunc(func(_ context.Context, r agent.ApprovalRequest) (agent.Decision, error) {
			asked = append(asked, r.Call.ID)
			steer <- "/steer check the output too"
			return agent.AllowOnce, nil
		}),
	}
	res, err := s.Prompt(ctx, "run it", steer)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Message.Text(); got != "steering seen" {
		t.Errorf("answer %q: the steering line did not reach the model", got)
	}
	if len(asked) != 1 || asked[0] != "toolu_a" {
		t.Errorf("approvals asked: %v; want toolu_a once", asked)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "log.txt")); string(b) != "ran\n" {
		t.Errorf("log.txt = %q; want the approved command's one line", b)
	}
	if ends != 1 {
		t.Errorf("observed %d tool_execution_end events, want 1", ends)
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] != seqs[i-1]+1 {
			t.Fatalf("event seqs %v: not each event once, in order", seqs)
		}
	}
	if len(seqs) == 0 {
		t.Fatal("no events observed")
	}
}
