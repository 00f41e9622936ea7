package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// printer renders loop events: streamed text with tool calls and results in
// text mode, one JSON object per line in json mode.
type printer struct {
	mu       sync.Mutex
	w        io.Writer
	json     bool
	enc      *json.Encoder
	lastText bool   // the last thing printed was streamed text
	session  string // json mode: the session id every event carries (setSession)
}

// setSession makes every later JSON event carry "session_id": id.
func (p *printer) setSession(id string) {
	p.mu.Lock()
	p.session = id
	p.mu.Unlock()
}

// withSession returns the JSON object b with "session_id" added first
// (docs/cli.md, "run --format json").
func withSession(b []byte, id string) []byte {
	if id == "" || len(b) < 2 || b[0] != '{' {
		return b
	}
	head, _ := json.Marshal(id)
	out := append([]byte(`{"session_id":`), head...)
	if b[1] != '}' {
		out = append(out, ',')
	}
	return append(out, b[1:]...)
}

// runResult is the last line of 'run --format json': the run's outcome in
// one object (docs/cli.md, "run --format json").
type runResult struct {
	Kind       string    `json:"kind"` // "result"
	SessionID  string    `json:"session_id"`
	LoopID     string    `json:"loop_id"`
	Answer     string    `json:"answer"`      // the text of the last assistant message
	StopReason string    `json:"stop_reason"` // its stop reason; "" when the run failed before an answer
	Usage      llm.Usage `json:"usage"`       // tokens of this run's model calls (and keep-alive pings)
	Turns      int       `json:"model_calls"`
	CostUSD    *float64  `json:"cost_usd"`        // null when the price is unknown
	Error      string    `json:"error,omitempty"` // why the run failed
}

// result writes r as the last JSON line.
func (p *printer) result(r runResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r.Kind = "result"
	_ = p.enc.Encode(r)
}

func newPrinter(w io.Writer, format string) *printer {
	p := &printer{w: w, json: format == "json"}
	p.enc = json.NewEncoder(w)
	p.enc.SetEscapeHTML(false)
	return p
}

func (p *printer) observe(e event.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		b, err := json.Marshal(e)
		if err != nil {
			_ = p.enc.Encode(map[string]string{"kind": "encoding_error", "error": err.Error(), "session_id": p.session})
			return
		}
		p.w.Write(append(withSession(b, p.session), '\n'))
		return
	}
	switch e.Kind {
	case event.MessageUpdate:
		if e.Delta.Type == llm.DeltaText {
			fmt.Fprint(p.w, e.Delta.Text)
			p.lastText = true
		}
	case event.ToolExecutionStart:
		p.newline()
		fmt.Fprintf(p.w, "⏺ %s %s\n", e.ToolCall.Name, compactJSON(e.ToolCall.Input))
	case event.ToolExecutionEnd:
		fmt.Fprintln(p.w, indentResult(e.ToolResult, 12))
	case event.ToolCallDenied:
		p.newline()
		fmt.Fprintf(p.w, "⊘ %s denied: %s\n", e.ToolCall.Name, e.Text)
	case event.AgentStopped:
		p.newline()
		fmt.Fprintln(p.w, e.Text)
	case event.ProviderError:
		p.newline()
	case event.Compaction:
		p.newline()
		fmt.Fprintf(p.w, "[compaction: %s]\n", e.Text)
	}
}

func (p *printer) newline() {
	if p.lastText {
		fmt.Fprintln(p.w)
		p.lastText = false
	}
}

// finish ends the output with a newline after streamed text.
func (p *printer) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.json {
		p.newline()
	}
}

// compactJSON renders a tool input on one line, without encoding/json's
// HTML escapes ("a > b", not "a \u003e b", which a provider's JSON may
// carry too).
func compactJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return string(raw)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// indentResult shows a tool result's text, at most maxLines lines, prefixed
// with "  ⎿ ".
func indentResult(b *llm.Block, maxLines int) string {
	var sb strings.Builder
	for _, c := range b.Content {
		switch c.Type {
		case llm.BlockText:
			sb.WriteString(c.Text)
		case llm.BlockImage:
			fmt.Fprintf(&sb, "[image %s]", c.MediaType)
		}
	}
	lines := strings.Split(strings.TrimRight(sb.String(), "\n"), "\n")
	more := 0
	if len(lines) > maxLines {
		more = len(lines) - maxLines
		lines = lines[:maxLines]
	}
	prefix := "  ⎿ "
	if b.IsError {
		prefix = "  ⎿ error: "
	}
	out := prefix + strings.Join(lines, "\n    ")
	if more > 0 {
		out += fmt.Sprintf("\n    … %d more line(s)", more)
	}
	return out
}
