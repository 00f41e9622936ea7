// Package tui is strata's full-screen chat (bubbletea v2): a transcript that
// streams the loop's events, a one-line prompt, a status bar with the
// session's tokens (incl. cache read/write), tool approvals answered with
// a key and MCP servers' forms answered field by field (elicit.go). It drives any run function; the CLI passes the agent's Prompt.
package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/textinput"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// RunFunc runs one user prompt through the loop; its events reach the model
// as EventMsg (see Observer).
type RunFunc func(ctx context.Context, prompt string) (*agent.Result, error)

// EventMsg carries one loop event into the program.
type EventMsg struct{ Event event.Event }

// doneMsg ends a prompt.
type doneMsg struct{ err error }

// ApprovalMsg asks the user to approve a tool call; the answer goes to Reply.
type ApprovalMsg struct {
	Request agent.ApprovalRequest
	Reply   chan<- agent.Decision
}

// Model is the chat screen. Build it with New.
type Model struct {
	run      RunFunc
	header   string
	vp       viewport.Model
	in       textinput.Model
	log      strings.Builder
	running  bool
	cancel   context.CancelFunc
	usage    llm.Usage
	calls    int
	approval *ApprovalMsg
	form     *form // an MCP elicitation being answered (elicit.go)
	width    int
	quitting bool
	steer    func(text string) bool // steers the running prompt; false: it had ended (SetSteer)
	next     []string               // lines the running prompt's loop ended before taking: they run next
	pastes   []paste                // large pastes shown as placeholders in the input
}

// paste is one large pasted block: the placeholder the input shows while
// editing and the original text the loop receives.
type paste struct{ placeholder, text string }

// PasteThreshold is the size in bytes above which (or any paste with a line
// break) a paste is shown as a placeholder in the one-line input; the prompt
// handed to the loop has the original text (the message-loop design,
// RECEIVE_INPUT: "UIs may render large pasted blocks as placeholders while
// editing, but the payload handed to core has those placeholders expanded
// back to the original pasted text in insertion order").
const PasteThreshold = 200

// SetSteer makes Enter while a prompt runs queue the typed text as a
// steering message through steer (the CLI passes
// strata.Session.SteerRunning): it reaches the model before the loop's
// next model call, and steer reports true. When steer reports false (the
// running prompt's loop had already ended; nothing was queued) the text
// runs as the next prompt once the running one returns. Without SetSteer,
// Enter is ignored while a prompt runs.
func (m *Model) SetSteer(steer func(text string) bool) { m.steer = steer }

// New returns the chat screen; header names provider, model, layout and
// session for the status bar.
func New(run RunFunc, header string) *Model {
	in := textinput.New()
	in.Prompt = "› "
	in.Placeholder = "ask, or /exit"
	in.Focus()
	vp := viewport.New(viewport.WithWidth(80), viewport.WithHeight(20))
	vp.SoftWrap = true // long lines wrap instead of being cut
	return &Model{run: run, header: header, vp: vp, in: in, width: 80}
}

// Init implements tea.Model.
func (m *Model) Init() tea.Cmd { return textinput.Blink }

// Transcript returns the transcript text shown so far.
func (m *Model) Transcript() string { return m.log.String() }

