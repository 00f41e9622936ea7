// Package cachefit is strata's own layout: it lays a session out so that
// every request is, as far as the content allows, the previous request plus
// new bytes at the end, and puts the cache breakpoints where that prefix can
// be written and read back (Anthropic rules: ≤ 4 breakpoints, writes only at
// breakpoints, reads look back ≤ 20 blocks).
//
// Placement, most stable first:
//
//	system   the system instructions + the context items that are not
//	         working files (summary, knowledge, task, hook output, the files
//	         of the session's first request — agent resources and steering —
//	         as first seen, skills, file tree)  ◆
//	history  the conversation, in order; a working file (one that appears
//	         later, or a new version of a first-request file) is placed once
//	         per version, as a text block appended to the user message that
//	         was last when the version first appeared, and stays there
//	         ◆ on the ends of the last three user messages (rolling)
//	reminder appended after the last breakpoint, so it never breaks a prefix
//
// Once the session has idled past 5 minutes often enough that keeping its
// prefix for an hour is expected to pay (see gapModel), the breakpoints
// switch to keep-alive (see keepAliveBreakpoints): the prefix survives a
// pause for the price of a 1-hour write of one small block per request.
//
// Already-sent content is never moved or rewritten: a refreshed file is
// placed again, at the end, marked as superseding its earlier view, so the
// model sees the same information as with the other layouts (the latest
// version of every working file) while the prefix stays cacheable. The price
// is that earlier versions stay in the prompt.
package cachefit

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

func init() { prompt.Register("cachefit", func() prompt.Layout { return New() }) }

// rolling is the number of message breakpoints (the fourth closes the
// system prompt).
const rolling = llm.MaxBreakpoints - 1

// placement is one file version placed in the history.
type placement struct {
	msg     int    // index of the user message it is appended to
	key     string // path + content hash
	text    string
	content string // the version's full content
}

// Layout is the cachefit layout. It keeps, per session, where each working
// file version was placed: one instance serves one session (New).
type Layout struct {
	opt    Options
	placed []placement
	seen   map[string]bool
	latest map[string]string // path → the content of its latest placed version
	gaps   gapModel
	// static are the files of the session's first request, placed in the
	// system text as first seen (started: the first request was seen).
	static  []prompt.File
	started bool
}

// Options are cachefit's tunable parameters. The defaults (DefaultOptions)
// were chosen by 5-fold cross-validation over the train sessions of the
// managed scenario (README, "bench cache").
type Options struct {
	// DiffContext is the number of unchanged lines around each change in
	// the unified diff placed for a new version of a working file (≥ 0; 0 is
	// diff -U0: the hunk headers carry the line numbers, the earlier view
	// above carries the rest).
	DiffContext int
	// TTLRule decides when a request keeps its prefix alive for an hour
	// ("" = TTLPing; see gapModel).
	TTLRule TTLRule
	// PausePrior is how many gaps the session's overall pause rate counts
	// for in the per-state pause rate of TTLPing (k in gapModel; ≤ 0 = 1).
	PausePrior float64
}

// DefaultOptions are the options New uses.
var DefaultOptions = Options{DiffContext: 0, TTLRule: TTLPing, PausePrior: 1}

// New returns a layout for a new session with DefaultOptions.
func New() *Layout { return NewWith(DefaultOptions) }

// NewWith returns a layout for a new session with options o (a negative
// DiffContext counts as 0).
func NewWith(o Options) *Layout {
	o.DiffContext = max(o.DiffContext, 0)
	if o.TTLRule == "" {
		o.TTLRule = TTLPing
	}
	if o.PausePrior <= 0 {
		o.PausePrior = 1
	}
	return &Layout{opt: o, seen: map[string]bool{}, latest: map[string]string{}, gaps: gapModel{rule: o.TTLRule, prior: o.PausePrior}}
}

// Name returns "cachefit".
func (*Layout) Name() string { return "cachefit" }

// KeepsAlive reports true: cachefit's TTL choice counts on the runtime's
// keep-alive pings while a session idles (prompt.KeepAliveReporter; see
// gapModel).
func (*Layout) KeepsAlive() bool { return true }

