package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/demo"
	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/anthropic"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/prompt/flat"
	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/tool"
)

// entityTool answers pydantic-ai's retrieve_entity_info calls from the
// recorded cassette's own tool results, so the second recorded request is
// what the loop sends back.
type entityTool struct {
	mu    sync.Mutex
	calls []string
}

var entities = map[string]string{
	"Alice": "alice is bob's wife", "Bob": "bob is alice's husband",
	"Charlie": "charlie is alice's son", "Daisy": "daisy is bob's daughter and charlie's younger sister",
}

func (e *entityTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "retrieve_entity_info", Description: "Get the knowledge about the given entity.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}
}

func (e *entityTool) Run(_ context.Context, _ *tool.Env, in json.RawMessage) (tool.Result, error) {
	var v struct{ Name string }
	if err := json.Unmarshal(in, &v); err != nil {
		return tool.Result{}, err
	}
	e.mu.Lock()
	e.calls = append(e.calls, v.Name)
	e.mu.Unlock()
	return tool.TextResult(entities[v.Name]), nil
}

// parallelAgent replays the real cassette with four parallel tool_use calls
// (pydantic-ai test_multiple_parallel_tool_calls) through the real Anthropic
// SDK, non-streaming as recorded.
func parallelAgent(t *testing.T, cfg Config) (*Agent, *recorder, *event.Bus, *entityTool, *replay.Server) {
	t.Helper()
	ins, err := replay.Cassette(shared.Path(t, "data/wire/pydantic-ai/cassettes/test_anthropic/test_multiple_parallel_tool_calls.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var script []replay.Response
	for _, in := range ins {
		script = append(script, in.Response)
	}
	srv, err := replay.NewServer(script...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	bus := event.NewBus()
	rec := &recorder{}
	bus.SubscribeSync(rec.observe)
	et := &entityTool{}
	cfg.Provider = anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL(), NonStreaming: true})
	cfg.Layout, cfg.Tools, cfg.Model, cfg.Bus = flat.Layout{}, tool.NewRegistry(et), "claude-haiku-4-5", bus
	cfg.Env = &tool.Env{Workdir: t.TempDir()}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a, rec, bus, et, srv
}

// scripted answers approvals from a list and records what it was asked.
type scripted struct {
	answers []Decision
	asked   []string
}

func (s *scripted) Approve(_ context.Context, r ApprovalRequest) (Decision, error) {
	var v struct{ Name string }
	json.Unmarshal(r.Call.Input, &v)
	s.asked = append(s.asked, fmt.Sprintf("%d:%s", r.Index, v.Name))
	d := s.answers[0]
	s.answers = s.answers[1:]
	return d, nil
}

func toolEvents(rec *recorder) []string {
	var out []string
	for _, e := range rec.ev {
		switch e.Kind {
		case event.ToolCallApproved, event.ToolCallDenied, event.ToolExecutionStart, event.ToolExecutionEnd:
			var v struct{ Name string }
			json.Unmarshal(e.ToolCall.Input, &v)
			out = append(out, string(e.Kind)+":"+v.Name)
		}
	}
	return out
}

// Mode ask with a scripted approver: the four parallel calls are asked in
// call order (allow_always on Charlie covers Daisy), a rejection becomes an
// is_error tool_result with the reason, and the approved calls run in order.
func TestAskApprovalsInCallOrder(t *testing.T) {
	ap := &scripted{answers: []Decision{AllowOnce, RejectOnce, AllowAlways}}
	a, rec, bus, et, srv := parallelAgent(t, Config{Mode: ModeAsk, Approver: ap})
	res, err := a.Prompt(context.Background(), "Who is the youngest?")
	bus.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ap.asked, " "); got != "0:Alice 1:Bob 2:Charlie" {
		t.Errorf("asked %q; want Alice, Bob, Charlie in call order (Daisy allowed always)", got)
	}
	want := "tool_call_approved:Alice tool_call_denied:Bob tool_call_approved:Charlie tool_call_approved:Daisy " +
		"tool_execution_start:Alice tool_execution_end:Alice tool_execution_end:Bob tool_execution_start:Charlie " +
		"tool_execution_end:Charlie tool_execution_start:Daisy tool_execution_end:Daisy"
	if got := strings.Join(toolEvents(rec), " "); got != want {
		t.Errorf("tool events:\n got  %s\n want %s", got, want)
	}
	if got := strings.Join(et.calls, ","); got != "Alice,Charlie,Daisy" {
		t.Errorf("tools ran for %s", got)
	}
	// The second request carries the four results in call order; Bob's is
	// the denial.
	var body struct {
		Messages []struct {
			Content []struct {
				Type      string `json:"type"`
				ToolUseID string `json:"tool_use_id"`
				IsError   bool   `json:"is_error"`
				Content   []struct{ Text string }
			}
		}
	}
	reqs := srv.Received()
	if len(reqs) != 2 {
		t.Fatalf("%d requests; want 2", len(reqs))
	}
	json.Unmarshal(reqs[1].Body, &body)
	results := body.Messages[len(body.Messages)-1].Content
	if len(results) != 4 || !results[1].IsError || !strings.Contains(results[1].Content[0].Text, "rejected by the user") ||
		results[3].Content[0].Text != entities["Daisy"] {
		t.Errorf("tool results sent back: %+v", results)
	}
	// Usage: the sum of the two recorded responses (423+771 in, 202+77 out).
	if res.Usage.Input != 1194 || res.Usage.Output != 279 || res.Turns != 2 {
		t.Errorf("usage %+v over %d turns", res.Usage, res.Turns)
	}
}

