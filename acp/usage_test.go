package acp_test

import (
	"context"
	"encoding/json"
	"github.com/strata-agent/strata/keepalive"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// stepClock is a keep-alive clock the test moves by hand: AfterFunc only
// keeps the callback; ping runs the one pending callback, as the timer
// would when the interval ran out.
type stepClock struct {
	mu      sync.Mutex
	now     time.Time
	pending []func()
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	at := c.now.Add(d)
	run := func() { c.mu.Lock(); c.now = at; c.mu.Unlock(); f() }
	c.pending = append(c.pending, run)
	i := len(c.pending) - 1
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		armed := c.pending[i] != nil
		c.pending[i] = nil
		return armed
	}
}

// armed reports whether a timer is armed.
func (c *stepClock) armed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.pending {
		if f != nil {
			return true
		}
	}
	return false
}

// ping runs the one armed timer on the calling goroutine.
func (c *stepClock) ping(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	var armed []int
	for i, f := range c.pending {
		if f != nil {
			armed = append(armed, i)
		}
	}
	if len(armed) != 1 {
		c.mu.Unlock()
		t.Fatalf("%d keep-alive timers armed; want 1", len(armed))
	}
	f := c.pending[armed[0]]
	c.pending[armed[0]] = nil
	c.mu.Unlock()
	f()
}

// usageClient records every session/update and signals each usage_update.
type usageClient struct {
	acpClient
	mu      sync.Mutex
	updates []sdk.SessionUpdate
	usage   chan sdk.SessionUsageUpdate
}

func (c *usageClient) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, n.Update)
	c.mu.Unlock()
	if u := n.Update.UsageUpdate; u != nil {
		c.usage <- *u
	}
	return nil
}

// take returns the updates received since the last take.
func (c *usageClient) take() []sdk.SessionUpdate {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.updates
	c.updates = nil
	return u
}

var (
	toolCallUsage = llm.Usage{Input: 40, CacheWrite: 2000, Output: 7}
	answerUsage   = llm.Usage{Input: 10, CacheRead: 2000, CacheWrite: 50, Output: 5}
	pingUsage     = llm.Usage{Input: 3, CacheRead: 2050, Output: 1}
)

// usageModel runs one execute_bash call (command: its JSON input), then answers; a ping (max_tokens
// 1) gets one token. Each reply carries its scripted usage.
func usageModel(t *testing.T, command string) func(replay.Request) replay.Response {
	return func(req replay.Request) replay.Response {
		var v struct {
			MaxTokens int `json:"max_tokens"`
		}
		_ = json.Unmarshal(req.Body, &v)
		r := replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock("toolu_1", "execute_bash", json.RawMessage(command))},
			Usage: toolCallUsage}
		switch {
		case v.MaxTokens == 1:
			r = replay.Reply{Blocks: []llm.Block{llm.TextBlock("O")}, Stop: llm.StopMaxTokens, Usage: pingUsage}
		case strings.Contains(string(req.Body), `"tool_result"`):
			r = replay.Reply{Blocks: []llm.Block{llm.TextBlock("done")}, Usage: answerUsage}
		}
		resp, err := replay.Turn(llm.APIAnthropic, r)
		if err != nil {
			t.Errorf("author reply: %v", err)
		}
		return resp
	}
}

// openUsage opens a workspace on the scripted model as model, pinging on clk.
func openUsage(t *testing.T, model string, clk *stepClock) *strata.Workspace {
	return openUsageWith(t, model, clk, `{"command":"echo hi","summary":"hi"}`)
}

// openUsageWith is openUsage with the tool call's input.
func openUsageWith(t *testing.T, model string, clk *stepClock, command string) *strata.Workspace {
	ws, err := strata.Open(context.Background(), strata.Options{Dir: t.TempDir(), ProviderName: "anthropic", Model: model,
		Respond: usageModel(t, command), NoProjectFiles: true, DisableRepoContext: true, Instructions: "Answer briefly.",
		KeepAlive: keepalive.Options{MaxPings: 1, Interval: 4*time.Minute + 30*time.Second, Clock: clk}})
	must(t, err)
	t.Cleanup(func() { ws.Close() })
	return ws
}

