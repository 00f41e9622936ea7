// Package tui is strata's full-screen chat (bubbletea v2): a scrollable
// transcript that streams the loop's events (the model's text rendered as
// markdown, tool calls, results and diffs, wrapped at word boundaries), a
// one-line prompt, a status bar (provider, model, session, tokens incl.
// cache read/write, context-window use, cost) and tool approvals that show
// what the call will do before they are answered with a key. It drives any
// run function; the CLI passes the agent's Prompt (docs/cli.md, "chat").
// MCP servers' forms are answered field by field (elicit.go).
package tui

import (
	"context"
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

// NoticeMsg puts a line of text (a warning, a command's answer) into the
// transcript, so that nothing is written over the full screen.
type NoticeMsg struct{ Text string }

// doneMsg ends a prompt; cancelled: by Esc or Ctrl+C.
type doneMsg struct {
	err       error
	cancelled bool
}

// ApprovalMsg asks the user to approve a tool call; the answer goes to Reply.
type ApprovalMsg struct {
	Request agent.ApprovalRequest
	Reply   chan<- agent.Decision
}

// Model is the chat screen. Build it with New.
type Model struct {
	run      RunFunc
	header   string
	info     func() Info
	preview  Preview
	complete func(prefix string) []string
	first    string // the prompt the chat starts with (SetFirst)
	vp       viewport.Model
	in       textinput.Model
	tr       transcript
	anchor   int // entry to scroll to on the next refresh (an approval's question); -1 = none
	running  bool
	cancel   context.CancelFunc
	usage    llm.Usage
	calls    int
	approval *ApprovalMsg
	never    map[string]bool // tools answered "never": refused without asking
	form     *form           // an MCP elicitation being answered (elicit.go)
	width    int
	height   int
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
// back to the original pasted text in insertion order"). Pasted CR and
// CRLF line ends become LF.
const PasteThreshold = 200

// SetSteer makes Enter while a prompt runs queue the typed text as a
// steering message through steer (the CLI passes
// strata.Session.SteerRunning): it reaches the model before the loop's
// next model call, and steer reports true. When steer reports false (the
// running prompt's loop had already ended; nothing was queued) the text
// runs as the next prompt once the running one returns. Without SetSteer,
// Enter is ignored while a prompt runs.
func (m *Model) SetSteer(steer func(text string) bool) { m.steer = steer }

// SetInfo makes the status bar show what info returns (called on every
// redraw): provider, model, session, context use and cost.
func (m *Model) SetInfo(info func() Info) { m.info = info }

// SetPreview makes approval questions show what preview returns (the diff
// of an fs_write) before the decision.
func (m *Model) SetPreview(p Preview) { m.preview = p }

// SetComplete makes Tab complete the "@path" word under the cursor with
// the paths complete returns for its prefix (the CLI lists the workspace
// through the fs_read path rules).
func (m *Model) SetComplete(complete func(prefix string) []string) { m.complete = complete }

// New returns the chat screen; header is the status bar's text when no
// SetInfo is given (tests).
func New(run RunFunc, header string) *Model {
	in := textinput.New()
	in.Prompt = "› "
	in.Placeholder = "ask, /help, or /exit"
	in.Focus()
	vp := viewport.New(viewport.WithWidth(80), viewport.WithHeight(20))
	vp.MouseWheelDelta = 3
	return &Model{run: run, header: header, vp: vp, in: in, width: 80, height: 24, anchor: -1,
		never: map[string]bool{}, tr: transcript{plain: plainTerminal()}}
}

// SetFirst makes the chat start by running text as its first prompt
// ("" = none), as 'strata "a question"' does.
func (m *Model) SetFirst(text string) { m.first = text }

// Init implements tea.Model: the cursor blinks and the first prompt
// (SetFirst) starts.
func (m *Model) Init() tea.Cmd {
	if m.first == "" {
		return textinput.Blink
	}
	m.note(kUser, m.first)
	return tea.Batch(textinput.Blink, m.start(m.first))
}

// Transcript returns the transcript shown so far as plain text.
func (m *Model) Transcript() string { return m.tr.plainText() }

// Rendered returns the transcript as the screen lays it out at width
// columns (styled unless the terminal is plain): what the CLI prints to
// the terminal's scrollback when the chat ends.
func (m *Model) Rendered(width int) string {
	lines, _ := m.tr.lines(width)
	return strings.Join(lines, "\n")
}

// Update implements tea.Model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.vp.SetWidth(msg.Width)
		m.vp.SetHeight(max(msg.Height-3, 3))
		m.in.SetWidth(max(msg.Width-4, 10))
		m.refresh()
	case EventMsg:
		m.observe(msg.Event)
	case NoticeMsg:
		m.note(kNotice, strings.TrimRight(msg.Text, "\n"))
	case ApprovalMsg:
		return m, m.ask(msg)
	case ElicitMsg:
		m.startForm(msg)
	case doneMsg:
		m.running, m.cancel = false, nil
		switch {
		case msg.cancelled:
			m.note(kNotice, "⊘ cancelled")
		case msg.err != nil && !m.quitting:
			m.note(kError, fmt.Sprintf("strata: %v", msg.err))
		}
		if len(m.next) > 0 {
			text := m.next[0]
			m.next = m.next[1:]
			if text == "/exit" {
				m.quitting = true
				return m, tea.Quit
			}
			m.note(kUser, text)
			return m, m.start(text)
		}
	case tea.MouseWheelMsg:
		m.vp, _ = m.vp.Update(msg)
		return m, nil
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		content := strings.ReplaceAll(strings.ReplaceAll(msg.Content, "\r\n", "\n"), "\r", "\n")
		if len(content) > PasteThreshold || strings.Contains(content, "\n") {
			ph := fmt.Sprintf("[Pasted text #%d: %d lines, %d bytes]", len(m.pastes)+1, strings.Count(strings.TrimSuffix(content, "\n"), "\n")+1, len(content))
			m.pastes = append(m.pastes, paste{placeholder: ph, text: content})
			content = ph
		}
		var cmd tea.Cmd
		m.in, cmd = m.in.Update(tea.PasteMsg{Content: content})
		return m, cmd
	}
	var cmd tea.Cmd
	m.in, cmd = m.in.Update(msg)
	return m, cmd
}

