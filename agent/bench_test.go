package agent

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/anthropic"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/prompt/flat"
	"github.com/strata-agent/strata/tool"
)

type noop struct{}

func (noop) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "noop", Description: "does nothing", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}
}
func (noop) Run(context.Context, *tool.Env, json.RawMessage) (tool.Result, error) {
	return tool.TextResult("ok"), nil
}

// BenchmarkToolRoundTrip measures the loop's overhead per tool round-trip: one
// user turn = a model call asking for a no-op tool + the final model call,
// through the replay server and the real Anthropic SDK. The baseline is the
// bare provider streaming the same two responses in the same run; reported:
// p50 of (loop − bare) per round-trip in µs, and the ratio loop/bare.
func BenchmarkToolRoundTrip(b *testing.B) {
	u := llm.Usage{Input: 100, Output: 10}
	call, err1 := replay.AnthropicStream("msg_1", u, llm.StopToolUse, llm.TextBlock("calling"), llm.ToolUseBlock("toolu_1", "noop", json.RawMessage(`{}`)))
	final, err2 := replay.AnthropicStream("msg_2", u, llm.StopEndTurn, llm.TextBlock("done"))
	if err := errors.Join(err1, err2); err != nil {
		b.Fatal(err)
	}
	script := make([]replay.Response, 0, 4*b.N)
	for i := 0; i < b.N; i++ {
		script = append(script, call, final, call, final)
	}
	srv, err := replay.NewServer(script...)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	p := anthropic.New(anthropic.Config{APIKey: "bench", BaseURL: srv.URL()})
	bus := event.NewBus()
	bus.Subscribe(func(event.Event) {})
	defer bus.Close()
	a, err := New(Config{Provider: p, Layout: flat.Layout{}, Tools: tool.NewRegistry(noop{}), Model: "m", Bus: bus})
	if err != nil {
		b.Fatal(err)
	}
	req := &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("go")}}
	ctx := context.Background()
	over := make([]float64, 0, b.N)
	var loopT, bareT time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a.st.History = a.st.History[:0]
		t0 := time.Now()
		if _, err := a.Prompt(ctx, "go"); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		for j := 0; j < 2; j++ {
			if _, err := p.Stream(ctx, req, func(llm.Delta) {}); err != nil {
				b.Fatal(err)
			}
		}
		t2 := time.Now()
		loopT += t1.Sub(t0)
		bareT += t2.Sub(t1)
		over = append(over, float64(t1.Sub(t0)-t2.Sub(t1))/1e3)
	}
	sort.Float64s(over)
	b.ReportMetric(over[len(over)/2], "p50_overhead_µs")
	b.ReportMetric(float64(loopT)/float64(bareT), "x_bare_stream")
}

// BenchmarkEventFanout emits a turn's worth of events (1000 deltas) to 10
// observers, as a ratio of the emitter's time to the same emission to 1
// observer, per delivery policy: the default Block queue (1024 events, so
// the emitter seldom waits), a 16-event Block queue (the emitter waits for
// the slowest observer) and a 16-event Drop queue (it never waits; the
// share of deliveries dropped is reported). Each run ends with Close, which
// waits until the observers have seen what was queued.
func BenchmarkEventFanout(b *testing.B) {
	for _, c := range []struct {
		name string
		opts []event.SubscribeOption
	}{
		{"block", nil},
		{"block_queue16", []event.SubscribeOption{event.WithQueueSize(16)}},
		{"drop_queue16", []event.SubscribeOption{event.WithQueueSize(16), event.WithPolicy(event.Drop)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var dropped int64
			run := func(observers int) time.Duration {
				bus := event.NewBus()
				subs := make([]*event.Subscription, observers)
				for i := range subs {
					subs[i] = bus.Subscribe(func(event.Event) {}, c.opts...)
				}
				d := llm.Delta{Type: llm.DeltaText, Text: "token"}
				t0 := time.Now()
				for i := 0; i < 1000; i++ {
					bus.Emit(event.Event{Kind: event.MessageUpdate, Delta: &d})
				}
				el := time.Since(t0)
				bus.Close()
				for _, s := range subs {
					dropped += s.Dropped()
				}
				return el
			}
			var one, ten time.Duration
			for i := 0; i < b.N; i++ {
				one += run(1)
				ten += run(10)
			}
			b.ReportMetric(float64(ten)/float64(one), "x_1_observer")
			b.ReportMetric(float64(ten)/float64(b.N)/1000, "ns/event_10obs")
			b.ReportMetric(float64(dropped)/float64(b.N*11*1000), "dropped/delivery")
		})
	}
}
