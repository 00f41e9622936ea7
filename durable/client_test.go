package durable

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/temporaltest"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/session"
)

// TestClientEndAndResume drives a session through Client on a real
// Temporal server: a prompt, the events query, refusals (an approval with
// nothing pending, a prompt after the end), then Start again, which
// resumes the stored session from the worker's store: the next request
// carries the first prompt's conversation.
func TestClientEndAndResume(t *testing.T) {
	c := dial(t, temporaltest.Address(t))
	dir := t.TempDir()
	write(t, filepath.Join(dir, "notes.txt"), "the notes\n")
	m := script(t, []llm.Block{use("toolu_c1", "fs_read", `{"operations":[{"mode":"Line","path":"notes.txt"}]}`)},
		[]llm.Block{llm.TextBlock("Read.")}, []llm.Block{llm.TextBlock("Again.")})
	store := session.NewMemory()
	queue := "strata-client-" + newSessionID()
	startWorker(t, c, queue, WorkerOptions{Options: options(dir, m, store)})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	cl := NewClient(c, queue)
	id, err := cl.Start(ctx, Spec{})
	if err != nil || len(id) != 16 {
		t.Fatalf("Start picked id %q: %v", id, err)
	}
	res, err := cl.Prompt(ctx, id, "Read the notes.")
	if err != nil || res.Message.Text() != "Read." || res.Turns != 2 {
		t.Fatalf("prompt: %+v, %v", res, err)
	}
	evs, err := cl.Events(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[event.Kind]int{}
	for _, e := range evs {
		kinds[e.Kind]++
	}
	if kinds[event.TurnStart] != 2 || kinds[event.ToolExecutionEnd] != 1 || kinds[event.SessionTurnEnd] != 1 {
		t.Errorf("events by kind %v", kinds)
	}
	if more, err := cl.Events(ctx, id, len(evs)); err != nil || len(more) != 0 {
		t.Errorf("events after the last: %d, %v", len(more), err)
	}
	if p, err := cl.Pending(ctx, id); err != nil || p != nil {
		t.Errorf("pending = %+v, %v; want none", p, err)
	}
	if err := cl.Approve(ctx, id, "toolu_none", agent.AllowOnce); err == nil || !strings.Contains(err.Error(), "no approval is pending") {
		t.Errorf("approve with nothing pending: %v", err)
	}
	if err := cl.End(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := c.GetWorkflow(ctx, WorkflowID(id), "").Get(ctx, nil); err != nil {
		t.Fatalf("the ended session's workflow: %v", err)
	}
	if _, err := cl.Prompt(ctx, id, "Still there?"); err == nil {
		t.Error("a prompt to an ended session succeeded")
	}

	if again, err := cl.Start(ctx, Spec{SessionID: id}); err != nil || again != id {
		t.Fatalf("Start again: %q, %v", again, err)
	}
	res, err = cl.Prompt(ctx, id, "Once more.")
	if err != nil || res.Message.Text() != "Again." {
		t.Fatalf("prompt after resume: %+v, %v", res, err)
	}
	bodies := m.seen()
	if len(bodies) != 3 || !strings.Contains(bodies[2], "Read the notes.") || !strings.Contains(bodies[2], "the notes") {
		t.Errorf("the resumed session's request lacks the earlier conversation: %s", tail(bodies[len(bodies)-1]))
	}
	if err := cl.End(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := c.GetWorkflow(ctx, WorkflowID(id), "").Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	d, err := store.LoadSession(ctx, id)
	if err != nil || len(d.Loops) != 2 || len(d.Turns) != 3 {
		t.Errorf("stored session: %v; want 2 loops and 3 turns", err)
	}
}
