package durable

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/session"
)

// The per-response caps hold exactly whichever workers run the calls
// (docs/security.md, "Limits you can set"): with toolCallsPerResponse 3, a
// response of 5 execute_bash calls whose tool-call activities alternate
// between two workers runs 3 of them, and the other 2 reach the model as
// over the limit, byte for byte as in process. On the old code the cap was
// a tool_call hook counting in each worker's memory: each worker saw at
// most 3 calls of the response, and all 5 ran.
func TestResponseCapsHoldAcrossWorkers(t *testing.T) {
	dir := t.TempDir()
	var calls []llm.Block
	for i := range 5 {
		calls = append(calls, use(fmt.Sprintf("toolu_%d", i), "execute_bash", fmt.Sprintf(`{"command":"echo %d >> log.txt"}`, i)))
	}
	replies := [][]llm.Block{calls, {llm.TextBlock("Done.")}}
	opts := func(m *model) strata.Options {
		o := options(dir, m, session.NewMemory())
		o.MaxToolCallsPerResponse = 3
		return o
	}
	logged := func() []string {
		b, _ := os.ReadFile(filepath.Join(dir, "log.txt"))
		os.Remove(filepath.Join(dir, "log.txt"))
		return strings.Fields(string(b))
	}

	inProc := script(t, replies...)
	runInProcess(t, opts(inProc), strata.SessionOptions{}, "run them")
	want := logged()

	dur := script(t, replies...)
	h := newHarness(t, WorkerOptions{Options: opts(dur)})
	other := newActivities(WorkerOptions{Options: opts(dur)})
	t.Cleanup(func() { other.Close() })
	n := 0
	h.env.RegisterActivityWithOptions(func(ctx context.Context, in ToolCallInput) (agent.ToolOutput, error) {
		n++
		if n%2 == 0 { // every other call on the second worker
			return other.ToolCall(ctx, in)
		}
		return h.acts.ToolCall(ctx, in)
	}, activity.RegisterOptions{Name: ToolCallActivity, DisableAlreadyRegisteredCheck: true})
	h.prompt("run them")
	h.run(Spec{SessionID: "caps"})

	if got := logged(); strings.Join(got, ",") != "0,1,2" || strings.Join(want, ",") != "0,1,2" {
		t.Errorf("commands run: %q on two workers, %q in process; want the first 3 in both", got, want)
	}
	sameRequests(t, inProc.seen(), dur.seen())
	if last := dur.seen()[len(dur.seen())-1]; strings.Count(last, "more than 3 tool calls") != 2 {
		t.Errorf("the model is not told twice that the calls over the limit did not run:\n%s", last)
	}
}
