package tui

import (
	"context"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/strata-agent/strata/agent"
)

// A line entered while a prompt runs that the running prompt no longer
// takes (its loop had ended: steer reports false and queued nothing) runs
// as the next prompt once the running one returns: it is neither lost nor
// sent twice.
func TestEnterAfterLoopEndRunsNext(t *testing.T) {
	var prompts, steered []string
	m := New(func(_ context.Context, text string) (*agent.Result, error) {
		prompts = append(prompts, text)
		return &agent.Result{}, nil
	}, "h")
	m.SetSteer(func(text string) bool { steered = append(steered, text); return false })
	m.in.SetValue("first")
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	done := cmd() // the first prompt has returned; its doneMsg is not handled yet
	m.in.SetValue("late line")
	if _, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter}); cmd != nil {
		t.Fatal("enter while running started a prompt at once")
	}
	_, cmd = m.Update(done)
	if cmd == nil {
		t.Fatal("the refused line did not start when the running prompt ended")
	}
	m.Update(cmd())
	if want := []string{"first", "late line"}; !slices.Equal(prompts, want) || !slices.Equal(steered, []string{"late line"}) {
		t.Errorf("prompts %q, steered %q; want prompts %q", prompts, steered, want)
	}
	if tr := m.Transcript(); !strings.Contains(tr, "next prompt: the running one had ended") || m.running {
		t.Errorf("running %v, transcript:\n%s", m.running, tr)
	}
}

// A command typed while a prompt runs ("/mode all") is not steering text:
// it runs after the running prompt, as in line mode; "/steer TEXT" steers
// with TEXT alone.
func TestCommandWhileRunningWaits(t *testing.T) {
	var prompts, steered []string
	m := New(func(_ context.Context, text string) (*agent.Result, error) {
		prompts = append(prompts, text)
		return &agent.Result{}, nil
	}, "h")
	m.SetSteer(func(text string) bool { steered = append(steered, text); return true })
	m.in.SetValue("first")
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	done := cmd()
	for _, line := range []string{"/mode all", "/steer look at main.go"} {
		m.in.SetValue(line)
		if _, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter}); cmd != nil {
			t.Fatalf("%q while running started a prompt at once", line)
		}
	}
	_, cmd = m.Update(done)
	if cmd == nil {
		t.Fatal("the command did not run when the running prompt ended")
	}
	m.Update(cmd())
	if want := []string{"first", "/mode all"}; !slices.Equal(prompts, want) || !slices.Equal(steered, []string{"look at main.go"}) {
		t.Errorf("prompts %q, steered %q; want prompts %q and only the /steer text steered", prompts, steered, want)
	}
}
