package agent

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/demo"
	"github.com/strata-agent/strata/llm"
)

// gated holds its first Stream call until release is closed, after saying
// so on entered; later calls go straight through.
type gated struct {
	llm.Provider
	held    atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (g *gated) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	if g.held.CompareAndSwap(false, true) {
		close(g.entered)
		<-g.release
	}
	return g.Provider.Stream(ctx, req, onDelta)
}

// A Prompt, PromptWith or Resume made while a prompt runs returns ErrBusy at
// once without touching the history or emitting events; Steer still works
// and lands in the running prompt; once it returns the agent takes prompts
// again.
func TestPromptWhileRunningIsBusy(t *testing.T) {
	script, err := demo.Script()
	if err != nil {
		t.Fatal(err)
	}
	final := script[2]                                    // an end_turn answer
	a, rec, bus, _ := newAgent(t, 0, final, final, final) // first, its steered continuation, third
	g := &gated{Provider: a.eng.cfg.Provider, entered: make(chan struct{}), release: make(chan struct{})}
	a.eng.cfg.Provider = g
	ctx := context.Background()

	done := make(chan error, 1)
	go func() { _, err := a.Prompt(ctx, "first"); done <- err }()
	<-g.entered
	for name, call := range map[string]func() error{
		"Prompt":     func() error { _, err := a.Prompt(ctx, "second"); return err },
		"PromptWith": func() error { _, err := a.PromptWith(ctx, "", []llm.Block{llm.TextBlock("x")}); return err },
		"Resume":     func() error { _, err := a.Resume(ctx, 0, nil, ResumeOptions{}); return err },
	} {
		if err := call(); !errors.Is(err, ErrBusy) {
			t.Errorf("%s while a prompt runs: err = %v; want ErrBusy", name, err)
		}
	}
	a.Steer("steered while running")
	close(g.release)
	if err := <-done; err != nil {
		t.Fatalf("running prompt: %v", err)
	}
	if _, err := a.Prompt(ctx, "third"); err != nil {
		t.Fatalf("prompt after the running one returned: %v", err)
	}
	bus.Close()

	var users []string
	for _, m := range a.History() {
		if m.Role == llm.RoleUser {
			for _, b := range m.Content {
				users = append(users, b.Text)
			}
		}
	}
	if want := []string{"first", "steered while running", "third"}; !slices.Equal(users, want) {
		t.Errorf("user text in history %q; want %q", users, want)
	}
	starts := 0
	for _, e := range rec.ev {
		if e.Kind == event.SessionTurnStart {
			starts++
		}
	}
	if starts != 2 {
		t.Errorf("%d session_turn_start events; want 2 (busy calls emit none)", starts)
	}
}
