// Package peers reproduces, as strata layouts, how eight other agents lay a
// request out for the prompt cache: where they put the system prompt, the
// context and the tools, and which blocks carry cache_control. They let
// `strata bench cache` price what users run today next to cachefit, and
// `strata render --layout crush` show the body such an agent would send for a
// strata agent.
//
// Every peer is registered under its name (see Names) and built from its own
// source, read with the search tools and cited in its file: crush.go,
// opencode.go, cline.go, goose.go, openhands.go, aider.go, codex.go,
// langchain.go; docs/peers.md lists the rules side by side with their
// deviations. "BP(x)" below and in the files means a cache breakpoint
// (Anthropic cache_control, Bedrock cachePoint) on the last block of x, with
// the provider's default 5-minute TTL unless a file says otherwise.
//
// What strata's prompt.Context holds that a peer has no slot for is placed
// where that peer puts the nearest thing it has, and each file says where.
// Shared rules (not in any peer, so that every layout sees the same
// information and no peer pays for a strata-only feature):
//
//   - Context items are rendered as "## " markdown sections (contextItems),
//     in Context field order: summary, knowledge, task, hook outputs, files,
//     skills, file tree.
//   - Context.Reminder is appended to the last message after the breakpoints
//     are placed, as cachefit does: it never moves a breakpoint.
//   - A breakpoint never lands on a thinking or redacted_thinking block
//     (Anthropic rejects cache_control there): it goes on the message's last
//     block that can carry one, or is dropped when there is none.
//   - Breakpoints are returned in prompt order (tools → system → messages)
//     and a request never carries more than llm.MaxBreakpoints (Assemble
//     returns an error instead; no peer rule reaches it).
//
// Assemble fails, with an error naming the layout, when the history is not
// a valid conversation (prompt.CheckHistory). All peers but codex are
// stateless and safe for concurrent use; codex remembers where it placed
// context, so one instance serves one session (prompt.Layout's contract;
// prompt.Lookup returns a fresh instance).
package peers

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// Names returns the peer layout names in the order docs/peers.md lists them
// (every one is registered with prompt.Register).
func Names() []string {
	return []string{"crush", "opencode", "cline", "goose", "openhands", "aider", "codex", "langchain"}
}

// rule is a stateless peer layout: build places everything on a builder.
type rule struct {
	name  string
	build func(b *builder)
}

func (r rule) Name() string { return r.name }

func (r rule) Assemble(c *prompt.Context) (*llm.Request, *prompt.Breakdown, error) {
	b, err := newBuilder(r.name, c)
	if err != nil {
		return nil, nil, err
	}
	r.build(b)
	return b.finish()
}

// register registers a stateless peer under name.
func register(name string, build func(b *builder)) {
	prompt.Register(name, func() prompt.Layout { return rule{name: name, build: build} })
}

// builder accumulates one request and its breakdown.
type builder struct {
	c   *prompt.Context
	req *llm.Request
	bd  *prompt.Breakdown
}

// newBuilder checks c's history and starts a request holding a copy of it
// (the message slice is copied; blocks are copied only where a peer adds to
// a message, so c is never modified).
func newBuilder(name string, c *prompt.Context) (*builder, error) {
	if err := prompt.CheckHistory(c.History); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	msgs := make([]llm.Message, len(c.History))
	copy(msgs, c.History)
	return &builder{c: c,
		req: &llm.Request{Model: c.Model, MaxTokens: c.MaxTokens, Messages: msgs},
		bd:  &prompt.Breakdown{Layout: name, Counter: c.CounterName()}}, nil
}

// tools sets the request's tool specs, with BP(last tool) when mark is set.
func (b *builder) tools(specs []llm.ToolSpec, mark bool) {
	if len(specs) == 0 {
		return
	}
	b.req.Tools = specs
	if mark {
		b.req.Breakpoints = append(b.req.Breakpoints, llm.Breakpoint{Target: llm.BreakTools})
	}
	b.bd.Spans = append(b.bd.Spans, prompt.Span{Name: "tools", Role: "tools", First: -1, Last: -1,
		Tokens: b.c.ToolTokens(specs), Preview: prompt.ToolNames(specs), Break: mark})
}

// system appends a system block holding text (nothing when text is empty),
// with BP on it when mark is set. It reports whether a block was added.
func (b *builder) system(name, text string, mark bool) bool {
	if text == "" {
		return false
	}
	b.req.System = append(b.req.System, llm.TextBlock(text))
	if mark {
		b.req.Breakpoints = append(b.req.Breakpoints, llm.Breakpoint{Target: llm.BreakSystem, Block: len(b.req.System) - 1})
	}
	b.bd.Spans = append(b.bd.Spans, prompt.Span{Name: name, Role: "system", First: -1, Last: -1,
		Tokens: b.c.Tokens(text), Preview: prompt.Preview(text, 60), Break: mark})
	return true
}

// mark puts BP(message i) with the given TTL ("" = provider default) on the
// message's last block that can carry cache_control; a message already
// marked, or with no such block, is left alone.
func (b *builder) mark(i int, ttl string) {
	content := b.req.Messages[i].Content
	j := len(content) - 1
	for j >= 0 && (content[j].Type == llm.BlockThinking || content[j].Type == llm.BlockRedactedThinking) {
		j--
	}
	if j < 0 {
		return
	}
	if _, dup := b.req.BreakpointAt(llm.BreakMessage, i, j); dup {
		return
	}
	b.req.Breakpoints = append(b.req.Breakpoints, llm.Breakpoint{Target: llm.BreakMessage, Message: i, Block: j, TTL: ttl})
}