// A guard hook's deny beats an allowlist allow: every call is pre-approved,
// the guard refuses Charlie, and Charlie's result carries the hook's reason.
func TestGuardDenyBeatsAllowlist(t *testing.T) {
	guard := Hook{Name: "no-charlie", Stage: StageToolCall, Phase: PhasePre, Kind: HookGuard,
		Func: func(_ context.Context, p *Payload) (Verdict, error) {
			if strings.Contains(string(p.ToolCall.Input), "Charlie") {
				return Verdict{Deny: true, Reason: "Charlie is off limits"}, nil
			}
			return Verdict{}, nil
		}}
	var observed []string
	observer := Hook{Name: "log", Stage: StageToolCall, Phase: PhasePost, Kind: HookObserver,
		Func: func(_ context.Context, p *Payload) (Verdict, error) {
			observed = append(observed, p.ToolResult.Content[0].Text)
			return Verdict{}, nil
		}}
	a, rec, bus, et, _ := parallelAgent(t, Config{Mode: ModeAllowlist, Hooks: []Hook{guard, observer},
		PreApproved: func(llm.Block) bool { return true }})
	if _, err := a.Prompt(context.Background(), "Who is the youngest?"); err != nil {
		t.Fatal(err)
	}
	bus.Close()
	if got := strings.Join(et.calls, ","); got != "Alice,Bob,Daisy" {
		t.Errorf("tools ran for %s; want Charlie refused", got)
	}
	var denied *event.Event
	for i := range rec.ev {
		if rec.ev[i].Kind == event.ToolCallDenied {
			denied = &rec.ev[i]
		}
	}
	if denied == nil || !strings.Contains(denied.Text, "no-charlie") || !strings.Contains(denied.Text, "Charlie is off limits") {
		t.Fatalf("denial event %+v", denied)
	}
	if len(observed) != 3 {
		t.Errorf("post observer saw %d results; want 3", len(observed))
	}
	r := a.History()[2].Content[2]
	if !r.IsError || !strings.Contains(r.Content[0].Text, "Charlie is off limits") {
		t.Errorf("Charlie's result %+v", r)
	}
}

// The agent's tools are step 1: a tool outside them is never offered and a
// call to it is denied without asking.
func TestAllowedToolsFirst(t *testing.T) {
	ap := &scripted{}
	a, _, bus, et, srv := parallelAgent(t, Config{Mode: ModeAsk, Approver: ap, AllowedTool: func(string) bool { return false }})
	if _, err := a.Prompt(context.Background(), "Who is the youngest?"); err != nil {
		t.Fatal(err)
	}
	bus.Close()
	if len(ap.asked) != 0 || len(et.calls) != 0 {
		t.Errorf("asked %v, ran %v", ap.asked, et.calls)
	}
	if strings.Contains(string(srv.Received()[0].Body), "retrieve_entity_info") {
		t.Error("a tool outside the agent's tools was offered to the model")
	}
}

