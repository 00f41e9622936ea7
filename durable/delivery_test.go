package durable

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/tool"
)

// hangingTool counts its runs; runs up to hang block until their context
// ends (a call whose worker is lost), later runs return "ok".
type hangingTool struct {
	runs atomic.Int32
	hang int32
}

type noInput struct{}

func (h *hangingTool) tool(name string, effect tool.Effect) tool.Tool {
	return tool.Typed(name, "a tool that may hang", tool.Traits{Effect: effect}, func(ctx context.Context, c tool.Call, _ noInput) (string, error) {
		if h.runs.Add(1) <= h.hang {
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(30 * time.Second):
				return "", nil // the attempt should have been timed out long before
			}
		}
		return "ok from " + c.CallID, nil
	})
}

// runHanging runs one prompt calling name, whose first attempt hangs past
// the spec's one-second tool timeout, and returns the requests sent.
func runHanging(t *testing.T, name string, effect tool.Effect) (*hangingTool, []string, PromptResult) {
	dir := t.TempDir()
	ht := &hangingTool{hang: 1}
	m := script(t, []llm.Block{use("toolu_h1", name, `{}`)}, []llm.Block{llm.TextBlock("Finished.")})
	o := options(dir, m, session.NewMemory())
	o.Tools = []tool.Tool{ht.tool(name, effect)}
	h := newHarness(t, WorkerOptions{Options: o})
	h.prompt("Go.")
	h.run(Spec{SessionID: "s-" + name, ToolTimeout: time.Second})
	if len(h.results) != 1 {
		t.Fatalf("got %d results", len(h.results))
	}
	return ht, m.seen(), h.results[0]
}

// TestSideEffectingToolLostIsInterruptedNotRerun: a side-effecting tool
// whose attempt times out (as when its worker dies) runs once, and the
// model reads an interrupted is_error tool_result.
func TestSideEffectingToolLostIsInterruptedNotRerun(t *testing.T) {
	ht, bodies, res := runHanging(t, "deploy", tool.SideEffecting)
	if n := ht.runs.Load(); n != 1 {
		t.Errorf("side-effecting tool ran %d times, want exactly 1", n)
	}
	if res.Error != nil || res.Result.Message.Text() != "Finished." {
		t.Errorf("prompt result %+v", res)
	}
	if len(bodies) != 2 {
		t.Fatalf("%d requests, want 2", len(bodies))
	}
	if !strings.Contains(bodies[1], `"is_error":true`) || !strings.Contains(bodies[1], "tool call interrupted") ||
		!strings.Contains(bodies[1], "was not run again") {
		t.Errorf("the model was not told the call was interrupted: %s", tail(bodies[1]))
	}
}

// TestReadOnlyToolLostIsRetried: a read-only tool whose first attempt
// times out runs again and the model reads the second attempt's result.
func TestReadOnlyToolLostIsRetried(t *testing.T) {
	ht, bodies, res := runHanging(t, "probe", tool.ReadOnly)
	if n := ht.runs.Load(); n != 2 {
		t.Errorf("read-only tool ran %d times, want 2 (one lost attempt, one retry)", n)
	}
	if res.Error != nil {
		t.Errorf("prompt failed: %v", res.Error)
	}
	if len(bodies) != 2 || !strings.Contains(bodies[1], "ok from toolu_h1") || strings.Contains(bodies[1], `"is_error":true`) {
		t.Errorf("the model did not read the retried result: %s", tail(bodies[len(bodies)-1]))
	}
}

// tail returns the end of a request body (its last messages).
func tail(body string) string {
	if i := strings.LastIndex(body, `"role":"assistant"`); i >= 0 {
		return body[i:min(len(body), i+800)]
	}
	return body
}

// TestLongToolHeartbeats: a tool running five times its heartbeat timeout
// is kept alive by the activity's heartbeats and its result reaches the
// model.
func TestLongToolHeartbeats(t *testing.T) {
	var runs atomic.Int32
	slow := tool.Typed("slow_build", "runs for a while", tool.Traits{}, func(ctx context.Context, c tool.Call, _ noInput) (string, error) {
		runs.Add(1)
		c.Emit("building")
		select {
		case <-time.After(1500 * time.Millisecond):
			return "built", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	m := script(t, []llm.Block{use("toolu_s1", "slow_build", `{}`)}, []llm.Block{llm.TextBlock("Built.")})
	o := options(t.TempDir(), m, session.NewMemory())
	o.Tools = []tool.Tool{slow}
	h := newHarness(t, WorkerOptions{Options: o})
	h.prompt("Build.")
	h.run(Spec{SessionID: "s-slow", ToolHeartbeat: 300 * time.Millisecond})
	bodies := m.seen()
	if runs.Load() != 1 || len(bodies) != 2 || !strings.Contains(bodies[1], `built`) || strings.Contains(bodies[1], `"is_error":true`) {
		t.Errorf("runs %d; the model read: %s", runs.Load(), tail(bodies[len(bodies)-1]))
	}
}

// TestCancelledSessionCancelsTheRunningTool: cancelling the workflow while
// a tool runs cancels the tool's context (through the heartbeat), once.
func TestCancelledSessionCancelsTheRunningTool(t *testing.T) {
	var runs atomic.Int32
	cancelled := make(chan time.Duration, 1)
	long := tool.Typed("long_job", "runs until cancelled", tool.Traits{}, func(ctx context.Context, c tool.Call, _ noInput) (string, error) {
		runs.Add(1)
		start := time.Now()
		select {
		case <-ctx.Done():
			cancelled <- time.Since(start)
			return "", ctx.Err()
		case <-time.After(30 * time.Second):
			return "not cancelled", nil
		}
	})
	m := script(t, []llm.Block{use("toolu_l1", "long_job", `{}`)}, []llm.Block{llm.TextBlock("unreachable")})
	o := options(t.TempDir(), m, session.NewMemory())
	o.Tools = []tool.Tool{long}
	h := newHarness(t, WorkerOptions{Options: o})
	h.keep = true
	h.env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if info.ActivityType.Name == ToolCallActivity {
			go func() {
				time.Sleep(200 * time.Millisecond)
				h.env.CancelWorkflow()
			}()
		}
	})
	h.prompt("Run it.")
	h.start(SessionInput{Spec: Spec{SessionID: "s-cancel", ToolHeartbeat: 400 * time.Millisecond}})
	select {
	case d := <-cancelled:
		if d > 10*time.Second {
			t.Errorf("the tool saw the cancellation after %v", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the running tool's context was not cancelled with the workflow")
	}
	if runs.Load() != 1 {
		t.Errorf("tool ran %d times, want 1", runs.Load())
	}
	var ce *temporal.CanceledError
	if err := h.env.GetWorkflowError(); !errors.As(err, &ce) {
		t.Errorf("workflow ended with %v, want cancelled", err)
	}
}