// usd prices tokens at claude-sonnet-4-5's prices (USD per million tokens:
// input 3, cache read 0.30, 5-minute cache write 3.75, output 15; the
// cachesim table), written out so the test does not share the code's
// arithmetic.
func usd(u llm.Usage) float64 {
	return (float64(u.Input)*3 + float64(u.CacheRead)*0.3 + float64(u.CacheWrite)*3.75 + float64(u.Output)*15) / 1e6
}

// A prompt's response carries the summed usage of its two model calls, a
// usage_update follows it (context used after the last call, the model's
// 200k window, the cost of both calls), and a keep-alive ping sends one
// more usage_update — same context, the ping's cost added — and nothing
// else: no turn, no message. The ACP agent reported no usage at all
// before.
func TestPromptAndPingReportUsage(t *testing.T) {
	clk := &stepClock{now: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)}
	ws := openUsage(t, "claude-sonnet-4-5-20250929", clk)
	c := &usageClient{usage: make(chan sdk.SessionUsageUpdate, 8)}
	res := promptOnce(t, ws, c)
	want := sdk.Usage{InputTokens: 50, OutputTokens: 12, CachedReadTokens: sdk.Ptr(2000), CachedWriteTokens: sdk.Ptr(2050), TotalTokens: 4112}
	if res.Usage == nil {
		t.Fatal("session/prompt response without usage")
	}
	got, _ := json.Marshal(res.Usage)
	if w, _ := json.Marshal(want); string(got) != string(w) {
		t.Errorf("prompt usage %s; want %s", got, w)
	}
	turns := usd(toolCallUsage) + usd(answerUsage)
	used := 2000 + 50 + 10 + 5 // the answer's prompt tokens and output
	checkUsage(t, "after the prompt", next(t, c.usage), used, turns)
	if ups := c.take(); ups[len(ups)-1].UsageUpdate == nil {
		t.Errorf("last update of the prompt is %+v; want the usage_update", ups[len(ups)-1])
	}

	clk.ping(t)
	checkUsage(t, "after the ping", next(t, c.usage), used, turns+usd(pingUsage))
	if ups := c.take(); len(ups) != 1 {
		t.Errorf("the ping sent %d updates; want only its usage_update: %+v", len(ups), ups)
	}
}

// promptOnce serves ws to client c over pipes and prompts a new session
// once.
func promptOnce(t *testing.T, ws *strata.Workspace, c *usageClient) sdk.PromptResponse {
	t.Helper()
	conn := serve(t, ws, c)
	_, err := conn.Initialize(context.Background(), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	must(t, err)
	ns, err := conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []sdk.McpServer{}})
	must(t, err)
	res, err := conn.Prompt(context.Background(), sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("say hi")}})
	must(t, err)
	return res
}

// A ping sent while the prompt's tool runs (the session idles between its
// model calls) gets its usage_update at once — the context after the tool
// call's request, that call's cost and the ping's — and stays out of the
// prompt's usage; the update after the prompt counts it in the cost.
func TestPingDuringAToolReportsUsage(t *testing.T) {
	clk := &stepClock{now: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)}
	gate := filepath.Join(t.TempDir(), "go")
	ws := openUsageWith(t, "claude-sonnet-4-5-20250929", clk,
		`{"command":"while [ ! -e '`+gate+`' ]; do sleep 0.01; done","summary":"wait"}`)
	c := &usageClient{usage: make(chan sdk.SessionUsageUpdate, 8)}
	done := make(chan sdk.PromptResponse, 1)
	go func() { done <- promptOnce(t, ws, c) }()
	for !clk.armed() { // the tool runs once the first call's ping is armed
		time.Sleep(time.Millisecond)
	}
	clk.ping(t)
	checkUsage(t, "after a ping during the tool", next(t, c.usage), 40+2000+7, usd(toolCallUsage)+usd(pingUsage))
	must(t, os.WriteFile(gate, nil, 0o644))
	res := <-done
	if res.Usage == nil || res.Usage.TotalTokens != 4112 || res.Usage.InputTokens != 50 {
		t.Errorf("prompt usage %+v; want the two calls' 4112 tokens, 50 of them uncached input, and no ping", res.Usage)
	}
	checkUsage(t, "after the prompt", next(t, c.usage), 2000+50+10+5, usd(toolCallUsage)+usd(answerUsage)+usd(pingUsage))
}

