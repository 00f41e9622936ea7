package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/anthropic"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/prompt/flat"
	"github.com/strata-agent/strata/tool"
)

// toolRounds authors a script of n responses each asking for one noop call
// (toolu_1 … toolu_n), then a final end_turn answer.
func toolRounds(t *testing.T, n int) []replay.Response {
	t.Helper()
	var script []replay.Response
	for i := 1; i <= n; i++ {
		r, err := replay.ToolCall(llm.APIAnthropic, fmt.Sprintf("toolu_%d", i), "noop", json.RawMessage(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		script = append(script, r)
	}
	final, err := replay.Text(llm.APIAnthropic, "done")
	if err != nil {
		t.Fatal(err)
	}
	return append(script, final)
}

// noopAgent wires an agent with the noop tool to a replay server playing
// script; cfg's Provider, Layout, Tools, Model and Bus are filled in.
func noopAgent(t *testing.T, cfg Config, script []replay.Response) (*Agent, *recorder, *event.Bus, *replay.Server) {
	t.Helper()
	srv, err := replay.NewServer(script...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	bus := event.NewBus()
	rec := &recorder{}
	bus.SubscribeSync(rec.observe)
	cfg.Provider = anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL()})
	cfg.Layout, cfg.Model, cfg.Bus = flat.Layout{}, "test-model", bus
	if cfg.Tools == nil {
		cfg.Tools = tool.NewRegistry(noop{})
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a, rec, bus, srv
}

// The message-loop design: "The counted unit is a continuation round
// (TOOL_CALL -> COMPOSE_REQUEST), not a tool count. Multiple tool calls
// emitted by one provider response consume one round together." and
// "Default: 50. Reaching the bound fires a terminal error whose message makes
// it explicit that prior tool calls may already have completed
// successfully." The Rust agent-loop Turn: "If a limit is reached, a system
// message ([Agent stopped: ...]) is emitted and the loop returns."
func TestContinuationBoundCountsRounds(t *testing.T) {
	for _, tc := range []struct {
		name      string
		maxTurns  int // Config.MaxTurns (0 = DefaultMaxTurns)
		rounds    int // tool rounds the model asks for
		wantErr   bool
		wantCalls int // model calls made
	}{
		{"default allows fifty tool rounds", 0, 50, false, 51},
		{"default stops at the fifty-first round", 0, 51, true, 51},
		{"one allows one round trip", 1, 1, false, 2},
		{"one stops before a second round", 1, 2, true, 2},
		{"three rounds within three", 3, 3, false, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, rec, bus, srv := noopAgent(t, Config{MaxTurns: tc.maxTurns}, toolRounds(t, tc.rounds))
			res, err := a.Prompt(context.Background(), "go")
			bus.Close()
			if got := len(srv.Received()); got != tc.wantCalls {
				t.Errorf("%d model calls; want %d", got, tc.wantCalls)
			}
			if !tc.wantErr {
				if err != nil || res.Rounds != tc.rounds || res.Message.Text() != "done" {
					t.Fatalf("err %v, rounds %d, text %q; want the final answer after %d rounds", err, res.Rounds, res.Message.Text(), tc.rounds)
				}
				return
			}
			if !errors.Is(err, ErrMaxTurns) {
				t.Fatalf("err = %v; want ErrMaxTurns", err)
			}
			var stopped *event.Event
			for i := range rec.ev {
				if rec.ev[i].Kind == event.AgentStopped {
					stopped = &rec.ev[i]
				}
			}
			if stopped == nil || !strings.HasPrefix(stopped.Text, "[Agent stopped: ") || !strings.HasSuffix(stopped.Text, "]") ||
				!strings.Contains(stopped.Text, "may already have completed successfully") {
				t.Fatalf("agent_stopped %+v; want the design's [Agent stopped: …] text saying prior calls may have completed", stopped)
			}
			if m := stopped.Message; m == nil || m.Role != llm.RoleSystem || m.Text() != stopped.Text {
				t.Errorf("agent_stopped message %+v; want a system message with the text", m)
			}
			// The last round's tool ran; its result stays in the history,
			// not sent to the model.
			h := a.History()
			if last := h[len(h)-1]; last.Content[0].Type != llm.BlockToolResult {
				t.Errorf("history ends with %+v; want the executed tool's result", last)
			}
		})
	}
}

// Several tool calls of one response are one round together.
func TestParallelCallsAreOneRound(t *testing.T) {
	two, err := replay.Turn(llm.APIAnthropic, replay.Reply{Blocks: []llm.Block{
		llm.ToolUseBlock("toolu_a", "noop", json.RawMessage(`{}`)), llm.ToolUseBlock("toolu_b", "noop", json.RawMessage(`{}`))}})
	if err != nil {
		t.Fatal(err)
	}
	final, _ := replay.Text(llm.APIAnthropic, "done")
	a, _, bus, _ := noopAgent(t, Config{MaxTurns: 1}, []replay.Response{two, final})
	res, err := a.Prompt(context.Background(), "go")
	bus.Close()
	if err != nil || res.Rounds != 1 || res.Turns != 2 {
		t.Fatalf("err %v, rounds %d, turns %d; want two calls in one round", err, res.Rounds, res.Turns)
	}
}

// echoTool returns its input as its result.
type echoTool struct{}

func (echoTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "echo", Description: "echoes", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}
}
func (echoTool) Run(_ context.Context, _ *tool.Env, in json.RawMessage) (tool.Result, error) {
	return tool.TextResult("ran with " + string(in)), nil
}

