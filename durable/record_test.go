package durable

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/internal/temporaltest"
	"github.com/strata-agent/strata/keepalive"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/session"
)

var record = flag.Bool("record", false, "record the session workflow histories of testdata/*.history.json from a real Temporal dev server")

// TestRecordHistories records the histories TestReplayRecordedHistories
// replays: real sessions run by a worker in this process against the
// Temporal CLI's dev server (STRATA_TEMPORAL_BIN, else the cached build
// in ~/.cache/strata-peers/temporal/temporal), submitted through Client.
// It runs only with -record: go test ./durable -run TestRecordHistories -record
func TestRecordHistories(t *testing.T) {
	if !*record {
		t.Skip("run with -record to re-record testdata/*.history.json from a real dev server")
	}
	c := dial(t, temporaltest.Address(t))
	queue := "strata-record"
	dir := t.TempDir()
	write(t, filepath.Join(dir, "notes.txt"), "the notes\n")
	runs := []struct {
		name string
		m    *model
		spec Spec
		run  func(ctx context.Context, cl *Client, id string) error
	}{
		{"multi_tool", multiTool(t), Spec{SessionID: "rec-multi-tool"}, func(ctx context.Context, cl *Client, id string) error {
			for _, p := range []string{"Read notes.txt, log a line, write out.txt.", "And now?"} {
				if _, err := cl.Prompt(ctx, id, p); err != nil {
					return err
				}
			}
			return nil
		}},
		{"approval", askScript(t), Spec{SessionID: "rec-approval", Mode: agent.ModeAsk}, func(ctx context.Context, cl *Client, id string) error {
			done := make(chan error, 1)
			go func() { _, err := cl.Prompt(ctx, id, "Log it."); done <- err }()
			for {
				p, err := cl.Pending(ctx, id)
				if err != nil {
					return err
				}
				if p != nil {
					if err := cl.Steer(ctx, id, steering); err != nil {
						return err
					}
					if err := cl.Approve(ctx, id, p.Call.ID, agent.AllowOnce); err != nil {
						return err
					}
					return <-done
				}
				time.Sleep(100 * time.Millisecond)
			}
		}},
		{"continue_as_new", script(t, []llm.Block{llm.TextBlock("One.")}, []llm.Block{llm.TextBlock("Two.")}),
			Spec{SessionID: "rec-can", PromptsPerRun: 1}, func(ctx context.Context, cl *Client, id string) error {
				for _, p := range []string{"first", "second"} {
					if _, err := cl.Prompt(ctx, id, p); err != nil {
						return err
					}
				}
				return nil
			}},
	}
	// A session whose worker callbacks are carried (carry.go): a
	// program's hooks at every stage but tool_call, the tiered layout's
	// repository context (Gather) and before/after turn callbacks.
	runs = append(runs, runs[0])
	runs[len(runs)-1].name, runs[len(runs)-1].spec = "carried", Spec{SessionID: "rec-carried"}
	runs[len(runs)-1].m = script(t, bash("toolu_r1", "echo carried"), []llm.Block{llm.TextBlock("Carried.")})
	runs[len(runs)-1].run = func(ctx context.Context, cl *Client, id string) error {
		_, err := cl.Prompt(ctx, id, "Run it.")
		return err
	}
	// A session whose worker pings (keepalive.go): two pings 2 s apart
	// after the first prompt (timers fired, ping and record activities),
	// then a prompt whose stretch's timer `end` cancels.
	pinged := pingModel(t)
	runs = append(runs, struct {
		name string
		m    *model
		spec Spec
		run  func(ctx context.Context, cl *Client, id string) error
	}{"keep_alive", pinged, Spec{SessionID: "rec-keep-alive"}, func(ctx context.Context, cl *Client, id string) error {
		if _, err := cl.Prompt(ctx, id, "first question"); err != nil {
			return err
		}
		time.Sleep(5500 * time.Millisecond)
		if n := len(pinged.seen()); n != 3 {
			return fmt.Errorf("keep_alive: the model saw %d requests after the first prompt and 5.5 s; want the prompt's and 2 pings", n)
		}
		_, err := cl.Prompt(ctx, id, "second question")
		return err
	}})
	opts := map[string]func(o *strata.Options){"keep_alive": func(o *strata.Options) {
		o.KeepAlive = keepalive.Options{MaxPings: 2, Interval: 2 * time.Second} // a scripted model: both set, as in process
	}, "carried": func(o *strata.Options) {
		o.Layout, o.DisableRepoContext, o.Hooks = "tiered", false, programHooks()
		o.BeforeTurn = func(context.Context, agent.TurnInfo) error { return nil }
		o.AfterTurn = func(context.Context, agent.TurnRecord) {}
	}}
	for _, r := range runs {
		o := options(dir, r.m, session.NewMemory())
		if r.spec.Mode != "" {
			o.Mode = r.spec.Mode
		}
		if f := opts[r.name]; f != nil {
			f(&o)
		}
		startWorker(t, c, queue+"-"+r.name, WorkerOptions{Options: o})
		cl := NewClient(c, queue+"-"+r.name)
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		id, err := cl.Start(ctx, r.spec)
		if err == nil {
			err = r.run(ctx, cl, id)
		}
		if err == nil {
			err = cl.End(ctx, id)
		}
		if err == nil {
			err = c.GetWorkflow(ctx, WorkflowID(id), "").Get(ctx, nil)
		}
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		writeHistories(t, r.name, histories(ctx, t, c, WorkflowID(id)))
		cancel()
	}

	// A stage workflow: the parent's history and the child of the
	// review_correctness stage (its loop's model calls and fs_read call as
	// activities between the begin- and finish-stage activities).
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	id := runReviewStages(ctx, t, c, queue+"-stages", dir, "rec-stages")
	parent := histories(ctx, t, c, stagesID(id))
	var child string
	for _, e := range parent[0].Events {
		if a := e.GetStartChildWorkflowExecutionInitiatedEventAttributes(); a != nil && strings.Contains(a.GetWorkflowId(), "/review_correctness/") {
			child = a.GetWorkflowId()
		}
	}
	writeHistories(t, "stages", parent)
	writeHistories(t, "stage_child", histories(ctx, t, c, child))
}

// writeHistories writes the histories of a workflow's runs as
// testdata/NAME.N.history.json.
func writeHistories(t *testing.T, name string, hs []*historypb.History) {
	for i, h := range hs {
		b, err := temporalproto.CustomJSONMarshalOptions{Indent: " "}.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join("testdata", fmt.Sprintf("%s.%d.history.json", name, i+1))
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d events)", file, len(h.Events))
	}
}

// histories returns the histories of every run of workflow id, first run
// first (following continue-as-new back from the latest).
func histories(ctx context.Context, t *testing.T, c client.Client, id string) []*historypb.History {
	var out []*historypb.History
	run := ""
	for {
		h := &historypb.History{}
		it := c.GetWorkflowHistory(ctx, id, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				t.Fatalf("history of %s run %q: %v", id, run, err)
			}
			h.Events = append(h.Events, e)
		}
		out = append([]*historypb.History{h}, out...)
		prev := h.Events[0].GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
		if prev == "" {
			return out
		}
		run = prev
	}
}
