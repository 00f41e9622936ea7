// Package tiered is the tiered-assembly layout (docs/tiered.md): content is placed by stability, most stable first, with a
// cache breakpoint closing each non-empty tier (at most 4).
//
//	system   L0: system prompt + symbol-map legend + L0 symbols + L0 reference files
//	[L0 history]                               ◆ breakpoint
//	user     L1 symbols + reference files, assistant "Ok."
//	[L1 history]                               ◆ breakpoint
//	… L2, L3 the same …
//	user     main symbol map, assistant "Ok."   (strata: active symbol blocks)
//	user     file tree, assistant "Ok."
//	user     URL context, assistant "Ok, I've reviewed the URL content."
//	user     review context, assistant "Ok, I've reviewed the code changes."
//	user     working files, assistant "Ok."
//	[active history]
//	user     current prompt + system reminder
//
// Every history range is native user/assistant pairs, so roles alternate.
// A section whose user/"Ok." pair would separate a tool_use from its
// tool_result (the next message carries tool results) is sent instead as a
// text block after those tool results (docs/tiered.md, rule 12).
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

// Layout is the tiered layout. Create it with New (or the zero value with
// default thresholds); it is stateful.
type Layout struct {
	tracker stability.Tracker
	// Flat disables tiers and breakpoints: every item is active (the
	// design's flat fallback; docs/tiered.md, rule 1). `--layout
	// tiered-flat` selects it.
	Flat bool
}

// New returns a tiered layout with a fresh stability tracker.
func New() *Layout { return &Layout{} }

// NewWith returns a tiered layout whose tracker uses th and, when eager,
// promotes every eligible item at once (stability.Tracker.Eager): the
// variants docs/tiered.md measures to choose the defaults.
func NewWith(th stability.Thresholds, eager bool) *Layout {
	return &Layout{tracker: stability.Tracker{Thresholds: th, Eager: eager}}
}

// NewFlat returns the flat fallback: the same sections, every item active,
// no cache breakpoint.
func NewFlat() *Layout { return &Layout{Flat: true} }

func init() {
	prompt.Register("tiered", func() prompt.Layout { return New() })
	prompt.Register("tiered-flat", func() prompt.Layout { return NewFlat() })
}

// Name returns "tiered", or "tiered-flat" for the flat fallback.
func (l *Layout) Name() string {
	if l.Flat {
		return "tiered-flat"
	}
	return "tiered"
}

// Needs asks the runtime for every optional part the design places: the
// file tree, the system reminder, the symbol map, URL and review context,
// and the system prompt from system.md and system_extra.md.
func (*Layout) Needs() prompt.Needs {
	return prompt.Needs{FileTree: true, Reminder: true, Symbols: true, URLs: true, Review: true, SystemFiles: true}
}

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

// section is a user message answered by an acknowledgment, waiting for the
// next native message to decide its form (pair or folded text block).
type section struct {
	name, text, ack string
	brk             bool // a tier breakpoint closes it (the tier has no history)
}

// builder appends messages and breakpoints in prompt order.
type builder struct {
	c       *prompt.Context
	req     *llm.Request
	bd      *prompt.Breakdown
	pending []section
}

func (b *builder) breakAt(msg, block int) {
	b.req.Breakpoints = append(b.req.Breakpoints, llm.Breakpoint{Target: llm.BreakMessage, Message: msg, Block: block})
}

func (b *builder) span(name string, first int, tokens int, preview string, brk bool, note string) {
	b.bd.Spans = append(b.bd.Spans, prompt.Span{Name: name, Role: "mixed", First: first, Last: len(b.req.Messages) - 1,
		Tokens: tokens, Preview: prompt.Preview(preview, 60), Break: brk, Note: note})
}

// native appends a conversation message, first placing the pending
// sections: as user/ack pairs before it, or — when m carries tool results,
// which must follow their tool_use directly — as text blocks after them.
func (b *builder) native(m llm.Message) {
	if len(b.pending) > 0 && m.Role == llm.RoleUser && hasToolResult(m) {
		m.Content = append([]llm.Block(nil), m.Content...)
		at := len(b.req.Messages)
		for _, s := range b.pending {
			m.Content = append(m.Content, llm.TextBlock(s.text))
			if s.brk {
				b.breakAt(at, len(m.Content)-1)
			}
			b.bd.Spans = append(b.bd.Spans, prompt.Span{Name: s.name, Role: "user", First: at, Last: at, Tokens: b.c.Tokens(s.text),
				Preview: prompt.Preview(s.text, 60), Break: s.brk, Note: "a text block after the tool results of message " + strconv.Itoa(at)})
		}
	} else {
		for _, s := range b.pending {
			first := len(b.req.Messages)
			b.req.Messages = append(b.req.Messages, llm.UserText(s.text), llm.AssistantText(s.ack))
			if s.brk {
				b.breakAt(first+1, 0)
			}
			b.span(s.name, first, b.c.Tokens(s.text)+b.c.Tokens(s.ack), s.text, s.brk, "")
		}
	}
	b.pending = nil
	b.req.Messages = append(b.req.Messages, m)
}

