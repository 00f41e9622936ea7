package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// screen returns a chat screen of w×h with n numbered lines of the
// model's text in its transcript.
func screen(w, h, n int) *Model {
	m := New(nil, "h")
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %03d\n\n", i)
	}
	m.observe(event.Event{Kind: event.MessageUpdate, Delta: &llm.Delta{Type: llm.DeltaText, Text: b.String()}})
	return m
}

// The transcript scrolls (docs/chat.md, "Screen"): PgUp/PgDn always, Up
// and Down only while the input is empty (else they are the input's), and
// text streaming in while scrolled up leaves the view where it is.
func TestScrollKeysMoveTheTranscript(t *testing.T) {
	m := screen(80, 24, 60)
	if !m.vp.AtBottom() || !strings.Contains(ansi.Strip(m.vp.View()), "line 060") {
		t.Fatalf("a new answer does not show its end:\n%s", m.vp.View())
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyPgUp})
	top := m.vp.YOffset()
	if m.vp.AtBottom() || strings.Contains(ansi.Strip(m.vp.View()), "line 060") || !strings.Contains(m.Status(), "scrolled") {
		t.Fatalf("PgUp did not scroll (status %q):\n%s", m.Status(), m.vp.View())
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyUp})
	if m.vp.YOffset() != top-1 {
		t.Errorf("Up with an empty input: offset %d, want %d", m.vp.YOffset(), top-1)
	}
	m.in.SetValue("draft")
	m.Update(tea.KeyPressMsg{Code: tea.KeyUp})
	if m.vp.YOffset() != top-1 {
		t.Errorf("Up while typing scrolled the transcript: offset %d", m.vp.YOffset())
	}
	m.observe(event.Event{Kind: event.MessageUpdate, Delta: &llm.Delta{Type: llm.DeltaText, Text: "more text\n"}})
	if m.vp.YOffset() != top-1 {
		t.Errorf("streamed text moved a scrolled view: offset %d, want %d", m.vp.YOffset(), top-1)
	}
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if m.vp.YOffset() != top+2 {
		t.Errorf("the mouse wheel: offset %d, want %d", m.vp.YOffset(), top+2)
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyPgDown})
	m.Update(tea.KeyPressMsg{Code: tea.KeyPgDown})
	if !m.vp.AtBottom() {
		t.Error("PgDn did not reach the end")
	}
}

// "N" (never) refuses the tool and every later call of it without asking,
// and the transcript says so in words.
func TestNeverIsRemembered(t *testing.T) {
	m := New(nil, "h")
	ask := func() agent.Decision {
		reply := make(chan agent.Decision, 1)
		m.Update(ApprovalMsg{Request: agent.ApprovalRequest{Call: llm.ToolUseBlock("t1", "execute_bash", []byte(`{"command":"rm -rf build && make"}`))}, Reply: reply})
		if m.approval != nil {
			if !strings.Contains(m.Transcript(), "$ rm -rf build && make") {
				t.Errorf("the question lacks the command as text:\n%s", m.Transcript())
			}
			m.Update(tea.KeyPressMsg{Code: 'N', Text: "N"})
		}
		return <-reply
	}
	if d := ask(); d != agent.RejectAlways {
		t.Fatalf("N answered %s", d)
	}
	if d := ask(); d != agent.RejectAlways || m.approval != nil {
		t.Fatalf("the second call was asked (%s)", d)
	}
	tr := m.Transcript()
	if !strings.Contains(tr, "→ denied: execute_bash is refused without asking for the rest of this chat") || !strings.Contains(tr, "⊘ execute_bash refused without asking (you answered never)") {
		t.Errorf("transcript:\n%s", tr)
	}
}

// The model's markdown is rendered (glamour): no "**" or "```" left, the
// code kept, lines not padded to the width; with NO_COLOR (glamour's
// no-TTY style: emphasis stays as its markers) there is no escape sequence
// at all.
func TestMarkdownIsRendered(t *testing.T) {
	text := "## Plan\n\n- **bold** step\n- `code` step\n\n```go\nfunc main() {}\n```\n"
	for _, plain := range []bool{false, true} {
		tr := transcript{plain: plain}
		tr.stream(text)
		lines, _ := tr.lines(60)
		out := strings.Join(lines, "\n")
		got := ansi.Strip(out)
		if !plain && strings.Contains(got, "**") || strings.Contains(got, "```") || !strings.Contains(got, "func main() {}") || !strings.Contains(got, "bold") {
			t.Errorf("plain=%v: markdown not rendered:\n%s", plain, got)
		}
		if plain && out != got {
			t.Errorf("plain mode has escape sequences: %q", out)
		}
		for _, l := range lines {
			if strings.HasSuffix(ansi.Strip(l), " ") {
				t.Errorf("plain=%v: line padded: %q", plain, l)
			}
			if ansi.StringWidth(l) > 60 {
				t.Errorf("plain=%v: line wider than 60: %q", plain, ansi.Strip(l))
			}
		}
	}
}
