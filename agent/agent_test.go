package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/demo"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/anthropic"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/prompt/flat"
	"github.com/strata-agent/strata/tool"
)

// recorder collects events in order.
type recorder struct {
	mu sync.Mutex
	ev []event.Event
}

func (r *recorder) observe(e event.Event) { r.mu.Lock(); r.ev = append(r.ev, e); r.mu.Unlock() }

// triggers returns the triggers of the recorded TurnStart events, space-separated.
func (r *recorder) triggers() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.ev {
		if e.Kind == event.TurnStart {
			out = append(out, string(e.Trigger))
		}
	}
	return strings.Join(out, " ")
}

func (r *recorder) kinds() []string {
	var out []string
	for _, e := range r.ev {
		switch e.Kind {
		case event.MessageUpdate, event.ToolExecutionUpdate:
		case event.StagePreFired:
			out = append(out, "pre:"+e.Stage)
		case event.StagePostFired:
			out = append(out, "post:"+e.Stage+":"+e.Outcome)
		default:
			out = append(out, string(e.Kind))
		}
	}
	return out
}

// lastServer is the replay server of the latest newAgent call.
var lastServer *replay.Server

// newAgent wires an agent to a replay server playing script, with the real
// built-in tools rooted in a temp workspace.
func newAgent(t *testing.T, maxTurns int, script ...replay.Response) (*Agent, *recorder, *event.Bus, string) {
	t.Helper()
	srv, err := replay.NewServer(script...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	lastServer = srv
	ws := t.TempDir()
	bus := event.NewBus()
	rec := &recorder{}
	bus.Subscribe(rec.observe)
	a, err := New(Config{
		Provider: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL()}),
		Layout:   flat.Layout{},
		Tools:    tool.NewRegistry(tool.Builtins()...),
		Env:      &tool.Env{Workdir: ws},
		Model:    "test-model",
		MaxTurns: maxTurns,
		Bus:      bus,
	})
	if err != nil {
		t.Fatal(err)
	}
	return a, rec, bus, ws
}

// demoUsage sums the usage the demo's SSE files report, read independently
// of the provider: input side from message_start, output from message_delta.
func demoUsage(t *testing.T, script []replay.Response) llm.Usage {
	var sum llm.Usage
	for _, r := range script {
		sc := bufio.NewScanner(bytes.NewReader(r.Body))
		for sc.Scan() {
			payload, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var ev struct {
				Type    string `json:"type"`
				Message struct {
					Usage map[string]int64 `json:"usage"`
				} `json:"message"`
				Usage map[string]int64 `json:"usage"`
			}
			if err := json.Unmarshal([]byte(payload), &ev); err != nil {
				t.Fatal(err)
			}
			switch ev.Type {
			case "message_start":
				u := ev.Message.Usage
				sum.Input += u["input_tokens"]
				sum.CacheRead += u["cache_read_input_tokens"]
				sum.CacheWrite += u["cache_creation_input_tokens"]
			case "message_delta":
				sum.Output += ev.Usage["output_tokens"]
			}
		}
	}
	return sum.WithTotal()
}

// The demo session drives three model calls; the glob and fs_read calls run
// for real in the workspace and their results go back to the model.
func TestPromptRunsToolsAndOrdersEvents(t *testing.T) {
	script, err := demo.Script()
	if err != nil {
		t.Fatal(err)
	}
	a, rec, bus, ws := newAgent(t, 0, script...)
	os.WriteFile(filepath.Join(ws, "README.md"), []byte("# hello from the workspace\nsecond line\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n"), 0o644)

	res, err := a.Prompt(context.Background(), "what is in this directory?")
	bus.Close()
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != 3 || res.StopReason != llm.StopEndTurn {
		t.Fatalf("turns=%d stop=%s; want 3 end_turn", res.Turns, res.StopReason)
	}
	if want := demoUsage(t, script); res.Usage != want || a.Usage() != want {
		t.Errorf("usage %+v, want the sum of the recorded usage %+v", res.Usage, want)
	}
	h := a.History()
	if len(h) != 6 {
		t.Fatalf("history has %d messages, want user, assistant, tool results ×2, final", len(h))
	}
	globResult := h[2].Content[0]
	if globResult.Type != llm.BlockToolResult || globResult.IsError ||
		!strings.Contains(globResult.Content[0].Text, "README.md") || !strings.Contains(globResult.Content[0].Text, "main.go") {
		t.Errorf("glob result does not list the workspace: %+v", globResult)
	}
	readResult := h[4].Content[0]
	if readResult.IsError || !strings.Contains(readResult.Content[0].Text, "hello from the workspace") {
		t.Errorf("fs_read result does not hold README.md: %+v", readResult)
	}
	// The message-loop design: "Every turn-stage transition emits an event
	// on the event bus: StagePreFired{stage, turnId, correlationId} — just
	// before the stage body runs. StagePostFired{stage, turnId,
	// correlationId, outcome} — after the stage body completes.
	// SessionTurnStart, SessionTurnEnd — bracket the whole turn."
	// SessionTurnStart is a RECEIVE_INPUT responsibility, RENDER hands the
	// render payload to the UIs (docs/loop.md, rule 12).
	want := []string{"pre:receive_input", "session_turn_start", "post:receive_input:ok"}
	turn := func(input bool, tools bool) {
		want = append(want, "turn_start")
		if input {
			want = append(want, "message_start", "message_end")
		}
		want = append(want, "pre:compose_request", "post:compose_request:ok",
			"pre:send_request", "provider_request", "post:send_request:ok",
			"pre:stream_response", "message_start", "message_end", "provider_response", "post:stream_response:ok")
		if tools {
			want = append(want, "pre:tool_call", "tool_invocation_proposed", "tool_call_mode_invoked", "tool_call_approved",
				"tool_execution_start", "tool_execution_end", "post:tool_call:ok")
		}
		want = append(want, "turn_end")
	}
	turn(true, true)
	turn(false, true)
	turn(false, false)
	want = append(want, "pre:render", "render", "post:render:ok", "session_turn_end")
	if got := rec.kinds(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("event order:\n got  %v\n want %v", got, want)
	}
	var text strings.Builder
	for i, e := range rec.ev {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
		if e.CorrelationID != rec.ev[0].CorrelationID {
			t.Fatalf("event %d has another correlation id", i)
		}
		if e.Kind == event.MessageUpdate && e.Delta.Type == llm.DeltaText && e.Turn.Index == 2 {
			text.WriteString(e.Delta.Text)
		}
	}
	if text.String() != res.Message.Text() {
		t.Errorf("streamed text %q != final text %q", text.String(), res.Message.Text())
	}
}