// A transform at receive_input rewrites the prompt; a guard at send_request
// denies the request and ends the user turn with ErrDenied.
func TestStageHooks(t *testing.T) {
	transform := Hook{Name: "tag", Stage: StageReceiveInput, Phase: PhasePre, Kind: HookTransform,
		Func: func(_ context.Context, p *Payload) (Verdict, error) {
			*p.Input = "[tagged] " + *p.Input
			return Verdict{}, nil
		}}
	a, _, bus, _, srv := parallelAgent(t, Config{Hooks: []Hook{transform}})
	if _, err := a.Prompt(context.Background(), "Who is the youngest?"); err != nil {
		t.Fatal(err)
	}
	bus.Close()
	if !strings.Contains(string(srv.Received()[0].Body), "[tagged] Who is the youngest?") {
		t.Error("transformed input not sent")
	}
	guard := Hook{Name: "budget", Stage: StageSendRequest, Phase: PhasePre, Kind: HookGuard,
		Func: func(context.Context, *Payload) (Verdict, error) {
			return Verdict{Deny: true, Reason: "over budget"}, nil
		}}
	a, rec, bus, _, srv := parallelAgent(t, Config{Hooks: []Hook{guard}})
	_, err := a.Prompt(context.Background(), "hi")
	bus.Close()
	if !errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), "over budget") || len(srv.Received()) != 0 {
		t.Fatalf("err %v, %d requests sent", err, len(srv.Received()))
	}
	if last := rec.ev[len(rec.ev)-1]; last.Kind != event.SessionTurnEnd || !errors.Is(last.Err, ErrDenied) || last.Error != err.Error() {
		t.Errorf("last event %+v; want session_turn_end with ErrDenied", last)
	}
}

// Limits are checked before before_turn: a session token cap stops the loop
// with a terminal AgentStopped event; a failing before_turn aborts the turn
// before any request.
func TestLimitsAndBeforeTurn(t *testing.T) {
	var infos []TurnInfo
	var records []TurnRecord
	a, rec, bus, _, _ := parallelAgent(t, Config{MaxSessionTokens: 100,
		BeforeTurn: func(_ context.Context, i TurnInfo) error { infos = append(infos, i); return nil },
		AfterTurn:  func(_ context.Context, r TurnRecord) { records = append(records, r) }})
	_, err := a.Prompt(context.Background(), "Who is the youngest?")
	bus.Close()
	if !errors.Is(err, ErrTokenLimit) {
		t.Fatalf("err = %v; want ErrTokenLimit", err)
	}
	if len(infos) != 1 || len(records) != 1 || records[0].Usage.Total != 625 || len(records[0].ToolResults) != 4 {
		t.Errorf("before_turn %d, after_turn %+v", len(infos), records)
	}
	kinds := rec.kinds()
	if kinds[len(kinds)-2] != string(event.AgentStopped) || !strings.Contains(rec.ev[len(rec.ev)-2].Text, "session token limit 100") {
		t.Errorf("events end %v", kinds[len(kinds)-3:])
	}
	if stop := rec.ev[len(rec.ev)-2]; !errors.Is(stop.Err, ErrTokenLimit) {
		t.Errorf("agent_stopped Err = %v; want ErrTokenLimit", stop.Err)
	}

	a, _, bus, _, srv := parallelAgent(t, Config{BeforeTurn: func(context.Context, TurnInfo) error { return errors.New("maintenance") }})
	_, err = a.Prompt(context.Background(), "hi")
	bus.Close()
	if !errors.Is(err, ErrAborted) || len(srv.Received()) != 0 {
		t.Errorf("err %v, %d requests", err, len(srv.Received()))
	}
}

// A steering message sent while a tool runs goes into the next request; a
// follow-up queued runs as another user turn after the model stops.
func TestSteeringAndFollowUp(t *testing.T) {
	script, err := demo.Script()
	if err != nil {
		t.Fatal(err)
	}
	script = append(script, script[len(script)-1]) // the follow-up's answer
	a, rec, bus, ws := newAgent(t, 0, script...)
	_ = ws
	steer := Hook{Name: "steer", Stage: StageToolCall, Phase: PhasePost, Kind: HookObserver,
		Func: func(context.Context, *Payload) (Verdict, error) {
			a.Steer("Only list Go files.")
			return Verdict{}, nil
		}}
	a.eng.cfg.Hooks = []Hook{steer}
	a.FollowUp("Thanks, now summarise.")
	srv := lastServer
	if _, err := a.Prompt(context.Background(), "what is in this directory?"); err != nil {
		t.Fatal(err)
	}
	bus.Close()
	reqs := srv.Received()
	if len(reqs) != 4 {
		t.Fatalf("%d requests; want 4 (3 demo calls + follow-up)", len(reqs))
	}
	if strings.Contains(string(reqs[0].Body), "Only list Go files.") || !strings.Contains(string(reqs[1].Body), "Only list Go files.") {
		t.Error("steering message not injected before the next model call")
	}
	if !strings.Contains(string(reqs[3].Body), "Thanks, now summarise.") {
		t.Error("follow-up not sent")
	}
	// The Rust agent-loop Turn: "Continuation: tool round-trip, steering
	// message"; the follow-up's turn has its own trigger (event.TriggerFollowUp).
	if got := rec.triggers(); got != "user continuation continuation follow_up" {
		t.Errorf("triggers %s", got)
	}
}