// Assemble lays out the request and advances the stability tracker by one
// request. It fails when the history is not a valid conversation.
func (l *Layout) Assemble(c *prompt.Context) (*llm.Request, *prompt.Breakdown, error) {
	if err := prompt.CheckHistory(c.History); err != nil {
		return nil, nil, err
	}
	ents := entries(c)
	syms := symbolEntries(c)
	past := c.History[:len(c.History)-1]
	items := make(map[string]string, len(ents)+len(syms)+len(past))
	for _, e := range append(append([]entry(nil), ents...), syms...) {
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

	b := &builder{c: c, req: &llm.Request{Model: c.Model, MaxTokens: c.MaxTokens, Tools: c.Tools},
		bd: &prompt.Breakdown{Layout: l.Name(), Counter: c.CounterName()}}
	if len(c.Tools) > 0 {
		b.bd.Spans = append(b.bd.Spans, prompt.Span{Name: "tools", Role: "tools", First: -1, Last: -1,
			Tokens: c.ToolTokens(c.Tools), Preview: prompt.ToolNames(c.Tools)})
	}
	inTier := func(es []entry, t stability.Tier) []entry {
		var out []entry
		for _, e := range es {
			if tiers[e.key] == t {
				out = append(out, e)
			}
		}
		return out
	}
	files := func(t stability.Tier) string {
		var parts []string
		for _, e := range inTier(ents, t) {
			parts = append(parts, Fenced(e.path, e.content))
		}
		return strings.Join(parts, "\n\n")
	}
	addHistory := func(t stability.Tier) (first int, n int) {
		first = -1
		for i, m := range past {
			if hist[i] == t {
				if first < 0 {
					first = len(b.req.Messages)
				}
				b.native(m)
				n++
			}
		}
		return first, n
	}

	// L0: the system message (system prompt, legend, L0 symbols, L0 files),
	// then L0 history.
	system := c.System
	if c.Symbols != nil && len(syms) > 0 {
		system = join(system, RepoMapHeader+strings.TrimSuffix(c.Symbols.Legend, "\n")+"\n\n"+symbolText(inTier(syms, stability.L0)))
		system = strings.TrimSuffix(system, "\n\n")
	}
	if f := files(stability.L0); f != "" {
		system = join(system, FilesL0Header+f)
	}
	if system != "" {
		b.req.System = []llm.Block{llm.TextBlock(system)}
	}
	if _, n := addHistory(stability.L0); system != "" || n > 0 {
		brk := !l.Flat
		if brk {
			if n > 0 {
				last := len(b.req.Messages) - 1
				b.breakAt(last, len(b.req.Messages[last].Content)-1)
			} else {
				b.req.Breakpoints = append(b.req.Breakpoints, llm.Breakpoint{Target: llm.BreakSystem, Block: 0})
			}
		}
		b.bd.Spans = append(b.bd.Spans, prompt.Span{Name: "L0 system + history", Role: "system", First: -1, Last: len(b.req.Messages) - 1,
			Tokens: c.Tokens(system) + estimate(c, b.req.Messages), Preview: prompt.Preview(system, 60), Break: brk})
	}
	// L1–L3: the tier's user/"Ok." pair (symbols + files), then the tier's
	// history, then the tier's breakpoint.
	for t := stability.L1; t <= stability.L3; t++ {
		text := ""
		if s := inTier(syms, t); len(s) > 0 {
			text = TierSymbolsHeader + symbolText(s)
		}
		if f := files(t); f != "" {
			text = join(strings.TrimSuffix(text, "\n"), tierHeaders[t]+f)
		}
		if text != "" {
			b.pending = append(b.pending, section{name: t.String() + " symbols + files", text: text, ack: Ok})
		}
		first, n := addHistory(t)
		if n > 0 {
			last := len(b.req.Messages) - 1
			b.breakAt(last, len(b.req.Messages[last].Content)-1)
			b.span(t.String()+" history", first, estimate(c, b.req.Messages[first:]), b.req.Messages[first].Text(), true, "")
		} else if text != "" {
			b.pending[len(b.pending)-1].brk = true
		}
	}
	// Uncached sections, in the design's order.
	if s := inTier(syms, stability.Active); len(s) > 0 {
		b.pending = append(b.pending, section{name: "symbol map", text: TierSymbolsHeader + symbolText(s), ack: Ok})
	}
	if c.FileTree != "" {
		b.pending = append(b.pending, section{name: "file tree", text: FileTreeHeader + c.FileTree, ack: Ok})
	}
	if u := URLContext(c.URLs); u != "" {
		b.pending = append(b.pending, section{name: "URL context", text: u, ack: URLOk})
	}
	if c.Review != "" {
		b.pending = append(b.pending, section{name: "review context", text: ReviewContextHeader + c.Review, ack: ReviewOk})
	}
	if f := files(stability.Active); f != "" {
		b.pending = append(b.pending, section{name: "working files", text: FilesActiveHeader + f, ack: Ok})
	}
	if first, n := addHistory(stability.Active); n > 0 {
		b.span("active history", first, estimate(c, b.req.Messages[first:]), "", false, "")
	}
	cur := withReminder(c.History[len(c.History)-1], c.Reminder)
	b.native(cur)
	last := len(b.req.Messages) - 1
	b.span("current prompt", last, c.BlockTokens(cur.Content), cur.Text(), false, "")

	if len(b.req.Breakpoints) > llm.MaxBreakpoints {
		return nil, nil, fmt.Errorf("tiered: %d breakpoints (internal error: at most one per tier)", len(b.req.Breakpoints))
	}
	b.bd.Breakpoints = len(b.req.Breakpoints)
	for _, s := range b.bd.Spans {
		b.bd.TotalTokens += s.Tokens
	}
	return b.req, b.bd, nil
}

func estimate(c *prompt.Context, ms []llm.Message) int {
	n := 0
	for _, m := range ms {
		n += c.BlockTokens(m.Content)
	}
	return n
}
