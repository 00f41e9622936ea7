package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/tool"
)

// A state machine's Authority decides a call in place of the mode gate
// (docs/workflows.md, "authority"): what it approves runs in ask mode with
// no approver, what it denies is denied with its reason, the mode gate is
// never consulted, and guard hooks still judge what it approves.
func TestAuthorityReplacesTheModeGate(t *testing.T) {
	echo := tool.Typed("echo", "Echo.", tool.Traits{}, func(_ context.Context, _ tool.Call, in verdict) (verdict, error) { return in, nil })
	guard := Hook{Name: "no-reason-x", Stage: StageToolCall, Phase: PhasePre, Kind: HookGuard, Func: func(_ context.Context, p *Payload) (Verdict, error) {
		return Verdict{Deny: strings.Contains(string(p.ToolCall.Input), `"x"`), Reason: "reason x is refused"}, nil
	}}
	for _, c := range []struct {
		name, input, deny, want string
	}{
		{"approved", `{"ok":true,"reason":"r"}`, "", event.ToolSucceeded},
		{"denied by the authority", `{"ok":true,"reason":"r"}`, "GrantDenied: not in the stage", event.ToolDenied},
		{"approved, denied by a guard", `{"ok":true,"reason":"x"}`, "", event.ToolDenied},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, rec, bus, _ := newAgent(t, 5,
				must(replay.ToolCall(llm.APIAnthropic, "call_1", "echo", json.RawMessage(c.input))),
				must(replay.Text(llm.APIAnthropic, "ok")))
			a.eng.cfg.Mode, a.eng.cfg.Approver = ModeAsk, nil
			o := Overrides{Extra: []tool.Tool{echo}, Hooks: []Hook{guard}, Authority: func(call llm.Block) (string, string) {
				if c.deny != "" {
					return "", c.deny
				}
				return "stage: allowedTools", ""
			}}
			if _, err := a.PromptWithOverrides(context.Background(), "echo", nil, o); err != nil {
				t.Fatal(err)
			}
			bus.Close()
			var outcome, text string
			for _, e := range rec.ev {
				switch e.Kind {
				case event.ToolCallModeInvoked:
					t.Errorf("the mode gate was consulted: %s", e.Text)
				case event.ToolCallApproved:
					text = e.Text
				case event.ToolExecutionEnd:
					outcome = e.Outcome
					if c.deny != "" && !strings.Contains(e.ToolResult.Content[0].Text+e.ToolResult.Text, c.deny) {
						t.Errorf("the denial's tool_result %+v does not carry the authority's reason", e.ToolResult)
					}
				}
			}
			if outcome != c.want {
				t.Errorf("outcome %q; want %q", outcome, c.want)
			}
			if c.want == event.ToolSucceeded && text != "stage: allowedTools" {
				t.Errorf("ToolCallApproved by %q; want the authority's", text)
			}
		})
	}
}