// next waits for the next usage_update (the ping's goes out on the
// connection's own goroutine).
func next(t *testing.T, ch chan sdk.SessionUsageUpdate) sdk.SessionUsageUpdate {
	t.Helper()
	select {
	case u := <-ch:
		return u
	case <-time.After(time.Minute):
		t.Fatal("no usage_update")
	}
	return sdk.SessionUsageUpdate{}
}

func checkUsage(t *testing.T, when string, u sdk.SessionUsageUpdate, used int, cost float64) {
	t.Helper()
	if u.Used != used || u.Size != 200_000 || u.Cost == nil || u.Cost.Currency != "USD" || math.Abs(u.Cost.Amount-cost) > 1e-12 {
		t.Errorf("usage_update %s: used %d of %d, cost %+v; want %d of 200000, %.7f USD", when, u.Used, u.Size, u.Cost, used, cost)
	}
}

// A model strata knows neither the window nor the price of (the replay
// server's "replay") still gets its prompt's usage in the response, but
// no usage_update: size is required and strata sends no guess.
func TestUsageOfAnUnknownModel(t *testing.T) {
	ws := openUsage(t, "", &stepClock{})
	c := &usageClient{usage: make(chan sdk.SessionUsageUpdate, 8)}
	res := promptOnce(t, ws, c)
	if res.Usage == nil || res.Usage.TotalTokens != 4112 || res.Usage.InputTokens != 50 {
		t.Errorf("prompt usage %+v; want 4112 tokens, 50 of them uncached input", res.Usage)
	}
	for _, u := range c.take() {
		if u.UsageUpdate != nil {
			t.Errorf("usage_update %+v for a model of unknown window", *u.UsageUpdate)
		}
	}
}

// session/load of a stored session sends, after the replayed history, a
// usage_update with what the conversation holds after its last stored call
// (that call's prompt tokens and output) in the model's window, so a client
// shows the context before the next prompt; no cost, since the stored
// calls' cache writes are priced only where their TTL cannot matter.
func TestLoadSessionReportsItsContext(t *testing.T) {
	clk := &stepClock{now: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)}
	ws := openUsage(t, "claude-sonnet-4-5-20250929", clk)
	s, err := ws.NewSession(context.Background(), strata.SessionOptions{})
	must(t, err)
	_, err = s.Prompt(context.Background(), "say hi")
	must(t, err)
	id := s.ID()
	must(t, s.Close())

	c := &usageClient{usage: make(chan sdk.SessionUsageUpdate, 8)}
	conn := serve(t, ws, c)
	_, err = conn.Initialize(context.Background(), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	must(t, err)
	if _, err := conn.LoadSession(context.Background(), sdk.LoadSessionRequest{SessionId: sdk.SessionId(id), Cwd: ws.Dir(), McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	ups := c.take()
	if len(ups) < 2 || ups[len(ups)-1].UsageUpdate == nil {
		t.Fatalf("session/load sent %d updates, the last %+v; want the history, then a usage_update", len(ups), ups)
	}
	u := ups[len(ups)-1].UsageUpdate
	if used := 2000 + 50 + 10 + 5; u.Used != used || u.Size != 200_000 || u.Cost != nil {
		t.Errorf("usage_update after session/load: used %d of %d, cost %+v; want %d of 200000 and no cost", u.Used, u.Size, u.Cost, used)
	}
}
