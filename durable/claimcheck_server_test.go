package durable

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/temporaltest"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/session"
)

// bigReads is a session whose first prompt reads 32 files of 95,000 bytes
// of random text in two fs_read calls (16 operations each, under fs_read's
// 100,000 bytes per operation): 3 MB of tool results that zlib shrinks to
// about 2.3 MB, over Temporal's 2 MB payload cap; then it answers, and a
// second prompt's request carries it all again, and its answer is 100 KB
// of text (a prompt result over MaxAnswerBytes).
func bigReads(t *testing.T, dir string) *model {
	ops := func(from int) string {
		var o []string
		for i := from; i < from+16; i++ {
			o = append(o, fmt.Sprintf(`{"mode":"Line","path":"f%02d.txt"}`, i))
		}
		return `{"operations":[` + strings.Join(o, ",") + `]}`
	}
	for i := range 32 {
		var b strings.Builder
		for b.Len() < 95_000-77 {
			b.WriteString(randomText(t, 76) + "\n")
		}
		write(t, filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), b.String())
	}
	return script(t,
		[]llm.Block{llm.TextBlock("Reading them all."), use("toolu_r1", "fs_read", ops(0)), use("toolu_r2", "fs_read", ops(16))},
		[]llm.Block{llm.TextBlock("Read 32 files.")},
		[]llm.Block{llm.TextBlock("Still here. " + randomText(t, 100_000))},
	)
}

// bigOptions are options with tool results uncapped up to 4 MB, so the
// two reads reach the model whole.
func bigOptions(dir string, m *model, store session.Store) strata.Options {
	o := options(dir, m, store)
	o.MaxToolResultBytes = 4 << 20
	return o
}