// ask shows an approval question: what the call will do, then waits for a
// key. A tool answered "never" earlier is refused at once.
func (m *Model) ask(a ApprovalMsg) tea.Cmd {
	c := a.Request.Call
	if m.never[c.Name] {
		a.Reply <- agent.RejectAlways
		m.note(kNotice, fmt.Sprintf("⊘ %s refused without asking (you answered never)", c.Name))
		return nil
	}
	q, diff := question(c, m.preview)
	m.anchor = len(m.tr.entries)
	m.tr.add(kAsk, q)
	if diff != "" {
		m.tr.add(kDiff, diff)
	}
	m.approval = &a
	m.refresh()
	return nil
}

// scroll handles the transcript's keys: PgUp/PgDn always, Up/Down, Home
// and End when the input is empty. It reports whether k was one.
func (m *Model) scroll(k tea.KeyPressMsg) bool {
	empty := m.in.Value() == "" || m.approval != nil
	switch k.String() {
	case "pgup":
		m.vp.PageUp()
	case "pgdown":
		m.vp.PageDown()
	case "up":
		if !empty {
			return false
		}
		m.vp.ScrollUp(1)
	case "down":
		if !empty {
			return false
		}
		m.vp.ScrollDown(1)
	case "home":
		if !empty {
			return false
		}
		m.vp.GotoTop()
	case "end":
		if !empty {
			return false
		}
		m.vp.GotoBottom()
	default:
		return false
	}
	return true
}

// key handles a key press: scrolling, approval answers, cancel, quit,
// completion, send.
func (m *Model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if m.form != nil {
		return m.formKey(k)
	}
	if m.scroll(k) {
		return m, nil
	}
	if a := m.approval; a != nil {
		key := k.String()
		if k.Text == "N" {
			key = "N"
		}
		if d, ok := approvalKeys[key]; ok {
			a.Reply <- d
			m.approval = nil
			if d == agent.RejectAlways {
				m.never[a.Request.Call.Name] = true
			}
			m.note(kNotice, answerText(a.Request.Call.Name, d))
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
	case "tab":
		m.completeMention()
		return m, nil
	case "enter":
		return m.send()
	}
	var cmd tea.Cmd
	m.in, cmd = m.in.Update(k)
	return m, cmd
}

// send runs the input as a prompt, or steers the running one with it.
func (m *Model) send() (tea.Model, tea.Cmd) {
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
			m.note(kUser, "(after the running prompt) "+shown)
			return m, nil
		}
		if m.steer(text) {
			m.note(kUser, "(steering) "+shown)
		} else {
			m.next = append(m.next, text)
			m.note(kUser, "(next prompt: the running one had ended) "+shown)
		}
		return m, nil
	}
	if text == "/exit" || text == "/quit" {
		m.quitting = true
		return m, tea.Quit
	}
	if text == "/clear" {
		m.tr.clear()
	}
	m.note(kUser, shown)
	m.vp.GotoBottom()
	return m, m.start(text)
}