// Cancelling mid-stream stops the provider promptly, and the turn fails
// without an assistant message.
func TestCancelMidStream(t *testing.T) {
	script, _ := demo.Script()
	slow := script[0]
	slow.Delay = 50 * time.Millisecond
	a, rec, bus, _ := newAgent(t, 0, slow)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			time.Sleep(5 * time.Millisecond)
			rec.mu.Lock()
			n := len(rec.ev)
			rec.mu.Unlock()
			if n > 0 {
				break
			}
		}
		time.Sleep(80 * time.Millisecond)
		cancel()
	}()
	st, err := session.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sess, _ := st.CreateSession(t.Context(), session.SessionMeta{})
	rs := session.NewRecorder(st, sess.ID)
	bus.SubscribeSync(rs.Observer())
	_, err = a.Prompt(ctx, "hi")
	bus.Close()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want context.Canceled", err)
	}
	if h := a.History(); len(h) != 1 {
		t.Errorf("history after cancel: %d messages", len(h))
	}
	// The store holds the failed turn with its input and no assistant
	// message: no half turn.
	d, err := st.LoadSession(t.Context(), sess.ID)
	if err != nil || rs.Err() != nil {
		t.Fatal(err, rs.Err())
	}
	if len(d.Turns) != 1 || d.Turns[0].Status != session.TurnFailed {
		t.Fatalf("turns after cancel: %+v", d.Turns)
	}
	for _, m := range d.Messages {
		if m.Role == llm.RoleAssistant {
			t.Errorf("stored assistant message after a cancelled stream: %+v", m)
		}
	}
}

// use_subagent runs a child loop on the same bus: the child's first turn is
// triggered by sub_agent, and the parent's tool_execution_end and
// tool_result name the child loop.
func TestSubAgent(t *testing.T) {
	u := llm.Usage{Input: 10, Output: 5}
	call := llm.ToolUseBlock("toolu_sub_1", SubAgentToolName, json.RawMessage(`{"task":"Count the Go files."}`))
	p1, err1 := replay.AnthropicStream("msg_p1", u, llm.StopToolUse, call)
	c1, err2 := replay.AnthropicStream("msg_c1", u, llm.StopEndTurn, llm.TextBlock("There are 3 Go files."))
	p2, err3 := replay.AnthropicStream("msg_p2", u, llm.StopEndTurn, llm.TextBlock("The sub-agent found 3 Go files."))
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	srv, err := replay.NewServer(p1, c1, p2)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	bus := event.NewBus()
	rec := &recorder{}
	bus.SubscribeSync(rec.observe)
	base := Config{Provider: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL()}),
		Layout: flat.Layout{}, Model: "m", Bus: bus}
	childCfg := base
	childCfg.Tools = tool.NewRegistry()
	parentCfg := base
	parentCfg.Tools = tool.NewRegistry(SubAgentTool(func(context.Context, string) (*Agent, error) { return New(childCfg) }))
	parent, err := New(parentCfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := parent.Prompt(context.Background(), "How many Go files?")
	bus.Close()
	if err != nil {
		t.Fatal(err)
	}
	var child string
	var childTrigger event.Trigger
	for _, e := range rec.ev {
		if e.Kind == event.ToolExecutionEnd {
			child = e.ChildLoopID
		}
		if e.Kind == event.TurnStart && e.Turn.LoopID != parent.LoopID() {
			childTrigger = e.Trigger
		}
	}
	result := parent.History()[2].Content[0]
	if child == "" || childTrigger != event.TriggerSubAgent || !strings.Contains(result.Content[0].Text, "There are 3 Go files.") ||
		!strings.Contains(result.Content[0].Text, child) {
		t.Errorf("child loop %q trigger %q result %+v", child, childTrigger, result)
	}
	if res.Message.Text() != "The sub-agent found 3 Go files." {
		t.Errorf("final %q", res.Message.Text())
	}
}