// Update implements tea.Model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width = msg.Width
		m.vp.SetWidth(msg.Width)
		m.vp.SetHeight(max(msg.Height-4, 3))
		m.in.SetWidth(max(msg.Width-4, 10))
	case EventMsg:
		m.observe(msg.Event)
	case ApprovalMsg:
		m.approval = &msg
		m.write(fmt.Sprintf("\n? allow %s %s  [y] once  [a] always  [n] no\n", msg.Request.Call.Name, oneLine(msg.Request.Call.Input)))
	case ElicitMsg:
		m.startForm(msg)
	case doneMsg:
		m.running, m.cancel = false, nil
		if msg.err != nil {
			m.write(fmt.Sprintf("\nstrata: %v\n", msg.err))
		}
		m.write("\n")
		if len(m.next) > 0 {
			text := m.next[0]
			m.next = m.next[1:]
			if text == "/exit" {
				m.quitting = true
				return m, tea.Quit
			}
			m.write("› " + text + "\n")
			return m, m.start(text)
		}
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		if len(msg.Content) > PasteThreshold || strings.ContainsAny(msg.Content, "\r\n") {
			ph := fmt.Sprintf("[Pasted text #%d: %d lines, %d bytes]", len(m.pastes)+1, strings.Count(msg.Content, "\n")+1, len(msg.Content))
			m.pastes = append(m.pastes, paste{placeholder: ph, text: msg.Content})
			var cmd tea.Cmd
			m.in, cmd = m.in.Update(tea.PasteMsg{Content: ph})
			return m, cmd
		}
	}
	var cmd tea.Cmd
	m.in, cmd = m.in.Update(msg)
	return m, cmd
}

// key handles a key press: approval answers, cancel, quit, send.
func (m *Model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if m.form != nil {
		return m.formKey(k)
	}
	if a := m.approval; a != nil {
		d, ok := map[string]agent.Decision{"y": agent.AllowOnce, "a": agent.AllowAlways, "n": agent.RejectOnce, "esc": agent.RejectOnce}[k.String()]
		if ok {
			a.Reply <- d
			m.approval = nil
			m.write(fmt.Sprintf("→ %s\n", d))
		}
		return m, nil
	}
	switch k.String() {
	case "ctrl+c":
		if m.running {
			m.cancel()
			return m, nil
		}
		m.quitting = true
		return m, tea.Quit
	case "esc":
		if m.running {
			m.cancel()
		}
		return m, nil
	case "enter":
		shown := strings.TrimSpace(m.in.Value())
		if shown == "" || (m.running && m.steer == nil) {
			return m, nil
		}
		text := m.expand(shown)
		m.in.Reset()
		if m.running {
			// A command typed while a prompt runs ("/mode all") waits for
			// it, as in line mode; "/steer TEXT" steers with TEXT.
			if arg, ok := strings.CutPrefix(text, "/steer "); ok && strings.TrimSpace(arg) != "" {
				text = strings.TrimSpace(arg)
			} else if strings.HasPrefix(text, "/") {
				m.next = append(m.next, text)
				m.write("\n› (after the running prompt) " + shown + "\n")
				return m, nil
			}
			if m.steer(text) {
				m.write("\n› (steering) " + shown + "\n")
			} else {
				m.next = append(m.next, text)
				m.write("\n› (next prompt: the running one had ended) " + shown + "\n")
			}
			return m, nil
		}
		if text == "/exit" {
			m.quitting = true
			return m, tea.Quit
		}
		m.write("› " + shown + "\n")
		return m, m.start(text)
	}
	var cmd tea.Cmd
	m.in, cmd = m.in.Update(k)
	return m, cmd
}

// start runs text as a prompt; its end comes back as a doneMsg.
func (m *Model) start(text string) tea.Cmd {
	ctx, cancel := context.WithCancel(context.Background())
	m.running, m.cancel = true, cancel
	return func() tea.Msg {
		_, err := m.run(ctx, text)
		cancel()
		return doneMsg{err: err}
	}
}

// expand replaces the paste placeholders still in text with their original
// text, in insertion order, and forgets every paste.
func (m *Model) expand(text string) string {
	for _, p := range m.pastes {
		text = strings.Replace(text, p.placeholder, p.text, 1)
	}
	m.pastes = nil
	return text
}