// start runs text as a prompt; its end comes back as a doneMsg.
func (m *Model) start(text string) tea.Cmd {
	ctx, cancel := context.WithCancel(context.Background())
	m.running, m.cancel = true, cancel
	return func() tea.Msg {
		_, err := m.run(ctx, text)
		cancelled := ctx.Err() != nil && err != nil
		cancel()
		return doneMsg{err: err, cancelled: cancelled}
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

// completeMention completes the "@path" word at the end of the input with
// the longest common prefix of the paths SetComplete's function returns,
// listing them in the transcript when there are several.
func (m *Model) completeMention() {
	v := m.in.Value()
	at := strings.LastIndexAny(v, " \t")
	word := v[at+1:]
	if m.complete == nil || !strings.HasPrefix(word, "@") {
		return
	}
	paths := m.complete(word[1:])
	if len(paths) == 0 {
		return
	}
	common := paths[0]
	for _, p := range paths[1:] {
		for !strings.HasPrefix(p, common) {
			common = common[:len(common)-1]
		}
	}
	m.in.SetValue(v[:at+1] + "@" + common)
	m.in.CursorEnd()
	if len(paths) > 1 {
		m.note(kNotice, strings.Join(paths, "  "))
	}
}

// observe renders one loop event into the transcript and the status.
func (m *Model) observe(e event.Event) {
	switch e.Kind {
	case event.MessageUpdate:
		if e.Delta != nil && e.Delta.Type == llm.DeltaText {
			m.tr.stream(e.Delta.Text)
			m.refresh()
		}
	case event.ToolExecutionStart:
		m.note(kTool, fmt.Sprintf("⏺ %s %s", e.ToolCall.Name, callInput(*e.ToolCall)))
	case event.ToolExecutionEnd:
		m.result(e.ToolCall, e.ToolResult)
	case event.ToolCallDenied:
		m.note(kNotice, fmt.Sprintf("⊘ %s denied: %s", e.ToolCall.Name, e.Text))
	case event.AgentStopped:
		m.note(kNotice, e.Text)
	case event.Compaction:
		m.note(kNotice, "[compaction: "+e.Text+"]")
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

// resultLines is how many lines of a tool result the transcript shows (an
// fs_write diff is shown whole).
const resultLines = 8

// result shows a tool result: an fs_write's summary and its whole diff,
// else the first resultLines lines.
func (m *Model) result(call, r *llm.Block) {
	if r == nil {
		return
	}
	var parts []string
	for _, b := range r.Content {
		switch b.Type {
		case llm.BlockText:
			parts = append(parts, b.Text)
		case llm.BlockImage:
			parts = append(parts, "[image "+b.MediaType+"]")
		}
	}
	text := strings.TrimRight(strings.Join(parts, "\n"), "\n")
	if r.IsError {
		text = "error: " + text
	}
	if call != nil && call.Name == "fs_write" && !r.IsError {
		if summary, diff, ok := strings.Cut(text, "\n\n"); ok {
			m.tr.add(kResult, summary)
			m.note(kDiff, diff)
			return
		}
	}
	lines := strings.Split(text, "\n")
	if len(lines) > resultLines {
		lines = append(lines[:resultLines], fmt.Sprintf("… %d more line(s)", len(lines)-resultLines))
	}
	m.note(kResult, strings.Join(lines, "\n"))
}

// note adds an entry and redraws.
func (m *Model) note(k kind, text string) {
	m.tr.add(k, text)
	m.refresh()
}

// refresh lays the transcript out at the window's width; the view follows
// the end when it was there (scrolled up, it stays put), and jumps to a
// new approval question.
func (m *Model) refresh() {
	follow := m.vp.AtBottom() || m.vp.TotalLineCount() <= m.vp.Height()
	lines, start := m.tr.lines(m.width)
	m.vp.SetContentLines(lines)
	switch {
	case m.anchor >= 0 && m.anchor < len(start):
		// the question and as much of its diff as fits; the answer keys
		// are on the prompt line
		m.vp.GotoBottom()
		if first := start[m.anchor]; m.vp.YOffset() > first {
			m.vp.SetYOffset(first)
		}
		m.anchor = -1
	case follow:
		m.vp.GotoBottom()
	}
}

// Usage returns the tokens of the model calls so far and their number.
func (m *Model) Usage() (llm.Usage, int) { return m.usage, m.calls }

// Status is the status bar: provider, model, session, model calls, tokens
// (input, output, cache read, cache write), context use, cost and state,
// fitted to the window's width (see statusLine: the session id, cost and
// state are never dropped).
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
	case !m.vp.AtBottom():
		state, short = fmt.Sprintf("scrolled %d%% (End: latest)", int(m.vp.ScrollPercent()*100)), "scrolled"
	}
	in := Info{Provider: m.header}
	if m.info != nil {
		in = m.info()
	}
	u := m.usage
	if in.Usage != nil {
		u = *in.Usage
	}
	return statusLine(in, m.calls, u, state, short, m.width)
}

// View implements tea.Model.
func (m *Model) View() tea.View {
	if m.quitting {
		return tea.NewView("")
	}
	bottom := m.in.View()
	if m.approval != nil {
		bottom = clipCols(approvalPrompt(m.approval.Request.Call.Name), m.width)
	}
	v := tea.NewView(m.Status() + "\n" + m.vp.View() + "\n" + strings.Repeat("─", max(m.width, 1)) + "\n" + bottom)
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
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

// write adds text the form code (elicit.go) shows to the transcript as a
// notice.
func (m *Model) write(text string) { m.note(kNotice, strings.Trim(text, "\n")) }
