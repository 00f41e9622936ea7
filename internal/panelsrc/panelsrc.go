// Package panelsrc holds the runtime sources of Context Pilot's dynamic
// panels that come from the loop and the workspace rather than from the
// conversation (docs/panels.md): the Git results panel, the Console panel
// (execute_bash output) and the Logs panel, each fed from the loop's event
// bus or run again before a request.
package panelsrc

import (
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// GitRefresh is how often the Git results panel runs git again: Context
// Pilot's "Timer-based refresh (120s)" (docs/panels.md, rule 5).
const GitRefresh = 120 * time.Second

// gitCommands are the git commands whose output the Git results panel
// shows, run in the workspace directory.
var gitCommands = [][]string{{"status", "--short", "--branch"}, {"log", "--oneline", "-n", "10"}}

// Git is the Git results panel of one loop: the output of
// gitCommands, run again when GitRefresh has passed since the last run.
// No panel when git is not installed or the directory is not a repository
// (checked again at the next refresh). Safe for concurrent use.
type Git struct {
	Dir     string
	mu      sync.Mutex
	ran     time.Time
	content string
}

// Result returns the panel at time now ("" content = no panel).
func (g *Git) Result(ctx context.Context, now time.Time) prompt.Result {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ran.IsZero() || now.Sub(g.ran) >= GitRefresh {
		g.ran, g.content = now, runGit(ctx, g.Dir)
	}
	return prompt.Result{Key: "git", Header: "Git results", Content: g.content}
}

// runGit runs gitCommands in dir and writes each as "$ git ARGS" then its
// output; "" when git fails (missing, not a repository).
func runGit(ctx context.Context, dir string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var b strings.Builder
	for _, args := range gitCommands {
		out, err := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...).Output()
		if err != nil {
			return ""
		}
		b.WriteString("$ git " + strings.Join(args, " ") + "\n" + strings.TrimRight(string(out), "\n") + "\n")
	}
	return b.String()
}

// Console panel limits: the last consoleCommands execute_bash calls, each
// cut to its last consoleLines output lines.
const (
	consoleCommands = 5
	consoleLines    = 40
)

// Console is the Console panel of one loop (Context Pilot's "Process
// stdout/stderr, live streaming"): the loop's last execute_bash commands
// with their output as it streamed (tool_execution_update lines) and, once
// the call ends, its result. Safe for concurrent use.
type Console struct {
	mu      sync.Mutex
	entries []consoleEntry
	changed int64 // Unix ms of the last change
}

type consoleEntry struct {
	id, command string
	lines       []string
}

// observe is a SubscribeSync observer of the loop's bus.
func (c *Console) Observe(e event.Event) {
	if e.ToolCall == nil || e.ToolCall.Name != "execute_bash" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch e.Kind {
	case event.ToolExecutionStart:
		var in struct {
			Command string `json:"command"`
		}
		_ = json.Unmarshal(e.ToolCall.Input, &in)
		c.entries = append(c.entries, consoleEntry{id: e.ToolCall.ID, command: in.Command})
		if len(c.entries) > consoleCommands {
			c.entries = c.entries[len(c.entries)-consoleCommands:]
		}
	case event.ToolExecutionUpdate:
		if x := c.entry(e.ToolCall.ID); x != nil {
			x.lines = append(x.lines, strings.Split(strings.TrimRight(e.Text, "\n"), "\n")...)
		}
	case event.ToolExecutionEnd:
		if x := c.entry(e.ToolCall.ID); x != nil && e.ToolResult != nil {
			x.lines = strings.Split(strings.TrimRight(resultText(*e.ToolResult), "\n"), "\n")
		}
	default:
		return
	}
	c.changed = e.Time.UnixMilli()
}

func (c *Console) entry(id string) *consoleEntry {
	for i := range c.entries {
		if c.entries[i].id == id {
			return &c.entries[i]
		}
	}
	return nil
}