// observe renders one loop event into the transcript and the status.
func (m *Model) observe(e event.Event) {
	switch e.Kind {
	case event.MessageUpdate:
		if e.Delta != nil && e.Delta.Type == llm.DeltaText {
			m.write(e.Delta.Text)
		}
	case event.ToolExecutionStart:
		m.write(fmt.Sprintf("\n⏺ %s %s\n", e.ToolCall.Name, oneLine(e.ToolCall.Input)))
	case event.ToolExecutionEnd:
		m.write(resultLines(e.ToolResult, 6))
	case event.ToolCallDenied:
		m.write(fmt.Sprintf("⊘ %s denied: %s\n", e.ToolCall.Name, e.Text))
	case event.AgentStopped, event.Compaction:
		m.write("\n" + e.Text + "\n")
	case event.TurnEnd:
		if e.Usage != nil {
			m.usage = m.usage.Add(*e.Usage)
			m.calls++
		}
	case event.CacheKeepAlive: // a ping's tokens count, but it is no model call of the conversation
		if e.Usage != nil {
			m.usage = m.usage.Add(*e.Usage)
		}
	}
}

func (m *Model) write(s string) {
	m.log.WriteString(s)
	m.vp.SetContent(m.log.String())
	m.vp.GotoBottom()
}

// Usage returns the tokens of the model calls so far and their number.
func (m *Model) Usage() (llm.Usage, int) { return m.usage, m.calls }

// Status is the status bar: header, model calls, tokens (input, output,
// cache read, cache write) and state, fitted to the window's width (see
// statusLine: the counts are never cut, the header gives way first).
func (m *Model) Status() string {
	state, short := "ready", "ready"
	switch {
	case m.approval != nil:
		state, short = "approve?", "approve?"
	case m.form != nil:
		state, short = "answer the form (esc cancels)", "form"
	case m.running && m.steer != nil:
		state, short = "running (esc cancels, enter steers)", "enter steers"
	case m.running:
		state, short = "running (esc cancels)", "esc cancels"
	}
	return statusLine(m.header, m.calls, m.usage, state, short, m.width)
}

// View implements tea.Model.
func (m *Model) View() tea.View {
	if m.quitting {
		return tea.NewView("")
	}
	v := tea.NewView(m.Status() + "\n" + m.vp.View() + "\n" + m.in.View())
	v.AltScreen = true
	return v
}

// Observer forwards loop events to a program through send (tea.Program's
// Send); subscribe it to the loop's bus.
func Observer(send func(tea.Msg)) func(event.Event) {
	return func(e event.Event) { send(EventMsg{Event: e}) }
}

// Approver asks through the program (an ApprovalMsg given to Send, e.g.
// tea.Program's) and waits for the user's key.
type Approver struct{ Send func(tea.Msg) }

// Approve implements agent.Approver; a cancelled ctx rejects.
func (a Approver) Approve(ctx context.Context, r agent.ApprovalRequest) (agent.Decision, error) {
	return ask(ctx, a.Send, func(reply chan<- agent.Decision) tea.Msg { return ApprovalMsg{Request: r, Reply: reply} }, agent.RejectOnce)
}

// ask sends the message msg makes to the program and waits for its reply,
// or returns cancelled and ctx's error when ctx ends first.
func ask[A any](ctx context.Context, send func(tea.Msg), msg func(chan<- A) tea.Msg, cancelled A) (A, error) {
	reply := make(chan A, 1)
	send(msg(reply))
	select {
	case a := <-reply:
		return a, nil
	case <-ctx.Done():
		return cancelled, ctx.Err()
	}
}

func oneLine(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	if len(b) > 120 {
		return string(b[:117]) + "…"
	}
	return string(b)
}

// resultLines shows the first n lines of a tool result, indented.
func resultLines(r *llm.Block, n int) string {
	if r == nil {
		return ""
	}
	var text []string
	for _, b := range r.Content {
		if b.Type == llm.BlockText {
			text = append(text, b.Text)
		}
	}
	lines := strings.Split(strings.TrimRight(strings.Join(text, "\n"), "\n"), "\n")
	more := ""
	if len(lines) > n {
		more = fmt.Sprintf("  … %d more line(s)\n", len(lines)-n)
		lines = lines[:n]
	}
	return "  " + strings.Join(lines, "\n  ") + "\n" + more
}
