package agent

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt/flat"
	"github.com/strata-agent/strata/tool"
)

// endTurnModel is an in-memory provider that answers every request with a
// short end_turn text and keeps each request's messages. When hold is set,
// the call with index holdAt says so on entered and waits for release
// before answering.
type endTurnModel struct {
	mu      sync.Mutex
	reqs    [][]llm.Message
	holdAt  int
	entered chan struct{}
	release chan struct{}
	calls   chan struct{} // when set, gets a value (if there is room) at each call
}

func (m *endTurnModel) Name() string { return "scripted" }
func (m *endTurnModel) API() llm.API { return llm.APIAnthropic }
func (m *endTurnModel) requests() [][]llm.Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.reqs)
}

func (m *endTurnModel) Stream(ctx context.Context, req *llm.Request, _ func(llm.Delta)) (*llm.Response, error) {
	m.mu.Lock()
	i := len(m.reqs)
	m.reqs = append(m.reqs, slices.Clone(req.Messages))
	m.mu.Unlock()
	if m.calls != nil {
		select {
		case m.calls <- struct{}{}:
		default:
		}
	}
	if m.entered != nil && i == m.holdAt {
		close(m.entered)
		select {
		case <-m.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock(fmt.Sprintf("answer %d", i))}},
		StopReason: llm.StopEndTurn, Usage: llm.Usage{Input: 10, Output: 2, Total: 12}}, nil
}

// lastUserText is the text of the last user message of msgs.
func lastUserText(msgs []llm.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser {
			var b strings.Builder
			for _, c := range msgs[i].Content {
				b.WriteString(c.Text + "\n")
			}
			return b.String()
		}
	}
	return ""
}

func newSteerAgent(t *testing.T, m *endTurnModel, hooks ...Hook) (*Agent, *recorder, *event.Bus) {
	t.Helper()
	bus := event.NewBus()
	rec := &recorder{}
	bus.Subscribe(rec.observe)
	a, err := New(Config{Provider: m, Layout: flat.Layout{}, Tools: tool.NewRegistry(tool.Builtins()...),
		Env: &tool.Env{Workdir: t.TempDir()}, Model: "test-model", Bus: bus, Hooks: hooks})
	if err != nil {
		t.Fatal(err)
	}
	return a, rec, bus
}

// The Rust agent-loop design: "The inner loop in run_loop continues when
// there are tool calls or pending steering messages; each iteration is one
// turn." A steering message sent while the model gives its final answer
// (no tool calls) makes the loop run one more turn with it, in the same
// prompt, triggered as a continuation.
func TestSteerDuringFinalResponseContinues(t *testing.T) {
	m := &endTurnModel{holdAt: 0, entered: make(chan struct{}), release: make(chan struct{})}
	a, rec, bus := newSteerAgent(t, m)
	type out struct {
		res *Result
		err error
	}
	done := make(chan out, 1)
	go func() { res, err := a.Prompt(context.Background(), "first"); done <- out{res, err} }()
	<-m.entered // the final answer is being streamed
	if !a.SteerRunning("also mention the tests") {
		t.Fatal("SteerRunning during the running prompt's model call = false; want true")
	}
	close(m.release)
	o := <-done
	bus.Close()
	if o.err != nil {
		t.Fatal(o.err)
	}
	reqs := m.requests()
	if len(reqs) != 2 || o.res.Turns != 2 {
		t.Fatalf("%d model calls, Result.Turns %d; want 2 (the steering message gets its own turn)", len(reqs), o.res.Turns)
	}
	if strings.Contains(lastUserText(reqs[0]), "also mention") || !strings.Contains(lastUserText(reqs[1]), "also mention the tests") {
		t.Errorf("requests' last user messages %q, %q; want the steering message in the second only", lastUserText(reqs[0]), lastUserText(reqs[1]))
	}
	if o.res.Message.Content[0].Text != "answer 1" {
		t.Errorf("result message %q; want the steered turn's answer", o.res.Message.Content[0].Text)
	}
	if got := rec.triggers(); got != "user continuation" {
		t.Errorf("turn triggers %q; want \"user continuation\"", got)
	}
}