// The message-loop design, TOOL_CALL: "transform: rewrite tool arguments
// pre-execution" and "Guard hooks. Run on every approved call, after approval
// has been obtained and before execute." A guard must judge the arguments
// that will actually execute, so transforms run first.
func TestToolCallGuardsJudgeTransformedArguments(t *testing.T) {
	rewrite := func(from, to string) Hook {
		return Hook{Name: "rewrite", Stage: StageToolCall, Phase: PhasePre, Kind: HookTransform,
			Func: func(_ context.Context, p *Payload) (Verdict, error) {
				p.ToolCall.Input = json.RawMessage(strings.ReplaceAll(string(p.ToolCall.Input), from, to))
				return Verdict{}, nil
			}}
	}
	var judged []string
	guard := Hook{Name: "no-secrets", Stage: StageToolCall, Phase: PhasePre, Kind: HookGuard,
		Func: func(_ context.Context, p *Payload) (Verdict, error) {
			judged = append(judged, string(p.ToolCall.Input))
			if strings.Contains(string(p.ToolCall.Input), "secret") {
				return Verdict{Deny: true, Reason: "secret path"}, nil
			}
			return Verdict{}, nil
		}}
	for _, tc := range []struct {
		name      string
		transform Hook
		input     string
		wantGuard string // the input the guard saw
		wantRun   bool
	}{
		{"a transform that makes a call safe lets it run", rewrite("secret", "public"), `{"path":"secret.txt"}`, `{"path":"public.txt"}`, true},
		{"a transform that makes a call unsafe gets it denied", rewrite("public", "secret"), `{"path":"public.txt"}`, `{"path":"secret.txt"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			judged = nil
			call, err := replay.ToolCall(llm.APIAnthropic, "toolu_1", "echo", json.RawMessage(tc.input))
			if err != nil {
				t.Fatal(err)
			}
			final, _ := replay.Text(llm.APIAnthropic, "done")
			a, rec, bus, _ := noopAgent(t, Config{Tools: tool.NewRegistry(echoTool{}), Hooks: []Hook{guard, tc.transform}},
				[]replay.Response{call, final})
			if _, err := a.Prompt(context.Background(), "go"); err != nil {
				t.Fatal(err)
			}
			bus.Close()
			if len(judged) != 1 || judged[0] != tc.wantGuard {
				t.Errorf("guard judged %q; want %q", judged, tc.wantGuard)
			}
			var end *event.Event
			for i := range rec.ev {
				if rec.ev[i].Kind == event.ToolExecutionEnd {
					end = &rec.ev[i]
				}
			}
			ran := end != nil && strings.HasPrefix(resultText(end.ToolResult), "ran with ")
			if ran != tc.wantRun {
				t.Fatalf("tool result %+v; want ran=%v", end.ToolResult, tc.wantRun)
			}
			if ran && resultText(end.ToolResult) != "ran with "+tc.wantGuard {
				t.Errorf("ran %q; want the transformed input %s", resultText(end.ToolResult), tc.wantGuard)
			}
		})
	}
}

// resultText is the text of a tool_result block's first content block.
func resultText(b *llm.Block) string {
	if b == nil || len(b.Content) == 0 {
		return ""
	}
	return b.Content[0].Text
}
