package durable

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/strata-agent/strata/internal/temporaltest"
	"github.com/strata-agent/strata/session"
)

// TestTracingLinksClientAndWorkerSpans runs a multi-tool session on a real
// Temporal server with Tracing on the client and the worker: the client's
// spans (under the caller's span), the workflow's, every activity's and
// the activities' GenAI chat and execute_tool spans share one trace.
func TestTracingLinksClientAndWorkerSpans(t *testing.T) {
	addr := temporaltest.Address(t)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	tr, err := Tracing(tp)
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, addr, tr)

	dir := t.TempDir()
	write(t, filepath.Join(dir, "notes.txt"), "the notes\n")
	o := options(dir, multiTool(t), session.NewMemory())
	o.TracerProvider = tp
	queue := "strata-tracing-" + newSessionID()
	startWorker(t, c, queue, WorkerOptions{Options: o})

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	ctx, root := tp.Tracer("test").Start(ctx, "caller")
	cl := NewClient(c, queue)
	id, err := cl.Start(ctx, Spec{}) // a new id: the server may be shared
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Prompt(ctx, id, "Read notes.txt, log a line, write out.txt."); err != nil {
		t.Fatal(err)
	}
	if err := cl.End(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := c.GetWorkflow(ctx, WorkflowID(id), "").Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	root.End()

	want := map[string]int{"caller": 1, "StartWorkflow:" + SessionWorkflowName: 1, "RunWorkflow:" + SessionWorkflowName: 1,
		"UpdateWorkflow:" + PromptUpdate: 1, "RunActivity:" + ModelCallActivity: 4, "RunActivity:" + ToolCallActivity: 4,
		"RunActivity:" + PrepareActivity: 1, "RunActivity:" + RecordActivity: 4, "chat replay": 4, "execute_tool execute_bash": 1,
		"execute_tool fs_read": 2, "execute_tool fs_write": 1}
	got := map[string]int{}
	trace := root.SpanContext().TraceID()
	names := map[string]string{} // span id → name
	for _, s := range exp.GetSpans() {
		names[s.SpanContext.SpanID().String()] = s.Name
	}
	parents := map[string]string{"chat replay": "RunActivity:" + ModelCallActivity, "execute_tool fs_read": "RunActivity:" + ToolCallActivity,
		"StartWorkflow:" + SessionWorkflowName: "caller"}
	for _, s := range exp.GetSpans() {
		if p, ok := parents[s.Name]; ok && names[s.Parent.SpanID().String()] != p {
			t.Errorf("span %q's parent is %q, want %q", s.Name, names[s.Parent.SpanID().String()], p)
		}
		if s.SpanContext.TraceID() != trace {
			t.Errorf("span %q is in trace %s, not the caller's %s", s.Name, s.SpanContext.TraceID(), trace)
		}
		got[s.Name]++
	}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("%d spans %q in the caller's trace, want %d (all: %v)", got[name], name, n, got)
		}
	}
}