// dialWith connects to addr with data converter dc; the client closes
// with the test.
func dialWith(t *testing.T, addr string, dc converter.DataConverter) client.Client {
	c, err := client.Dial(client.Options{HostPort: addr, Logger: quietLogger, DataConverter: dc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestPlainConverterFailsOverThePayloadCap shows the limit the claim check
// lifts: with DataConverter alone (zlib), the session whose conversation
// compresses to more than 2 MB never gets its answer — the workflow task
// that would schedule the model call and the record with the whole
// conversation fails on the size limits (the 4 MB gRPC message holding the
// task's commands, before the 2 MB payload cap) and is retried forever.
func TestPlainConverterFailsOverThePayloadCap(t *testing.T) {
	addr := temporaltest.Address(t)
	dir := t.TempDir()
	m := bigReads(t, dir)
	c := dialWith(t, addr, DataConverter())
	queue := "strata-plain-cap-" + newSessionID()
	startWorker(t, c, queue, WorkerOptions{Options: bigOptions(dir, m, session.NewMemory())})
	cl := NewClient(c, queue)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	id, err := cl.Start(ctx, Spec{})
	if err != nil {
		t.Fatal(err)
	}
	pctx, pcancel := context.WithTimeout(ctx, 15*time.Second) // the task fails within a second, and again at each retry
	defer pcancel()
	res, err := cl.Prompt(pctx, id, "Read every file.")
	if err == nil {
		t.Fatalf("the prompt succeeded (%q) with a %d-request conversation over the payload cap", res.Message.Text(), len(m.seen()))
	}
	t.Logf("the prompt: %v", err)
	if n := len(m.seen()); n != 1 {
		t.Errorf("the model got %d requests; want only the first (the second carries the reads)", n)
	}
	d, err := c.DescribeWorkflowExecution(ctx, WorkflowID(id), "")
	if err != nil {
		t.Fatal(err)
	}
	why := describeFailure(ctx, t, c, id)
	t.Logf("workflow %s: %s", d.WorkflowExecutionInfo.Status, why)
	if !strings.Contains(why, "GrpcMessageTooLarge") && !strings.Contains(strings.ToLower(why), "size") {
		t.Errorf("no size limit named in the workflow's failure: %s", why)
	}
	_ = c.TerminateWorkflow(ctx, WorkflowID(id), "", "test over")
}

// describeFailure returns the failures the workflow's history records
// (failed workflow or activity tasks, termination).
func describeFailure(ctx context.Context, t *testing.T, c client.Client, id string) string {
	var out []string
	it := c.GetWorkflowHistory(ctx, WorkflowID(id), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := e.GetWorkflowTaskFailedEventAttributes(); a != nil {
			out = append(out, a.GetCause().String()+": "+a.GetFailure().GetMessage())
		}
		if a := e.GetWorkflowExecutionTerminatedEventAttributes(); a != nil {
			out = append(out, "terminated: "+a.GetReason())
		}
		if a := e.GetActivityTaskFailedEventAttributes(); a != nil {
			out = append(out, "activity: "+a.GetFailure().GetMessage())
		}
	}
	return strings.Join(out, "; ")
}

// TestClaimCheckCarriesAConversationOverThePayloadCap: the same session
// with the claim check on the worker (DataConverterWith on a SQLite store)
// and a client with the plain DataConverter: both prompts complete, the
// requests the model receives are byte-identical to an in-process run's,
// the large payloads are in the store and referenced from the history, and
// the client — which could not read a reference — gets the whole
// conversation and every event through answers within MaxAnswerBytes.
func TestClaimCheckCarriesAConversationOverThePayloadCap(t *testing.T) {
	addr := temporaltest.Address(t)
	dir := t.TempDir()
	inProc := bigReads(t, dir)
	prompts := []string{"Read every file.", "Still there?"}
	_, wantHistory := runInProcess(t, bigOptions(dir, inProc, session.NewMemory()), strata.SessionOptions{}, prompts...)

	dbPath := filepath.Join(t.TempDir(), "workers.db")
	store, err := session.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	dur := &model{t: t, replies: inProc.replies}
	workers := dialWith(t, addr, claimConverter(t, store, 0))
	queue := "strata-claim-" + newSessionID()
	startWorker(t, workers, queue, WorkerOptions{Options: bigOptions(dir, dur, store)})
	c := dialWith(t, addr, DataConverter()) // a client without the store
	cl := NewClient(c, queue)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	id, err := cl.Start(ctx, Spec{})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range prompts {
		res, err := cl.Prompt(ctx, id, p)
		if err != nil {
			t.Fatalf("prompt %d: %v", i, err)
		}
		if want := wantHistory[len(wantHistory)-3+2*i].Text(); i > 0 && res.Message.Text() != want { // the 100 KB answer, read from the history
			t.Errorf("prompt %d answered %d bytes; want the model's %d", i, len(res.Message.Text()), len(want))
		}
		t.Logf("prompt %d: %d bytes: %.40q…", i, len(res.Message.Text()), res.Message.Text())
	}
	a, b := inProc.seen(), dur.seen()
	sameRequests(t, a, b)
	t.Logf("%d requests, the last %d bytes", len(b), len(b[len(b)-1]))

	// The client reads the whole conversation and every event, in answers
	// within MaxAnswerBytes (a 1.5 MB tool_result message in Parts).
	hist, err := cl.History(ctx, id)
	if err != nil {
		t.Fatalf("history through a client without the store: %v", err)
	}
	if !sameJSON(t, hist, wantHistory) {
		t.Error("the history the client read differs from the in-process session's")
	}
	var evs []event.Event
	largest, queries := 0, 0
	for {
		more, err := cl.Events(ctx, id, len(evs))
		if err != nil {
			t.Fatalf("events from %d: %v", len(evs), err)
		}
		queries++
		if len(more) == 0 {
			break
		}
		evs = append(evs, more...)
	}
	for from, off := 0, 0; from < len(evs); {
		v, err := c.QueryWorkflow(ctx, WorkflowID(id), "", EventsQuery, from, off)
		if err != nil {
			t.Fatal(err)
		}
		var p EventsPage
		if err := v.Get(&p); err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(p)
		largest = max(largest, len(raw))
		if p.Part != nil {
			if off = p.Part.Offset + len(p.Part.Data); off == p.Part.Size {
				from, off = from+1, 0
			}
		} else {
			from += len(p.Events)
		}
	}
	if largest > MaxAnswerBytes {
		t.Errorf("an events answer of %d bytes; want at most MaxAnswerBytes (%d)", largest, MaxAnswerBytes)
	}
	results := 0
	for _, e := range evs {
		if e.Kind == event.ToolExecutionEnd && e.ToolResult != nil {
			n := 0
			for _, b := range e.ToolResult.Content {
				n += len(b.Text)
			}
			if n > 1<<20 {
				results++
			}
		}
	}
	if results != 2 {
		t.Errorf("%d events with a whole 1.5 MB tool result; want 2", results)
	}
	t.Logf("%d events in %d Client.Events calls; the largest answer %d bytes", len(evs), queries, largest)

	// The history holds references; the store holds what they name, each
	// referenced by the session.
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	refs, size, stored := 0, 0, 0
	it := c.GetWorkflowHistory(ctx, WorkflowID(id), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		size += protoSize(e)
		if u := e.GetWorkflowExecutionUpdateCompletedEventAttributes(); u != nil {
			for _, p := range eventPayloads(u) {
				if n := protoSize(p); n > MaxAnswerBytes+1<<10 || string(p.Metadata[converter.MetadataEncoding]) == ClaimEncoding {
					t.Errorf("a prompt result of %d bytes (%s); want at most MaxAnswerBytes, inline", n, p.Metadata[converter.MetadataEncoding])
				}
			}
		}
		for _, p := range eventPayloads(e) {
			if string(p.Metadata[converter.MetadataEncoding]) != ClaimEncoding {
				continue
			}
			refs++
			var ref claimRef
			if err := json.Unmarshal(p.Data, &ref); err != nil {
				t.Fatal(err)
			}
			if data, err := store.Payload(ctx, ref.SHA256); err == nil && session.PayloadKey(data) == ref.SHA256 {
				stored += len(data)
			} else {
				t.Errorf("reference %s: not in the store: %v", ref.SHA256, err)
			}
			var n int
			if err := db.QueryRow(`SELECT count(*) FROM payload_refs WHERE session_id = ? AND sha256 = ?`, id, ref.SHA256).Scan(&n); err != nil || n != 1 {
				t.Errorf("payload %s: %d references by session %s (%v); want 1, so it goes with the session", ref.SHA256, n, id, err)
			}
		}
	}
	t.Logf("workflow history %d bytes with %d references to %d bytes in the store", size, refs, stored)
	if refs < 3 || size > 1<<20 {
		t.Errorf("%d references, a %d-byte history; want the reads, the model calls and the record moved out", refs, size)
	}
	if err := cl.End(ctx, id); err != nil {
		t.Fatal(err)
	}
}

// protoSize is the encoded size of a history event.
func protoSize(m proto.Message) int { return proto.Size(m) }

// eventPayloads returns every payload inside m (activity inputs and
// results, update results, workflow inputs), however deep.
func eventPayloads(m proto.Message) []*commonpb.Payload {
	var out []*commonpb.Payload
	var walk func(protoreflect.Message)
	walk = func(r protoreflect.Message) {
		if p, ok := r.Interface().(*commonpb.Payload); ok {
			out = append(out, p)
			return
		}
		r.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				for i := range v.List().Len() {
					walk(v.List().Get(i).Message())
				}
			case fd.IsMap() && fd.MapValue().Message() != nil:
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool { walk(mv.Message()); return true })
			case fd.Message() != nil && !fd.IsMap():
				walk(v.Message())
			}
			return true
		})
	}
	walk(m.ProtoReflect())
	return out
}

