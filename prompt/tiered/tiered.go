// Package tiered is the tiered-assembly layout (docs/tiered.md): content is placed by stability, most stable first, with a
// cache breakpoint closing each non-empty tier (at most 4).
//
//	system   L0: system prompt + L0 reference files
//	[L0 history]                               ◆ breakpoint
//	user     L1 reference files, assistant "Ok."
//	[L1 history]                               ◆ breakpoint
//	… L2, L3 the same …
//	user     file tree, assistant "Ok."
//	user     working files, assistant "Ok."
//	[active history]
//	user     current prompt + system reminder
//
// Tiers come from a stability.Tracker the layout keeps per session: one
// Layout instance serves one session. Context items that are not files in the
// design (summary, skills, hook outputs, task, knowledge) are tracked and
// placed like files under a bracketed name, so the model still sees them.
package tiered

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/prompt/stability"
)

// Header constants (docs/tiered.md, "message array", rule 5).
const (
	FilesL0Header     = "# Reference Files (Stable)\n\nThese files are included for reference:\n\n"
	FilesL1Header     = "# Reference Files\n\nThese files are included for reference:\n\n"
	FilesL2Header     = "# Reference Files (L2)\n\nThese files are included for reference:\n\n"
	FilesL3Header     = "# Reference Files (L3)\n\nThese files are included for reference:\n\n"
	FilesActiveHeader = "# Working Files\n\nHere are the files:\n\n"
	FileTreeHeader    = "# Repository Files\n\nComplete list of files in the repository:\n\n"
	Ok                = "Ok."
)

var tierHeaders = [4]string{FilesL0Header, FilesL1Header, FilesL2Header, FilesL3Header}

// Layout is the tiered layout. Create it with New (or the zero value with
// default thresholds); it is stateful.
type Layout struct {
	tracker stability.Tracker
	// Flat disables tiers and breakpoints: every item is active (the
	// design's flat fallback; docs/tiered.md, rule 1).
	Flat bool
}

// New returns a tiered layout with a fresh stability tracker.
func New() *Layout { return &Layout{} }

func init() {
	prompt.Register("tiered", func() prompt.Layout { return New() })
}

// Name returns "tiered".
func (*Layout) Name() string { return "tiered" }

// Fenced formats a file the design's way (docs/tiered.md, rule 6): the path, then the content in a fence
// without a language tag.
func Fenced(path, content string) string {
	return path + "\n```\n" + strings.TrimSuffix(content, "\n") + "\n```"
}

type entry struct {
	key, path, content string
}

// entries returns every context item as a file-like entry, in context order.
func entries(c *prompt.Context) []entry {
	var out []entry
	add := func(key, path, content string) {
		if content != "" {
			out = append(out, entry{key, path, content})
		}
	}
	add("ctx:summary", "[conversation summary]", c.Summary)
	add("ctx:task", "[task]", c.Task)
	add("ctx:knowledge", "[knowledge bases]", c.Knowledge)
	for i, h := range c.HookOutputs {
		add("ctx:hook:"+strconv.Itoa(i), "[hook output "+strconv.Itoa(i+1)+"]", h)
	}
	if len(c.Skills) > 0 {
		var b strings.Builder
		for _, s := range c.Skills {
			b.WriteString(s.Name + ": " + s.Description + " (file: " + s.Path + ")\n")
		}
		add("ctx:skills", "[skills]", b.String())
	}
	for _, f := range c.Files {
		add("file:"+f.Path, f.Path, f.Content)
	}
	return out
}

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

