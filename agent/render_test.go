package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// The message-loop design, RENDER: "transform: rewrite the render payload
// (e.g., mask sensitive spans)" and "Hand the render payload to the UI
// subscriber set via the event bus". A render transform's mask reaches the
// Render event and the Result; the history keeps what the model said.
func TestRenderTransformMasksThePayload(t *testing.T) {
	a, rec, bus, _ := newAgent(t, 5, must(replay.Text(llm.APIAnthropic, "Your key is sk-live-1234, keep it safe.")))
	a.eng.cfg.Hooks = []Hook{{Name: "mask", Stage: StageRender, Phase: PhasePre, Kind: HookTransform,
		Func: func(_ context.Context, p *Payload) (Verdict, error) {
			for i, b := range p.Response.Message.Content {
				p.Response.Message.Content[i].Text = strings.ReplaceAll(b.Text, "sk-live-1234", "[masked]")
			}
			return Verdict{}, nil
		}}}
	res, err := a.Prompt(context.Background(), "what is my key?")
	if err != nil {
		t.Fatal(err)
	}
	bus.Close()
	want := "Your key is [masked], keep it safe."
	if got := res.Message.Text(); got != want {
		t.Errorf("result %q; want the masked render payload %q", got, want)
	}
	var rendered []string
	for _, e := range rec.ev {
		if e.Kind == event.Render {
			rendered = append(rendered, e.Message.Text())
		}
	}
	if len(rendered) != 1 || rendered[0] != want {
		t.Errorf("render events %q; want one carrying %q", rendered, want)
	}
	if h := a.History(); h[len(h)-1].Text() != "Your key is sk-live-1234, keep it safe." {
		t.Errorf("history %q; the model's own message must stay", h[len(h)-1].Text())
	}
}

// Every stage has its pre and post hook points, and stream_response its
// delta point (docs/loop.md, rule 8): an observer at each fires in a
// prompt with a tool call.
func TestEveryStageHookPointFires(t *testing.T) {
	a, _, _, _ := newAgent(t, 5,
		must(replay.ToolCall(llm.APIAnthropic, "c1", "glob", json.RawMessage(`{"pattern":"*"}`))),
		must(replay.Text(llm.APIAnthropic, "done")))
	fired := map[string]int{}
	stages := []Stage{StageReceiveInput, StageComposeRequest, StageSendRequest, StageStreamResponse, StageToolCall, StageRender}
	for _, st := range stages {
		for _, ph := range []Phase{PhasePre, PhasePost} {
			a.eng.cfg.Hooks = append(a.eng.cfg.Hooks, Hook{Name: string(st) + "/" + string(ph), Stage: st, Phase: ph, Kind: HookObserver,
				Func: func(_ context.Context, p *Payload) (Verdict, error) {
					fired[string(p.Stage)+"/"+string(p.Phase)]++
					return Verdict{}, nil
				}})
		}
	}
	a.eng.cfg.Hooks = append(a.eng.cfg.Hooks, Hook{Name: "delta", Stage: StageStreamResponse, Phase: PhaseDelta, Kind: HookObserver,
		Func: func(_ context.Context, p *Payload) (Verdict, error) {
			fired["stream_response/delta"]++
			return Verdict{}, nil
		}})
	if _, err := a.Prompt(context.Background(), "list"); err != nil {
		t.Fatal(err)
	}
	for _, st := range stages {
		for _, ph := range []string{"pre", "post"} {
			if fired[string(st)+"/"+ph] == 0 {
				t.Errorf("hook point %s %s never fired", st, ph)
			}
		}
	}
	if fired["stream_response/delta"] == 0 {
		t.Error("hook point stream_response delta never fired")
	}
}
