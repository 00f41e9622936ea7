package tui

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/anthropic"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/prompt/flat"
	"github.com/strata-agent/strata/tool"
)

// The screen drives a real loop (replayed model, real glob tool, ask mode):
// Enter sends the prompt, the approval is answered with "y", the tool call,
// its result and the answer stream into the transcript, and the status bar
// sums the turns' usage.
func TestScreenDrivesTheLoop(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n"), 0o644)
	u := llm.Usage{Input: 100, Output: 10, CacheRead: 50, CacheWrite: 20}
	m1, err1 := replay.AnthropicStream("m1", u, llm.StopToolUse, llm.ToolUseBlock("toolu_1", "glob", json.RawMessage(`{"pattern":"*.go"}`)))
	m2, err2 := replay.AnthropicStream("m2", u, llm.StopEndTurn, llm.TextBlock("One Go file: main.go."))
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	srv, err := replay.NewServer(m1, m2)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	msgs := make(chan tea.Msg, 1000)
	send := func(m tea.Msg) { msgs <- m }
	bus := event.NewBus()
	bus.SubscribeSync(Observer(send))
	a, err := agent.New(agent.Config{Provider: anthropic.New(anthropic.Config{APIKey: "k", BaseURL: srv.URL()}), Layout: flat.Layout{},
		Tools: tool.NewRegistry(tool.Builtins()...), Env: &tool.Env{Workdir: ws}, Model: "m", Bus: bus, Mode: agent.ModeAsk, Approver: Approver{Send: send}})
	if err != nil {
		t.Fatal(err)
	}
	m := New(a.Prompt, "anthropic · m · flat")
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	m.in.SetValue("which Go files are here?")
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if cmd == nil || !m.running {
		t.Fatal("enter did not start the prompt")
	}
	go func() { msgs <- cmd() }()
	timeout := time.After(10 * time.Second)
	for done := false; !done; {
		select {
		case msg := <-msgs:
			m.Update(msg)
			switch msg.(type) {
			case ApprovalMsg:
				if !strings.Contains(m.Status(), "approve?") {
					t.Errorf("status while asking: %s", m.Status())
				}
				m.Update(tea.KeyPressMsg{Code: 'y', Text: "y"})
			case doneMsg:
				done = true
			}
		case <-timeout:
			t.Fatalf("no end; transcript:\n%s", m.Transcript())
		}
	}
	tr := m.Transcript()
	for _, want := range []string{"› which Go files are here?", "? glob wants to run with:\n{\n  \"pattern\": \"*.go\"\n}", "→ allowed once", "⏺ glob", "  main.go", "One Go file: main.go."} {
		if !strings.Contains(tr, want) {
			t.Errorf("transcript lacks %q:\n%s", want, tr)
		}
	}
	if st := m.Status(); !strings.Contains(st, "2 call(s) · in 200 out 20 · cache read 100 write 40 · ready") {
		t.Errorf("status %q", st)
	}
	if v := m.View(); !strings.Contains(v.Content, "One Go file") || !v.AltScreen {
		t.Errorf("view %q", v.Content)
	}
	// Ctrl+C when idle quits.
	if _, cmd := m.Update(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}); cmd == nil || !m.quitting {
		t.Error("ctrl+c did not quit")
	}
}

// gated holds its first Stream call until release is closed, after saying
// so on entered.
type gated struct {
	llm.Provider
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (g *gated) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	g.once.Do(func() { close(g.entered); <-g.release })
	return g.Provider.Stream(ctx, req, onDelta)
}

