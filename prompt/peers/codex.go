package peers

import (
	"fmt"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// codex reproduces OpenAI's Codex CLI (openai/codex, codex-rs). Verified in
// the source:
//
//   - core/src/client.rs ModelClient.stream_responses_api sends the
//     Responses API request with the full instructions, the tools, the
//     conversation's input items, and prompt_cache_key = the conversation
//     id; no cache_control anywhere (OpenAI caches prefixes on its own).
//   - Session::build_initial_context (core/src/codex.rs; found by its text,
//     the search tool did not name the file) starts the input with
//     developer items (permissions and developer instructions) and user
//     items (AGENTS.md instructions, the environment context); when a
//     setting changes later, only the changed settings are recorded as
//     update items before the next user input. Taken from the issue: items
//     are appended and never rewritten.
//
// Mapping: instructions are Context.System (the only system block, which the
// Responses provider sends as instructions). Developer items are knowledge,
// task and skills; user context items are the summary, hook outputs, files
// and file tree. llm.Message has no developer role, so each group is one
// text block put before a user message's content (the Responses provider
// sends them as input_text parts of that message instead of separate
// items): at first before the first prompt, holding every item; later,
// before the user message that was last when something changed, holding
// only the new or changed items. Nothing already sent is rewritten and an
// item that disappears is not retracted. The layout remembers what it
// placed where: one instance per session. prompt_cache_key is
// Context.ConversationID, set on every request; only the OpenAI providers
// send it.
func init() { prompt.Register("codex", func() prompt.Layout { return &codex{} }) }

// codexPlacement is the items placed before the content of message msg.
type codexPlacement struct {
	msg   int
	items []codexItem
}

// codexItem is one context item as placed, with the key that identifies it
// across requests (its title, numbered when titles repeat).
type codexItem struct {
	key string
	item
}

type codex struct{ placed []codexPlacement }

func (*codex) Name() string { return "codex" }

// codexDeveloper are the item kinds codex sends as developer items.
var codexDeveloper = []itemKind{itemKnowledge, itemTask, itemSkills}

func (l *codex) Assemble(c *prompt.Context) (*llm.Request, *prompt.Breakdown, error) {
	b, err := newBuilder("codex", c)
	if err != nil {
		return nil, nil, err
	}
	last := len(c.History) - 1
	l.forgetBeyond(last)
	sent := map[string]string{}
	for _, p := range l.placed {
		for _, it := range p.items {
			sent[it.key] = it.body
		}
	}
	p := codexPlacement{msg: last}
	if len(l.placed) == 0 {
		p.msg = 0
	}
	seen := map[string]int{}
	for _, it := range contextItems(c) {
		key := it.title
		if seen[key]++; seen[key] > 1 {
			key = fmt.Sprintf("%s #%d", key, seen[key])
		}
		if body, ok := sent[key]; !ok || body != it.body {
			p.items = append(p.items, codexItem{key, it})
		}
	}
	if len(p.items) > 0 {
		l.placed = append(l.placed, p)
	}

	b.tools(c.Tools, false)
	b.system("instructions", c.System, false)
	blocks := make([][]llm.Block, len(l.placed))
	for j, p := range l.placed {
		var dev, ctx []item
		for _, it := range p.items {
			if kindIn(it.kind, codexDeveloper) {
				dev = append(dev, it.item)
			} else {
				ctx = append(ctx, it.item)
			}
		}
		for _, g := range []struct {
			tag   string
			items []item
		}{{"developer", dev}, {"user context", ctx}} {
			text := sections("", g.items, allItems...)
			if text == "" {
				continue
			}
			blocks[j] = append(blocks[j], llm.TextBlock(text))
			b.bd.Spans = append(b.bd.Spans, prompt.Span{Name: fmt.Sprintf("%s (before message %d)", g.tag, p.msg),
				Role: "user", First: p.msg, Last: p.msg, Tokens: c.Tokens(text), Preview: prompt.Preview(text, 60),
				Note: "appended, never rewritten"})
		}
	}
	for j := len(l.placed) - 1; j >= 0; j-- { // later placements first: each message keeps them in order
		if len(blocks[j]) > 0 {
			b.prepend(l.placed[j].msg, blocks[j]...)
		}
	}
	hist := prompt.Span{Name: "history", Role: "mixed", First: 0, Last: last,
		Preview: prompt.Preview(c.History[0].Text(), 60), Note: "no breakpoints: OpenAI caches prefixes by itself"}
	for _, m := range c.History {
		hist.Tokens += c.BlockTokens(m.Content)
	}
	b.bd.Spans = append(b.bd.Spans, hist)
	b.req.PromptCacheKey = c.ConversationID
	return b.finish()
}

// forgetBeyond drops placements on messages the history no longer has (a new
// or compacted conversation), so their items are placed again.
func (l *codex) forgetBeyond(last int) {
	kept := l.placed[:0]
	for _, p := range l.placed {
		if p.msg <= last {
			kept = append(kept, p)
		}
	}
	l.placed = kept
}
