package panels

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/strata-agent/strata/prompt"
)

// Fixed panel ids (docs/panels.md, "fixed panels"): Context Pilot gives
// each panel type its own id, so a panel that appears or disappears never
// renumbers another. Spine and Scratchpad have no source in strata and are
// never shown; their ids stay reserved.
const (
	IDTodo       = "P1" // todo list: prompt.Context.Task and Todos
	IDLibrary    = "P2" // agents and skills: Context.Agents, Context.Skills
	IDStatistics = "P3" // usage so far: Context.Usage, message counts
	IDTools      = "P4" // the tools offered: Context.Tools
	IDTree       = "P5" // the project's files: Context.FileTree
	IDMemories   = "P6" // knowledge: Context.Knowledge
	IDSpine      = "P7" // no source in strata
	IDLogs       = "P8" // the loop's log: Context.Logs
	IDScratchpad = "P9" // no source in strata
	// FirstDynamic is the number of the first dynamic panel id: files,
	// hook outputs, the summary and conversation history chunks get P10,
	// P11, … in the order they first appear, and keep their id for the
	// layout instance's life.
	FirstDynamic = 10
)

// Item is one context panel (Context Pilot's ContextItem).
type Item struct {
	ID        string // "P1" … "P9" fixed, "P10" and up dynamic
	Header    string // e.g. "File: src/main.go"
	Content   string
	Refreshed int64 // Unix ms of the last content change; 0 = unknown
	key       string
}

// fixedItems returns the fixed panels strata has content for, in id order.
// Refreshed is set only where the source carries a time.
func fixedItems(c *prompt.Context) []Item {
	var out []Item
	add := func(id, header, content string, refreshed int64) {
		if content != "" {
			out = append(out, Item{ID: id, Header: header, Content: content, Refreshed: refreshed, key: id})
		}
	}
	todo, changed := todoContent(c)
	add(IDTodo, "Todo List", todo, changed)
	add(IDLibrary, "Library", libraryContent(c), 0)
	add(IDStatistics, "Statistics", statisticsContent(c), 0)
	add(IDTools, "Tools", toolsContent(c), 0)
	add(IDTree, "Tree", c.FileTree, 0)
	add(IDMemories, "Memories", c.Knowledge, 0)
	logs, last := logsContent(c)
	add(IDLogs, "Logs", logs, last)
	return out
}

// dynamicItems returns the dynamic panels in a fixed order (summary, hook
// outputs, files, command results, history chunks) with their keys; ids are assigned by the
// Layout.
func dynamicItems(c *prompt.Context, msgTime func(int) int64) []Item {
	var out []Item
	add := func(key, header, content string, refreshed int64) {
		if content != "" {
			out = append(out, Item{Header: header, Content: content, Refreshed: refreshed, key: key})
		}
	}
	add("summary", "Conversation Summary", c.OwnSummary(), 0)
	for i, h := range c.HookOutputs {
		add("hook:"+strconv.Itoa(i), "Hook Output "+strconv.Itoa(i+1), h, 0)
	}
	for _, f := range c.Files {
		add("file:"+f.Path, "File: "+f.Path, f.Content, f.Refreshed)
	}
	for _, r := range c.Results {
		add("result:"+r.Key, r.Header, r.Content, r.Refreshed)
	}
	for _, d := range c.Detached {
		add(fmt.Sprintf("history:%d-%d", d.First, d.Last), chunkName(d, msgTime), d.Text, d.At)
	}
	return out
}

// chunkName names a history panel as Context Pilot does: "Chat HH:MM–HH:MM"
// from its first and last message times (UTC), or "Chat (N)" with its
// message count when a time is unknown.
func chunkName(d prompt.Detached, msgTime func(int) int64) string {
	first, last := msgTime(d.First), msgTime(d.Last)
	if first > 0 && last > 0 {
		return "Chat " + hhmm(first) + "–" + hhmm(last)
	}
	return fmt.Sprintf("Chat (%d)", d.Last-d.First+1)
}

// todoContent renders the task context and every todo list; changed is
// the newest list change.
func todoContent(c *prompt.Context) (string, int64) {
	var b strings.Builder
	if c.Task != "" {
		b.WriteString(c.Task)
	}
	var changed int64
	for _, t := range c.Todos {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "[%s] %s", t.ID, t.Description)
		for _, task := range t.Tasks {
			mark := " "
			if task.Done {
				mark = "x"
			}
			fmt.Fprintf(&b, "\n- [%s] %s", mark, task.Task)
		}
		changed = max(changed, t.Changed)
	}
	return b.String(), changed
}

func libraryContent(c *prompt.Context) string {
	var b strings.Builder
	section := func(title string, entries []prompt.LibraryEntry) {
		if len(entries) == 0 {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(title + ":\n")
		for _, e := range entries {
			b.WriteString("- " + e.Name + ": " + e.Description + " (" + e.Path + ")\n")
		}
	}
	section("Agents", c.Agents)
	skills := make([]prompt.LibraryEntry, len(c.Skills))
	for i, s := range c.Skills {
		skills[i] = prompt.LibraryEntry{Name: s.Name, Description: s.Description, Path: s.Path}
	}
	section("Skills", skills)
	return b.String()
}

// statisticsContent is the usage so far and the message counts; empty
// (no panel) before the loop's first model call has used any token.
func statisticsContent(c *prompt.Context) string {
	u := c.Usage
	if u.PromptTokens()+u.Output == 0 {
		return ""
	}
	detached := 0
	if n := len(c.Detached); n > 0 {
		detached = c.Detached[n-1].Last + 1
	}
	return fmt.Sprintf("Tokens used so far: %d input, %d cache read, %d cache write, %d output\n"+
		"Messages: %d live, %d detached into %d history panels",
		u.Input, u.CacheRead, u.CacheWrite, u.Output, len(c.History), detached, len(c.Detached))
}

func toolsContent(c *prompt.Context) string {
	var b strings.Builder
	names := make([]string, len(c.Tools))
	desc := map[string]string{}
	for i, t := range c.Tools {
		names[i] = t.Name
		first, _, _ := strings.Cut(strings.TrimSpace(t.Description), "\n")
		desc[t.Name] = first
	}
	sort.Strings(names)
	for _, n := range names {
		b.WriteString("- " + n + ": enabled")
		if desc[n] != "" {
			b.WriteString(" — " + desc[n])
		}
		b.WriteString("\n")
	}
	return b.String()
}

func logsContent(c *prompt.Context) (string, int64) {
	var b strings.Builder
	var last int64
	for _, e := range c.Logs {
		b.WriteString("[" + ISO(e.At) + "] " + e.Text + "\n")
		last = max(last, e.At)
	}
	return b.String(), last
}