// result is the panel: each command as "$ COMMAND" then its output lines.
func (c *Console) Result() prompt.Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, x := range c.entries {
		lines := x.lines
		if len(lines) > consoleLines {
			b.WriteString("$ " + x.command + "\n[" + strconv.Itoa(len(lines)-consoleLines) + " earlier lines]\n")
			lines = lines[len(lines)-consoleLines:]
		} else {
			b.WriteString("$ " + x.command + "\n")
		}
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
	}
	return prompt.Result{Key: "console", Header: "Console", Content: b.String(), Refreshed: c.changed}
}

// resultText is the text of a tool_result block: its text contents joined.
func resultText(b llm.Block) string {
	var parts []string
	for _, c := range b.Content {
		if c.Type == llm.BlockText {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Log keeps a loop's log entries for the Logs panel: compaction,
// denied tool calls, provider errors, stops and progress lines, with the
// time the bus stamped them. Safe for concurrent use.
type Log struct {
	mu      sync.Mutex
	entries []prompt.LogEntry
}

// Observe is a SubscribeSync observer: it only appends under a lock.
func (l *Log) Observe(e event.Event) {
	text := e.Text
	switch e.Kind {
	case event.Compaction, event.Progress, event.AgentStopped:
	case event.ToolCallDenied:
		name := ""
		if e.ToolCall != nil {
			name = e.ToolCall.Name
		}
		text = "tool call " + name + " denied: " + e.Text
	case event.ProviderError:
		text = "provider " + e.Provider + " error: " + e.Error
	default:
		return
	}
	l.mu.Lock()
	l.entries = append(l.entries, prompt.LogEntry{At: e.Time.UnixMilli(), Text: text})
	l.mu.Unlock()
}

// Snapshot returns the entries so far.
func (l *Log) Snapshot() []prompt.LogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]prompt.LogEntry(nil), l.entries...)
}

// PanelState is what the Git, Console and Log sources of one loop
// remember, as JSON: a driver that moves the loop's panel-sources hook
// between processes (agent.HookState, docs/durable.md) saves and loads it.
type PanelState struct {
	GitRan     int64             `json:"git_ran,omitempty"` // Unix ns of the last git run (0 = never)
	GitContent string            `json:"git_content,omitempty"`
	Console    []ConsoleEntry    `json:"console,omitempty"`
	Changed    int64             `json:"console_changed,omitempty"` // Unix ms of the console's last change
	Log        []prompt.LogEntry `json:"log,omitempty"`
}

// ConsoleEntry is one command of the Console panel in a PanelState.
type ConsoleEntry struct {
	ID      string   `json:"id"`
	Command string   `json:"command"`
	Lines   []string `json:"lines,omitempty"`
}

// Save returns the state of g, c and l.
func Save(g *Git, c *Console, l *Log) PanelState {
	var s PanelState
	g.mu.Lock()
	if !g.ran.IsZero() {
		s.GitRan = g.ran.UnixNano()
	}
	s.GitContent = g.content
	g.mu.Unlock()
	c.mu.Lock()
	for _, x := range c.entries {
		s.Console = append(s.Console, ConsoleEntry{ID: x.id, Command: x.command, Lines: append([]string(nil), x.lines...)})
	}
	s.Changed = c.changed
	c.mu.Unlock()
	s.Log = l.Snapshot()
	return s
}

// Load sets g, c and l to s.
func Load(s PanelState, g *Git, c *Console, l *Log) {
	g.mu.Lock()
	g.ran, g.content = time.Time{}, s.GitContent
	if s.GitRan != 0 {
		g.ran = time.Unix(0, s.GitRan)
	}
	g.mu.Unlock()
	c.mu.Lock()
	c.entries, c.changed = nil, s.Changed
	for _, x := range s.Console {
		c.entries = append(c.entries, consoleEntry{id: x.ID, command: x.Command, lines: append([]string(nil), x.Lines...)})
	}
	c.mu.Unlock()
	l.mu.Lock()
	l.entries = append([]prompt.LogEntry(nil), s.Log...)
	l.mu.Unlock()
}