// TestClaimCheckCarriesTheStateOverContinueAsNew: the same session
// continuing as new after each prompt (Spec.PromptsPerRun 1) carries its
// 3 MB loop state into the next run as a reference, and the next run's
// request is byte-identical to an in-process run's.
func TestClaimCheckCarriesTheStateOverContinueAsNew(t *testing.T) {
	addr := temporaltest.Address(t)
	dir := t.TempDir()
	inProc := bigReads(t, dir)
	prompts := []string{"Read every file.", "Still there?"}
	_, wantHistory := runInProcess(t, bigOptions(dir, inProc, session.NewMemory()), strata.SessionOptions{}, prompts...)

	store := session.NewMemory()
	dur := &model{t: t, replies: inProc.replies}
	workers := dialWith(t, addr, claimConverter(t, store, 0))
	queue := "strata-claim-can-" + newSessionID()
	startWorker(t, workers, queue, WorkerOptions{Options: bigOptions(dir, dur, store)})
	c := dialWith(t, addr, DataConverter())
	cl := NewClient(c, queue)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	id, err := cl.Start(ctx, Spec{PromptsPerRun: 1})
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.DescribeWorkflowExecution(ctx, WorkflowID(id), "")
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range prompts {
		for range 100 { // the update may reach the run that is just continuing as new
			if _, err = cl.Prompt(ctx, id, p); err == nil || !strings.Contains(err.Error(), "continued as new") {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("prompt %d: %v", i, err)
		}
	}
	sameRequests(t, inProc.seen(), dur.seen())
	hist, err := cl.History(ctx, id)
	if err != nil || !sameJSON(t, hist, wantHistory) {
		t.Errorf("the history after continuing as new differs from the in-process session's (%v)", err)
	}
	runID := first.WorkflowExecutionInfo.Execution.RunId
	var carried *commonpb.Payload
	it := c.GetWorkflowHistory(ctx, WorkflowID(id), runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := e.GetWorkflowExecutionContinuedAsNewEventAttributes(); a != nil {
			carried = a.GetInput().GetPayloads()[0]
		}
	}
	if carried == nil || string(carried.Metadata[converter.MetadataEncoding]) != ClaimEncoding {
		t.Fatalf("the first run did not continue as new with a reference: %v", carried)
	}
	t.Logf("the first run carried its state as %d bytes: %s", protoSize(carried), carried.Data)
	if err := cl.End(ctx, id); err != nil {
		t.Fatal(err)
	}
}
