package agent

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/anthropic"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/prompt/flat"
	"github.com/strata-agent/strata/tool"
)

// streamed joins the text of the MessageUpdate events observers saw.
func streamed(rec *recorder) string {
	var b strings.Builder
	for _, e := range rec.ev {
		if e.Kind == event.MessageUpdate && e.Delta.Type == llm.DeltaText {
			b.WriteString(e.Delta.Text)
		}
	}
	return b.String()
}

// The message-loop design, STREAM_RESPONSE: "Publish token events on the
// event bus as they arrive" and its hooks "transform: filter or rewrite
// tokens in flight (use sparingly — affects user-visible output).
// observer: stream-level analytics. guard: rare; may cut off a response on
// policy." Delta hooks see each delta as it arrives, before it is published.
func TestStreamHooksSeeDeltasInFlight(t *testing.T) {
	answer, err := replay.Turn(llm.APIAnthropic, replay.Reply{Blocks: []llm.Block{
		{Type: llm.BlockThinking, Text: "private musing", Signature: "sig"}, llm.TextBlock("the password is hunter2, bye")}})
	if err != nil {
		t.Fatal(err)
	}
	var observed []llm.Delta
	var published int // MessageUpdate events already out when each delta reached the observer
	var rec *recorder
	observer := Hook{Name: "count", Stage: StageStreamResponse, Phase: PhaseDelta, Kind: HookObserver,
		Func: func(_ context.Context, p *Payload) (Verdict, error) {
			observed = append(observed, *p.Delta)
			for _, e := range rec.ev {
				if e.Kind == event.MessageUpdate {
					published++
				}
			}
			return Verdict{}, nil
		}}
	mask := Hook{Name: "mask", Stage: StageStreamResponse, Phase: PhaseDelta, Kind: HookTransform,
		Func: func(_ context.Context, p *Payload) (Verdict, error) {
			if p.Delta.Type == llm.DeltaThinking {
				p.Delta = nil // filter: thinking is not shown
				return Verdict{}, nil
			}
			p.Delta.Text = strings.ReplaceAll(p.Delta.Text, "hunter2", "*******")
			return Verdict{}, nil
		}}
	a, r, bus, _ := noopAgent(t, Config{Hooks: []Hook{observer, mask}}, []replay.Response{answer})
	rec = r
	res, err := a.Prompt(context.Background(), "go")
	bus.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(observed) < 2 {
		t.Fatalf("observer saw %d deltas; want each delta (thinking and text)", len(observed))
	}
	if observed[0].Type != llm.DeltaThinking || published != 0 {
		t.Errorf("first delta %+v, %d updates published before it; want the thinking delta seen in flight", observed[0], published)
	}
	if got := streamed(rec); got != "the password is *******, bye" {
		t.Errorf("published text %q; want the transformed tokens", got)
	}
	for _, e := range rec.ev {
		if e.Kind == event.MessageUpdate && e.Delta.Type == llm.DeltaThinking {
			t.Errorf("a filtered thinking delta was published: %+v", e.Delta)
		}
	}
	if res.Message.Text() != "the password is hunter2, bye" {
		t.Errorf("kept message %q; delta hooks change what is shown, the message is the provider's", res.Message.Text())
	}
}

// A guard at the delta point cuts the response off: the stream stops, the
// turn fails with ErrDenied and no assistant message is kept.
func TestStreamGuardCutsResponseOff(t *testing.T) {
	answer, err := replay.Text(llm.APIAnthropic, "forbidden words follow")
	if err != nil {
		t.Fatal(err)
	}
	guard := Hook{Name: "policy", Stage: StageStreamResponse, Phase: PhaseDelta, Kind: HookGuard,
		Func: func(_ context.Context, p *Payload) (Verdict, error) {
			if strings.Contains(p.Delta.Text, "forbidden") {
				return Verdict{Deny: true, Reason: "policy"}, nil
			}
			return Verdict{}, nil
		}}
	a, rec, bus, _ := noopAgent(t, Config{Hooks: []Hook{guard}}, []replay.Response{answer})
	_, err = a.Prompt(context.Background(), "go")
	bus.Close()
	if !errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), "policy") {
		t.Fatalf("err = %v; want ErrDenied naming the policy", err)
	}
	if got := streamed(rec); strings.Contains(got, "forbidden") {
		t.Errorf("denied tokens were published: %q", got)
	}
	if h := a.History(); len(h) != 1 {
		t.Errorf("history has %d messages; a cut-off response leaves none", len(h))
	}
}

// Phase delta exists only at stream_response; New says so.
func TestDeltaPhaseOnlyAtStreamResponse(t *testing.T) {
	h := Hook{Name: "bad", Stage: StageToolCall, Phase: PhaseDelta, Kind: HookObserver,
		Func: func(context.Context, *Payload) (Verdict, error) { return Verdict{}, nil }}
	_, err := New(Config{Provider: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: "http://127.0.0.1:1"}),
		Layout: flat.Layout{}, Tools: tool.NewRegistry(), Hooks: []Hook{h}})
	if err == nil || !strings.Contains(err.Error(), "phase delta exists only at stage stream_response") {
		t.Fatalf("err = %v; want the delta phase refused at tool_call", err)
	}
}