// Assemble lays out c (see the package doc). It fails when the history is
// not a valid conversation or does not end with a user message.
func (l *Layout) Assemble(c *prompt.Context) (*llm.Request, *prompt.Breakdown, error) {
	if err := prompt.CheckHistory(c.History); err != nil {
		return nil, nil, err
	}
	last := len(c.History) - 1
	if c.History[last].Role != llm.RoleUser {
		return nil, nil, fmt.Errorf("cachefit: the history must end with a user message (got %s)", c.History[last].Role)
	}
	l.forgetBeyond(last)
	if !l.started {
		// The files of the first request are the session's static context
		// (agent resources, steering): system sections, frozen as first seen.
		l.started = true
		l.static = append([]prompt.File(nil), c.Files...)
		for _, f := range l.static {
			l.seen[f.Path+"\x00"+hash(f.Content)] = true
			l.latest[f.Path] = f.Content
		}
	}
	for _, f := range c.Files {
		key := f.Path + "\x00" + hash(f.Content)
		if l.seen[key] {
			continue
		}
		l.seen[key] = true
		text := "Working file " + f.Path + ":\n```\n" + f.Content + "\n```"
		if prev, ok := l.latest[f.Path]; ok {
			text = update(f.Path, prev, f.Content, text, l.opt.DiffContext)
		}
		l.latest[f.Path] = f.Content
		l.placed = append(l.placed, placement{msg: last, key: key, text: text, content: f.Content})
	}

	msgs := make([]llm.Message, len(c.History))
	copy(msgs, c.History)
	extra := map[int][]llm.Block{}
	for _, p := range l.placed {
		extra[p.msg] = append(extra[p.msg], llm.TextBlock(p.text))
	}
	for i, blocks := range extra {
		msgs[i].Content = append(append([]llm.Block(nil), msgs[i].Content...), blocks...)
	}
	keepAlive := l.gaps.observe(c.Now, func() requestSize {
		first, tail, since := turnSizes(c, msgs, last)
		return requestSize{prompt: l.promptTokens(c, msgs), first: first, tail: tail, since: since}
	})
	ttl := ""
	if keepAlive {
		ttl = "1h"
	}
	req := &llm.Request{Model: c.Model, MaxTokens: c.MaxTokens, Tools: c.Tools, Messages: msgs}
	bd := &prompt.Breakdown{Layout: "cachefit", Counter: c.CounterName()}
	if len(c.Tools) > 0 {
		bd.Spans = append(bd.Spans, prompt.Span{Name: "tools", Role: "tools", First: -1, Last: -1,
			Tokens: c.ToolTokens(c.Tools), Preview: prompt.ToolNames(c.Tools)})
	}
	if sys := systemText(c, l.static); sys != "" {
		req.System = []llm.Block{llm.TextBlock(sys)}
		req.Breakpoints = append(req.Breakpoints, llm.Breakpoint{Target: llm.BreakSystem, Block: 0, TTL: ttl})
		bd.Spans = append(bd.Spans, prompt.Span{Name: "system", Role: "system", First: -1, Last: -1,
			Tokens: c.Tokens(sys), Preview: prompt.Preview(sys, 60), Break: true})
	}
	var users []int
	if keepAlive {
		users = keepAliveBreakpoints(req, msgs, last)
	} else {
		// Rolling breakpoints on the ends of the last user messages, oldest
		// first; the newest is where this request writes the prefix the
		// next one reads.
		for i := last; i >= 0 && len(users) < rolling; i-- {
			if msgs[i].Role == llm.RoleUser {
				users = append(users, i)
			}
		}
		for j := len(users) - 1; j >= 0; j-- {
			i := users[j]
			req.Breakpoints = append(req.Breakpoints, llm.Breakpoint{Target: llm.BreakMessage, Message: i, Block: len(msgs[i].Content) - 1})
		}
	}
	files := 0
	for _, p := range l.placed {
		files += c.Tokens(p.text)
	}
	hist := 0
	for _, m := range c.History {
		hist += c.BlockTokens(m.Content)
	}
	bd.Spans = append(bd.Spans,
		prompt.Span{Name: "history", Role: "mixed", First: 0, Last: last, Tokens: hist,
			Preview: prompt.Preview(c.History[0].Text(), 60), Break: len(users) > 0,
			Note: breakNote(keepAlive, len(users))})
	if files > 0 {
		bd.Spans = append(bd.Spans, prompt.Span{Name: "working files (in history)", Role: "user", First: 0, Last: last,
			Tokens: files, Preview: fmt.Sprintf("%d file version(s)", len(l.placed))})
	}
	if c.Reminder != "" {
		m := &msgs[last]
		m.Content = append(append([]llm.Block(nil), m.Content...), llm.TextBlock(c.Reminder))
		bd.Spans = append(bd.Spans, prompt.Span{Name: "reminder", Role: "user", First: last, Last: last,
			Tokens: c.Tokens(c.Reminder), Preview: prompt.Preview(c.Reminder, 60)})
	}
	for _, s := range bd.Spans {
		bd.TotalTokens += s.Tokens
	}
	bd.Breakpoints = len(req.Breakpoints)
	return req, bd, nil
}

// forgetBeyond drops placements on messages the history no longer has (a
// new or compacted conversation), so they are placed again.
func (l *Layout) forgetBeyond(last int) {
	kept := l.placed[:0]
	for _, p := range l.placed {
		if p.msg <= last {
			kept = append(kept, p)
		} else {
			delete(l.seen, p.key)
		}
	}
	if len(kept) < len(l.placed) {
		l.latest = map[string]string{}
		for _, f := range l.static {
			l.latest[f.Path] = f.Content
		}
		for _, p := range kept {
			path, _, _ := strings.Cut(p.key, "\x00")
			l.latest[path] = p.content
		}
	}
	l.placed = kept
}

// update is the text placed for a new version of a working file already
// placed: a unified diff against the previous version when that is shorter
// than the whole new content (the model then has the same information: the
// earlier view plus the diff), else full, the whole new content.
func update(path, prev, cur, full string, context int) string {
	d, err := udiff.ToUnified("a/"+path, "b/"+path, prev, udiff.Strings(prev, cur), context)
	if err != nil || len(d)+64 >= len(full) {
		return "Working file " + path + " (updated; supersedes the earlier view above):\n```\n" + cur + "\n```"
	}
	return "Working file " + path + " changed; unified diff against the earlier view above:\n```diff\n" + d + "```"
}

// systemText is the system instructions followed by the context items that
// are not working files (static files included), as "## " sections.
func systemText(c *prompt.Context, static []prompt.File) string {
	var b strings.Builder
	b.WriteString(c.System)
	section := func(title, body string) {
		if body == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("## " + title + "\n\n" + body)
	}
	section("Conversation summary", c.Summary)
	section("Knowledge bases", c.Knowledge)
	section("Task", c.Task)
	for _, h := range c.HookOutputs {
		section("Hook output", h)
	}
	for _, f := range static {
		section("File: "+f.Path, "```\n"+f.Content+"\n```")
	}
	var skills []string
	for _, s := range c.Skills {
		skills = append(skills, s.Name+": "+s.Description+" (file: "+s.Path+")")
	}
	section("Skills", strings.Join(skills, "\n"))
	section("Repository files", c.FileTree)
	return b.String()
}

func hash(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return fmt.Sprintf("%016x", h.Sum64())
}