// The continuation limit ends the turn with an explicit event and error after
// the tool calls already made have run: with max turns 1 the demo's first
// tool round-trip happens, its second round does not.
func TestMaxTurnsStopsExplicitly(t *testing.T) {
	script, _ := demo.Script()
	a, rec, bus, _ := newAgent(t, 1, script...)
	_, err := a.Prompt(context.Background(), "list")
	bus.Close()
	if !errors.Is(err, ErrMaxTurns) {
		t.Fatalf("err = %v, want ErrMaxTurns", err)
	}
	var stopped *event.Event
	for i := range rec.ev {
		if rec.ev[i].Kind == event.AgentStopped {
			stopped = &rec.ev[i]
		}
	}
	if stopped == nil || !strings.Contains(stopped.Text, "max turns 1 reached") {
		t.Fatalf("no agent_stopped event naming the limit: %+v", stopped)
	}
	if !errors.Is(stopped.Err, ErrMaxTurns) || stopped.Error != stopped.Err.Error() {
		t.Errorf("agent_stopped Err %v, Error %q; want ErrMaxTurns and its text", stopped.Err, stopped.Error)
	}
	if h := a.History(); len(h) != 5 || h[4].Content[0].Type != llm.BlockToolResult {
		t.Errorf("history should end with the executed tool's result: %d messages", len(h))
	}
}

// A provider error or a stream cut mid-event leaves no assistant message in
// the history: nothing half-accepted.
func TestFailedCallLeavesNoHalfTurn(t *testing.T) {
	script, _ := demo.Script()
	cut := script[0]
	cut.CutAfter = len(cut.Body) / 2
	for name, resp := range map[string]replay.Response{
		"cut stream": cut,
		"http 529":   {Status: 529, Body: []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)},
	} {
		t.Run(name, func(t *testing.T) {
			a, rec, bus, _ := newAgent(t, 0, resp)
			_, err := a.Prompt(context.Background(), "hi")
			bus.Close()
			if err == nil {
				t.Fatal("want an error")
			}
			if h := a.History(); len(h) != 1 || h[0].Role != llm.RoleUser {
				t.Errorf("history after failure: %+v", h)
			}
			last := rec.ev[len(rec.ev)-1]
			if last.Kind != event.SessionTurnEnd || last.Error == "" {
				t.Errorf("last event %s error %q", last.Kind, last.Error)
			}
			// The error reaches observers as a value: the provider_error,
			// turn_end and session_turn_end events carry the loop's error.
			for _, e := range rec.ev {
				switch e.Kind {
				case event.ProviderError, event.TurnEnd, event.SessionTurnEnd:
					if !errors.Is(err, e.Err) || e.Error != e.Err.Error() {
						t.Errorf("%s event: Err %v, Error %q; want the returned error %v", e.Kind, e.Err, e.Error, err)
					}
				}
			}
			var apiErr *llm.APIError
			if name == "http 529" && (!errors.As(last.Err, &apiErr) || apiErr.StatusCode != 529 || apiErr.Type != "overloaded_error") {
				t.Errorf("session_turn_end Err = %v, want APIError 529 overloaded_error", last.Err)
			}
			if name == "cut stream" && !errors.Is(last.Err, llm.ErrStreamTruncated) {
				t.Errorf("session_turn_end Err = %v, want llm.ErrStreamTruncated", last.Err)
			}
		})
	}
}
