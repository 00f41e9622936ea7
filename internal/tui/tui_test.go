package tui

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
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
	for _, want := range []string{"› which Go files are here?", `? allow glob {"pattern":"*.go"}`, "→ allow_once", "⏺ glob", "  main.go", "One Go file: main.go."} {
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