// The Rust agent-loop Turn: "Continuation: tool round-trip, steering message"
// and input messages include "pending steering messages". Text entered
// while a prompt runs is queued as a steering message (SetSteer, the CLI's
// Session.Steer) and reaches the model before the next model call.
func TestEnterWhileRunningSteers(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n"), 0o644)
	u := llm.Usage{Input: 10, Output: 1}
	m1, err1 := replay.AnthropicStream("m1", u, llm.StopToolUse, llm.ToolUseBlock("toolu_1", "glob", json.RawMessage(`{"pattern":"*"}`)))
	m2, err2 := replay.AnthropicStream("m2", u, llm.StopEndTurn, llm.TextBlock("Only main.go."))
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	srv, err := replay.NewServer(m1, m2)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	g := &gated{Provider: anthropic.New(anthropic.Config{APIKey: "k", BaseURL: srv.URL()}), entered: make(chan struct{}), release: make(chan struct{})}
	a, err := agent.New(agent.Config{Provider: g, Layout: flat.Layout{}, Tools: tool.NewRegistry(tool.Builtins()...),
		Env: &tool.Env{Workdir: ws}, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	m := New(a.Prompt, "anthropic · m · flat")
	m.SetSteer(a.SteerRunning)
	m.in.SetValue("list the files")
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if cmd == nil {
		t.Fatal("enter did not start the prompt")
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	<-g.entered // the first model call is in flight
	m.in.SetValue("only Go files please")
	if _, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter}); cmd != nil {
		t.Error("enter while running started another prompt")
	}
	if !strings.Contains(m.Status(), "enter steers") || m.in.Value() != "" {
		t.Errorf("status %q, input %q", m.Status(), m.in.Value())
	}
	close(g.release)
	m.Update(<-done)
	reqs := srv.Received()
	if len(reqs) != 2 || strings.Contains(string(reqs[0].Body), "only Go files please") || !strings.Contains(string(reqs[1].Body), "only Go files please") {
		t.Fatalf("%d requests; the steering message must reach the second, not the first", len(reqs))
	}
	if tr := m.Transcript(); !strings.Contains(tr, "› (steering) only Go files please") {
		t.Errorf("transcript:\n%s", tr)
	}
}

// The message-loop design, RECEIVE_INPUT: "UIs may render large pasted
// blocks as placeholders while editing, but the payload handed to core has
// those placeholders expanded back to the original pasted text in insertion
// order."
func TestPastedBlocksReachTheLoopInFull(t *testing.T) {
	var got string
	m := New(func(_ context.Context, text string) (*agent.Result, error) { got = text; return &agent.Result{}, nil }, "h")
	first := "func main() {\n\tprintln(\"hi\")\n}\n"
	second := strings.Repeat("x", PasteThreshold+1)
	m.Update(tea.KeyPressMsg{Code: 'a', Text: "a"})
	m.Update(tea.PasteMsg{Content: first})
	m.Update(tea.PasteMsg{Content: " small "})
	m.Update(tea.PasteMsg{Content: second})
	shown := m.in.Value()
	if shown != "a[Pasted text #1: 3 lines, 31 bytes] small [Pasted text #2: 1 lines, 201 bytes]" {
		t.Fatalf("input shows %q; want placeholders for the large pastes", shown)
	}
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if cmd == nil {
		t.Fatal("enter did not send")
	}
	cmd()
	if want := "a" + first + " small " + second; got != want {
		t.Errorf("the loop got %q; want the original pasted text %q", got, want)
	}
	if tr := m.Transcript(); !strings.Contains(tr, "[Pasted text #1") || strings.Contains(tr, second) {
		t.Errorf("transcript shows %q; want the placeholders", tr)
	}
}

// A text pasted with CR or CRLF line ends (as some terminals send it) is
// several lines, and the loop receives LF line ends (it once counted "1
// lines" and kept the CRs).
func TestPastedCRLinesAreLines(t *testing.T) {
	var got string
	m := New(func(_ context.Context, text string) (*agent.Result, error) { got = text; return &agent.Result{}, nil }, "h")
	m.Update(tea.PasteMsg{Content: "one\rtwo\r\nthree"})
	if shown := m.in.Value(); shown != "[Pasted text #1: 3 lines, 13 bytes]" {
		t.Fatalf("input shows %q; want a 3-line placeholder", shown)
	}
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	cmd()
	if got != "one\ntwo\nthree" {
		t.Errorf("the loop got %q; want LF line ends", got)
	}
}

// Words are never split at a line's end (the issue saw "glo|b tool" and
// "OPENAI_API_KE|Y"): lines break between words, a hyphenated word or a
// path stays whole, and only a word wider than the line is broken.
func TestWrapKeepsWordsWhole(t *testing.T) {
	text := "warning: /tmp/project/.kiro/missing-notes.md: resource file not found; set OPENAI_API_KEY to ask a real model about internationalization"
	for _, width := range []int{37, 50, 80} {
		lines := hang(text, "", "", width)
		for _, l := range lines {
			if cols(l) > width {
				t.Errorf("width %d: line %q is %d columns", width, l, cols(l))
			}
		}
		if got := strings.Join(lines, " "); got != text {
			t.Errorf("width %d: words changed or split:\n%q\nwant\n%q", width, got, text)
		}
	}
	long := strings.Repeat("x", 25)
	if lines := hang("a "+long, "", "", 10); len(lines) != 4 || lines[1] != "xxxxxxxxxx" {
		t.Errorf("a word wider than the line: %q; want it broken at the width", lines)
	}
}