// Once the loop has ended (here: in a RENDER hook, after the last model
// call), SteerRunning refuses and queues nothing, so the front end keeps the
// text; Steer still queues for the next prompt's first call, once.
func TestSteerAfterLoopEndIsRefused(t *testing.T) {
	m := &endTurnModel{}
	var a *Agent
	var once sync.Once
	var took bool
	late := Hook{Name: "late", Stage: StageRender, Phase: PhasePre, Kind: HookObserver,
		Func: func(context.Context, *Payload) (Verdict, error) {
			once.Do(func() {
				took = a.SteerRunning("refused text")
				a.Steer("queued text")
			})
			return Verdict{}, nil
		}}
	a, _, bus := newSteerAgent(t, m, late)
	if _, err := a.Prompt(context.Background(), "first"); err != nil {
		t.Fatal(err)
	}
	if took {
		t.Error("SteerRunning after the loop's end = true; want false (nothing would send it)")
	}
	if a.SteerRunning("idle text") {
		t.Error("SteerRunning with no prompt running = true; want false")
	}
	if _, err := a.Prompt(context.Background(), "second"); err != nil {
		t.Fatal(err)
	}
	bus.Close()
	reqs := m.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls; want 2 (a refused message makes no turn)", len(reqs))
	}
	var all strings.Builder
	for _, r := range reqs {
		for _, msg := range r {
			for _, c := range msg.Content {
				all.WriteString(c.Text + "\n")
			}
		}
	}
	if s := all.String(); strings.Contains(s, "refused text") || strings.Contains(s, "idle text") {
		t.Errorf("a refused steering message reached the model:\n%s", s)
	}
	if got := lastUserText(reqs[1]); !strings.Contains(got, "queued text") || strings.Count(lastUserText(reqs[1])+lastUserText(reqs[0]), "queued text") != 1 {
		t.Errorf("second prompt's user message %q; want Steer's text once", got)
	}
}

// SteerRunning racing the loop's end (run with -race): every message it
// accepted is sent within the prompt that accepted it, exactly once, and
// every message it refused never reaches the model.
func TestSteerRunningRacesLoopEnd(t *testing.T) {
	m := &endTurnModel{calls: make(chan struct{}, 1)}
	a, _, bus := newSteerAgent(t, m)
	const n = 300
	var mu sync.Mutex
	accepted := map[string]bool{}
	steered := make(chan struct{})
	go func() {
		defer close(steered)
		for i := 0; i < n; i++ {
			<-m.calls // one message per model call, at any point of the loop
			text := fmt.Sprintf("steer-%03d", i)
			ok := a.SteerRunning(text)
			mu.Lock()
			accepted[text] = ok
			mu.Unlock()
			runtime.Gosched()
		}
	}()
	prompts := 0
	for done := false; !done; prompts++ {
		select {
		case <-steered: // one more prompt after the last message
			done = true
		default:
		}
		if _, err := a.Prompt(context.Background(), fmt.Sprintf("prompt %d", prompts)); err != nil {
			t.Fatal(err)
		}
		a.mu.Lock()
		left := slices.Clone(a.queue.steering)
		a.mu.Unlock()
		if len(left) > 0 {
			t.Fatalf("after prompt %d returned, %q still queued: accepted but not sent by that prompt", prompts, left)
		}
	}
	bus.Close()
	count := map[string]int{}
	for _, msg := range a.History() {
		if msg.Role != llm.RoleUser {
			continue
		}
		for _, c := range msg.Content {
			if strings.HasPrefix(c.Text, "steer-") {
				count[c.Text]++
			}
		}
	}
	nAccepted := 0
	for text, ok := range accepted {
		want := 0
		if ok {
			want = 1
			nAccepted++
		}
		if count[text] != want {
			t.Errorf("%s: accepted %v, in the history %d times; want %d", text, ok, count[text], want)
		}
	}
	t.Logf("%d prompts, %d model calls, %d of %d steering messages accepted", prompts, len(m.requests()), nAccepted, n)
	if nAccepted == 0 {
		t.Error("no steering message was accepted: the race was not exercised")
	}
}