// lastUsers returns the indexes of the last n user messages, oldest first.
func (b *builder) lastUsers(n int) []int {
	var out []int
	for i := len(b.req.Messages) - 1; i >= 0 && len(out) < n; i-- {
		if b.req.Messages[i].Role == llm.RoleUser {
			out = append([]int{i}, out...)
		}
	}
	return out
}

// span records the messages first..last (inclusive; nothing when first >
// last) as one breakdown span; it closes with a breakpoint when any of its
// messages carries one.
func (b *builder) span(name, role string, first, last int, note string) {
	if first > last {
		return
	}
	s := prompt.Span{Name: name, Role: role, First: first, Last: last, Note: note,
		Preview: prompt.Preview(b.req.Messages[first].Text(), 60)}
	for i := first; i <= last; i++ {
		s.Tokens += b.c.BlockTokens(b.req.Messages[i].Content)
	}
	for _, bp := range b.req.Breakpoints {
		if bp.Target == llm.BreakMessage && bp.Message >= first && bp.Message <= last {
			s.Break = true
		}
	}
	if s.Tokens > 0 {
		b.bd.Spans = append(b.bd.Spans, s)
	}
}

// history records the whole message list as one "history" span whose note
// says which messages carry breakpoints and why.
func (b *builder) history(why string) {
	var at []string
	for _, bp := range b.req.Breakpoints {
		if bp.Target == llm.BreakMessage {
			at = append(at, fmt.Sprint(bp.Message))
		}
	}
	note := "no message breakpoints"
	if len(at) > 0 {
		note = fmt.Sprintf("breakpoints on messages %s (%s)", strings.Join(at, ", "), why)
	}
	b.span("history", "mixed", 0, len(b.req.Messages)-1, note)
}

// prepend puts blocks before message i's content (a copy; the context's
// history is not modified).
func (b *builder) prepend(i int, blocks ...llm.Block) {
	m := &b.req.Messages[i]
	m.Content = append(append([]llm.Block(nil), blocks...), m.Content...)
}

// finish appends the reminder, puts the breakpoints in prompt order, totals
// the breakdown and checks the breakpoint count.
func (b *builder) finish() (*llm.Request, *prompt.Breakdown, error) {
	if r := b.c.Reminder; r != "" {
		last := len(b.req.Messages) - 1
		m := &b.req.Messages[last]
		m.Content = append(append([]llm.Block(nil), m.Content...), llm.TextBlock(r))
		b.bd.Spans = append(b.bd.Spans, prompt.Span{Name: "reminder", Role: "user", First: last, Last: last,
			Tokens: b.c.Tokens(r), Preview: prompt.Preview(r, 60)})
	}
	rank := map[llm.BreakpointTarget]int{llm.BreakTools: 0, llm.BreakSystem: 1, llm.BreakMessage: 2}
	sort.SliceStable(b.req.Breakpoints, func(i, j int) bool {
		x, y := b.req.Breakpoints[i], b.req.Breakpoints[j]
		if rank[x.Target] != rank[y.Target] {
			return rank[x.Target] < rank[y.Target]
		}
		if x.Message != y.Message {
			return x.Message < y.Message
		}
		return x.Block < y.Block
	})
	if n := len(b.req.Breakpoints); n > llm.MaxBreakpoints {
		return nil, nil, fmt.Errorf("%s: %d cache breakpoints; Anthropic allows %d", b.bd.Layout, n, llm.MaxBreakpoints)
	}
	for _, s := range b.bd.Spans {
		b.bd.TotalTokens += s.Tokens
	}
	b.bd.Breakpoints = len(b.req.Breakpoints)
	return b.req, b.bd, nil
}

// itemKind names a prompt.Context field that holds context.
type itemKind int

const (
	itemSummary itemKind = iota
	itemKnowledge
	itemTask
	itemHook
	itemFile
	itemSkills
	itemTree
)

// item is one context item rendered as a "## " section.
type item struct {
	kind  itemKind
	title string
	body  string
}

func (it item) String() string { return "## " + it.title + "\n\n" + it.body }

// contextItems returns c's non-empty context items in Context field order.
func contextItems(c *prompt.Context) []item {
	var out []item
	add := func(k itemKind, title, body string) {
		if body != "" {
			out = append(out, item{k, title, body})
		}
	}
	add(itemSummary, "Conversation summary", c.Summary)
	add(itemKnowledge, "Knowledge bases", c.Knowledge)
	add(itemTask, "Task", c.Task)
	for _, h := range c.HookOutputs {
		add(itemHook, "Hook output", h)
	}
	for _, f := range c.Files {
		add(itemFile, "File: "+f.Path, "```\n"+f.Content+"\n```")
	}
	var skills []string
	for _, s := range c.Skills {
		skills = append(skills, s.Name+": "+s.Description+" (file: "+s.Path+")")
	}
	add(itemSkills, "Skills", strings.Join(skills, "\n"))
	add(itemTree, "Repository files", c.FileTree)
	return out
}

// sections returns head followed by the items of the given kinds, separated
// by blank lines ("" when all are empty).
func sections(head string, items []item, kinds ...itemKind) string {
	parts := []string{}
	if head != "" {
		parts = append(parts, head)
	}
	for _, it := range items {
		if kindIn(it.kind, kinds) {
			parts = append(parts, it.String())
		}
	}
	return strings.Join(parts, "\n\n")
}

func kindIn(k itemKind, kinds []itemKind) bool { return slices.Contains(kinds, k) }

// allItems lists every item kind.
var allItems = []itemKind{itemSummary, itemKnowledge, itemTask, itemHook, itemFile, itemSkills, itemTree}
