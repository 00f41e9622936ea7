package tui

import (
	"context"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/strata-agent/strata/mcp"
)

// ElicitMsg puts an MCP server's form to the user (docs/mcp-auth.md,
// "Elicitation"); the answer goes to Reply.
type ElicitMsg struct {
	Elicitation mcp.Elicitation
	Reply       chan<- mcp.ElicitAnswer
}

// form is the elicitation being answered: one field per Enter.
type form struct {
	msg     ElicitMsg
	asked   bool // the accept question was answered with y
	next    int  // the field asked now
	content map[string]any
}

// Elicitor asks through the program (an ElicitMsg given to Send, e.g.
// tea.Program's) and waits for the answer; a cancelled ctx cancels.
type Elicitor struct{ Send func(tea.Msg) }

// Elicit implements mcp.Elicitor.
func (e Elicitor) Elicit(ctx context.Context, el mcp.Elicitation) (mcp.ElicitAnswer, error) {
	return ask(ctx, e.Send, func(reply chan<- mcp.ElicitAnswer) tea.Msg { return ElicitMsg{Elicitation: el, Reply: reply} },
		mcp.ElicitAnswer{Action: "cancel"})
}

// startForm shows the server's message and the accept question.
func (m *Model) startForm(msg ElicitMsg) {
	m.form = &form{msg: msg, content: map[string]any{}}
	m.write(fmt.Sprintf("\n? MCP server %q asks: %s\n  answer?  [y] yes  [n] no (decline)  [esc] cancel\n", msg.Elicitation.Server, msg.Elicitation.Message))
}

// formKey handles a key while a form is open: y / n / esc first, then each
// field's value from the input line on Enter (empty keeps the default; a
// value that does not parse is asked again); esc cancels.
func (m *Model) formKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	f := m.form
	done := func(a mcp.ElicitAnswer) (tea.Model, tea.Cmd) {
		f.msg.Reply <- a
		m.form = nil
		m.in.Reset()
		m.write(fmt.Sprintf("→ %s\n", a.Action))
		return m, nil
	}
	if k.String() == "esc" {
		return done(mcp.ElicitAnswer{Action: "cancel"})
	}
	if !f.asked {
		switch k.String() {
		case "y":
			f.asked = true
			return m.askField()
		case "n":
			return done(mcp.ElicitAnswer{Action: "decline"})
		}
		return m, nil
	}
	if k.String() != "enter" {
		var cmd tea.Cmd
		m.in, cmd = m.in.Update(k)
		return m, cmd
	}
	field := f.msg.Elicitation.Fields[f.next]
	text := m.in.Value()
	m.in.Reset()
	if text == "" && field.Default == nil && field.Required {
		m.write("  (required)\n")
		return m, nil
	}
	if text != "" {
		v, err := field.Parse(text)
		if err != nil {
			m.write(fmt.Sprintf("  %v\n", err))
			return m, nil
		}
		f.content[field.Name] = v
		m.write("  " + text + "\n")
	}
	f.next++
	return m.askField()
}

// askField shows the next field's label, or sends the accepted form.
func (m *Model) askField() (tea.Model, tea.Cmd) {
	f := m.form
	if f.next >= len(f.msg.Elicitation.Fields) {
		f.msg.Reply <- mcp.ElicitAnswer{Action: "accept", Content: f.content}
		m.form = nil
		m.write("→ accept\n")
		return m, nil
	}
	m.write("  " + f.msg.Elicitation.Fields[f.next].Label() + "\n")
	return m, nil
}
