package durable

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/event"
	sharedData "github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/tool"
)

// recordedModel answers the first request with a real recorded Anthropic
// stream (a text block, then a get_weather tool_use streamed as partial
// JSON, with pings) and the second with a text reply.
func recordedModel(t *testing.T, sse replay.Response) *model {
	return &model{t: t, replies: func(i int, _ string) replay.Response {
		if i == 0 {
			return sse
		}
		return turn(t, llm.TextBlock("It is sunny in Paris."))
	}}
}

type weatherIn struct {
	Location string `json:"location"`
}

func weather() tool.Tool {
	return tool.Typed("get_weather", "The weather at a location.", tool.Traits{Effect: tool.ReadOnly},
		func(_ context.Context, _ tool.Call, in weatherIn) (string, error) {
			return "sunny in " + in.Location, nil
		})
}

// TestRecordedStreamThroughTheWorkflow replays a real Anthropic stream
// (../shared/data/wire, the Python SDK's tool_use fixture) through the
// model-call activity: the requests equal an in-process run's, and so do
// the events, stream deltas included, in kind and order.
func TestRecordedStreamThroughTheWorkflow(t *testing.T) {
	sse, err := replay.SSEFile(sharedData.Path(t, filepath.Join("data", "wire", "anthropic-sdk-python", "tests", "lib", "streaming", "fixtures", "tool_use_response.txt")))
	if err != nil {
		t.Fatal(err)
	}
	// The recording stops right after its last data line; a server sends
	// the blank line that ends the event (as llm/anthropic's tests do).
	sse.Body = append(bytes.TrimRight(sse.Body, "\n"), "\n\n"...)
	dir := t.TempDir()
	inProc := recordedModel(t, sse)
	o := options(dir, inProc, session.NewMemory())
	o.Tools = []tool.Tool{weather()}
	var mu sync.Mutex
	var want []event.Kind
	runInProcess(t, o, strata.SessionOptions{OnEventSync: func(e event.Event) {
		mu.Lock()
		want = append(want, e.Kind)
		mu.Unlock()
	}}, "What is the weather in Paris?")

	dur := recordedModel(t, sse)
	o = options(dir, dur, session.NewMemory())
	o.Tools = []tool.Tool{weather()}
	h := newHarness(t, WorkerOptions{Options: o})
	h.prompt("What is the weather in Paris?")
	var got []event.Kind
	h.then(func() {
		evs, err := h.allEvents()
		if err != nil {
			t.Error(err)
			return
		}
		for _, e := range evs {
			got = append(got, e.Kind)
		}
		h.next()
	})
	h.run(Spec{SessionID: "s-wire"})
	sameRequests(t, inProc.seen(), dur.seen())
	if len(h.results) != 1 || h.results[0].Result.Message.Text() != "It is sunny in Paris." {
		t.Fatalf("results %+v", h.results)
	}
	updates := 0
	for _, k := range got {
		if k == event.MessageUpdate {
			updates++
		}
	}
	if !slices.Equal(got, want) || updates < 5 {
		t.Errorf("events differ (%d stream deltas):\n durable:    %v\n in-process: %v", updates, got, want)
	}
}