// Assemble lays out the request and advances the stability tracker by one
// request. It fails when the history is not a valid conversation.
func (l *Layout) Assemble(c *prompt.Context) (*llm.Request, *prompt.Breakdown, error) {
	if err := prompt.CheckHistory(c.History); err != nil {
		return nil, nil, err
	}
	ents := entries(c)
	past := c.History[:len(c.History)-1]
	items := make(map[string]string, len(ents)+len(past))
	for _, e := range ents {
		items[e.key] = hash(e.content)
	}
	for i := range past {
		items["history:"+strconv.Itoa(i)] = "immutable"
	}
	tiers := l.tracker.Update(items)
	if l.Flat {
		for k := range tiers {
			tiers[k] = stability.Active
		}
	}
	hist := historyTiers(past, tiers)

	req := &llm.Request{Model: c.Model, MaxTokens: c.MaxTokens, Tools: c.Tools}
	bd := &prompt.Breakdown{Layout: "tiered", Counter: c.CounterName()}
	if len(c.Tools) > 0 {
		bd.Spans = append(bd.Spans, prompt.Span{Name: "tools", Role: "tools", First: -1, Last: -1,
			Tokens: c.ToolTokens(c.Tools), Preview: prompt.ToolNames(c.Tools)})
	}
	files := func(t stability.Tier) string {
		var parts []string
		for _, e := range ents {
			if tiers[e.key] == t {
				parts = append(parts, Fenced(e.path, e.content))
			}
		}
		return strings.Join(parts, "\n\n")
	}
	addHistory := func(t stability.Tier) {
		for i, m := range past {
			if hist[i] == t {
				req.Messages = append(req.Messages, m)
			}
		}
	}
	breakAtLast := func() {
		if n := len(req.Messages); n > 0 {
			req.Breakpoints = append(req.Breakpoints, llm.Breakpoint{Target: llm.BreakMessage, Message: n - 1, Block: len(req.Messages[n-1].Content) - 1})
		}
	}
	span := func(name string, first int, text string, brk bool) {
		n := c.Tokens(text)
		for _, m := range req.Messages[first:] {
			n += c.BlockTokens(m.Content)
		}
		if text != "" && len(req.Messages) > first {
			n -= c.Tokens(text) // counted in the messages already
		}
		bd.Spans = append(bd.Spans, prompt.Span{Name: name, Role: "mixed", First: first, Last: len(req.Messages) - 1,
			Tokens: n, Preview: prompt.Preview(text, 60), Break: brk})
	}

	// L0: the system message, then L0 history.
	system := c.System
	if f := files(stability.L0); f != "" {
		system = join(system, FilesL0Header+f)
	}
	if system != "" {
		req.System = []llm.Block{llm.TextBlock(system)}
	}
	addHistory(stability.L0)
	if system != "" || len(req.Messages) > 0 {
		brk := !l.Flat
		if brk {
			if len(req.Messages) > 0 {
				breakAtLast()
			} else {
				req.Breakpoints = append(req.Breakpoints, llm.Breakpoint{Target: llm.BreakSystem, Block: 0})
			}
		}
		bd.Spans = append(bd.Spans, prompt.Span{Name: "L0 system + history", Role: "system", First: -1, Last: len(req.Messages) - 1,
			Tokens: c.Tokens(system) + estimate(c, req.Messages), Preview: prompt.Preview(system, 60), Break: brk})
	}
	// L1–L3: a files pair (if any), then the tier's history.
	for t := stability.L1; t <= stability.L3; t++ {
		first := len(req.Messages)
		text := ""
		if f := files(t); f != "" {
			text = tierHeaders[t] + f
			req.Messages = append(req.Messages, llm.UserText(text), llm.AssistantText(Ok))
		}
		addHistory(t)
		if len(req.Messages) > first {
			breakAtLast()
			span(t.String()+" files + history", first, text, true)
		}
	}
	// Uncached sections.
	if c.FileTree != "" {
		first := len(req.Messages)
		text := FileTreeHeader + c.FileTree
		req.Messages = append(req.Messages, llm.UserText(text), llm.AssistantText(Ok))
		span("file tree", first, text, false)
	}
	if f := files(stability.Active); f != "" {
		first := len(req.Messages)
		text := FilesActiveHeader + f
		req.Messages = append(req.Messages, llm.UserText(text), llm.AssistantText(Ok))
		span("working files", first, text, false)
	}
	first := len(req.Messages)
	addHistory(stability.Active)
	if len(req.Messages) > first {
		span("active history", first, "", false)
	}
	cur := withReminder(c.History[len(c.History)-1], c.Reminder)
	first = len(req.Messages)
	req.Messages = append(req.Messages, cur)
	span("current prompt", first, cur.Text(), false)

	if len(req.Breakpoints) > llm.MaxBreakpoints {
		return nil, nil, fmt.Errorf("tiered: %d breakpoints (internal error: at most one per tier)", len(req.Breakpoints))
	}
	bd.Breakpoints = len(req.Breakpoints)
	for _, s := range bd.Spans {
		bd.TotalTokens += s.Tokens
	}
	return req, bd, nil
}

// historyTiers returns the tier of each past message. History is placed in
// conversation order, so tiers must not decrease in stability along it; and a
// tier's history must end with a user message, so that a tool_use is never
// separated from its tool_result by the next tier's block (consecutive user
// or assistant turns are merged by the Anthropic API). Messages that would
// end a tier with an assistant message move to the next, less stable tier.
func historyTiers(past []llm.Message, tiers map[string]stability.Tier) []stability.Tier {
	out := make([]stability.Tier, len(past))
	for i := range past {
		out[i] = tiers["history:"+strconv.Itoa(i)]
		if i > 0 && out[i] < out[i-1] {
			out[i] = out[i-1]
		}
	}
	for i := len(past) - 2; i >= 0; i-- {
		if out[i] != out[i+1] && past[i].Role == llm.RoleAssistant {
			out[i] = out[i+1]
		}
	}
	if n := len(past); n > 0 && past[n-1].Role == llm.RoleAssistant {
		// The current prompt follows directly; the last assistant message
		// must stay adjacent to it only when it holds tool_use blocks.
		if len(past[n-1].ToolUses()) > 0 {
			out[n-1] = stability.Active
			for i := n - 2; i >= 0 && out[i] != out[i+1] && past[i].Role == llm.RoleAssistant; i-- {
				out[i] = out[i+1]
			}
		}
	}
	return out
}

// withReminder appends the reminder to the message's last text block (a
// tool-result-only message gets none).
func withReminder(m llm.Message, reminder string) llm.Message {
	if reminder == "" {
		return m
	}
	blocks := append([]llm.Block(nil), m.Content...)
	for i := len(blocks) - 1; i >= 0; i-- {
		if blocks[i].Type == llm.BlockText {
			blocks[i].Text += "\n\n" + reminder
			return llm.Message{Role: m.Role, Content: blocks}
		}
	}
	return m
}

func estimate(c *prompt.Context, ms []llm.Message) int {
	n := 0
	for _, m := range ms {
		n += c.BlockTokens(m.Content)
	}
	return n
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n\n" + b
}
