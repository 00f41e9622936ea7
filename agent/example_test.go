package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt/flat"
	"github.com/strata-agent/strata/tool"
)

// scripted is a custom llm.Provider: it answers the first request with a
// tool call and the second with text. Any type with Name, API and Stream is
// a provider; the loop needs nothing else of it.
type scripted struct{ calls int }

func (*scripted) Name() string { return "scripted" }
func (*scripted) API() llm.API { return llm.APIAnthropic }
func (p *scripted) Stream(_ context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	p.calls++
	if p.calls == 1 {
		call := llm.ToolUseBlock("call_1", "shout", json.RawMessage(`{"text":"hello"}`))
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{call}}, StopReason: llm.StopToolUse}, nil
	}
	last := req.Messages[len(req.Messages)-1].Content[0].Content[0].Text
	if onDelta != nil {
		onDelta(llm.Delta{Type: llm.DeltaText, Text: "The tool said " + last})
	}
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("The tool said " + last)}}, StopReason: llm.StopEndTurn}, nil
}

type shoutIn struct {
	Text string `json:"text"`
}

var shout = tool.Typed("shout", "Upper-case a text.", tool.Traits{Effect: tool.ReadOnly},
	func(_ context.Context, _ tool.Call, in shoutIn) (string, error) { return strings.ToUpper(in.Text), nil })

// Drive the loop by hand with the step API: the engine says what to do
// next, the program does it and hands the outcome back. Between any two
// steps the State can be encoded to JSON and stored; an engine built from
// the same configuration continues it (docs/architecture.md).
func ExampleEngine() {
	provider := &scripted{}
	cfg := agent.Config{Provider: provider, Layout: flat.Layout{}, Tools: tool.NewRegistry(shout), Model: "m"}
	e, err := agent.NewEngine(cfg, nil)
	if err != nil {
		log.Fatal(err)
	}
	s, err := e.NewState("loop-1", nil, 0, nil)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	step := e.Start(ctx, s, "Shout hello.", nil)
	for step.Kind != agent.StepDone {
		if _, err := json.Marshal(s); err != nil { // a checkpoint a durable driver would store
			log.Fatal(err)
		}
		fmt.Println(step.Kind)
		switch step.Kind {
		case agent.StepSend:
			resp, err := provider.Stream(ctx, step.Request, func(d llm.Delta) { _ = e.Delta(ctx, s, d) })
			step = e.Responded(ctx, s, resp, err)
		case agent.StepRunTool:
			step = e.ToolDone(ctx, s, e.RunTool(ctx, step))
		case agent.StepApprove:
			step = e.Approved(ctx, s, agent.AllowOnce, nil)
		}
	}
	fmt.Println(step.Result.Message.Text(), step.Err)
	// Output:
	// send
	// run_tool
	// send
	// The tool said "HELLO" <nil>
}

// An approver and a guard hook: in ask mode every call goes to the
// Approver; a guard at tool_call pre may still deny what was approved.
func ExampleApproverFunc() {
	approver := agent.ApproverFunc(func(_ context.Context, req agent.ApprovalRequest) (agent.Decision, error) {
		fmt.Println("asked about", req.Call.Name, string(req.Call.Input))
		return agent.AllowOnce, nil
	})
	noSecrets := agent.Hook{Name: "no-secrets", Stage: agent.StageToolCall, Phase: agent.PhasePre, Kind: agent.HookGuard,
		Func: func(_ context.Context, p *agent.Payload) (agent.Verdict, error) {
			if strings.Contains(string(p.ToolCall.Input), "secret") {
				return agent.Verdict{Deny: true, Reason: "mentions a secret"}, nil
			}
			return agent.Verdict{}, nil
		}}
	a, err := agent.New(agent.Config{Provider: &scripted{}, Layout: flat.Layout{}, Tools: tool.NewRegistry(shout), Model: "m",
		Mode: agent.ModeAsk, Approver: approver, Hooks: []agent.Hook{noSecrets}})
	if err != nil {
		log.Fatal(err)
	}
	res, err := a.Prompt(context.Background(), "Shout hello.")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Message.Text())
	// Output:
	// asked about shout {"text":"hello"}
	// The tool said "HELLO"
}

// Read the loop's events from its bus: here the turn starts and the tool
// calls, inline (SubscribeSync); Subscribe delivers on a goroutine of the
// observer's own.
func ExampleConfig_events() {
	bus := event.NewBus()
	bus.SubscribeSync(func(e event.Event) {
		switch e.Kind {
		case event.TurnStart:
			fmt.Println("turn", e.Turn.Index, e.Trigger)
		case event.ToolExecutionEnd:
			fmt.Println("tool", e.ToolCall.Name, e.Outcome)
		}
	})
	a, err := agent.New(agent.Config{Provider: &scripted{}, Layout: flat.Layout{}, Tools: tool.NewRegistry(shout), Model: "m", Bus: bus})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := a.Prompt(context.Background(), "Shout hello."); err != nil {
		log.Fatal(err)
	}
	// Output:
	// turn 0 user
	// tool shout succeeded
	// turn 1 continuation
}
