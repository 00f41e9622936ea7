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
//     setting changes later, update items are recorded before the next
//     user input. Taken from the issue: items are appended and never
//     rewritten.
//
// Mapping: instructions are Context.System (the only system block, which the
// Responses provider sends as instructions). llm.Message has no developer
// role, so the developer text (knowledge, task, skills) and the user context
// text (summary, hook outputs, files, file tree) are two text blocks put
// before the first user message's content; the Responses provider sends them
// as input_text parts of that message instead of two separate items. When
// either text changes, the new version is put before the content of the
// user message that was last at that time, and earlier versions stay where
// they were (this layout remembers the placements: one instance per
// session). prompt_cache_key is Context.ConversationID, set on every
// request; only the OpenAI providers send it.
func init() { prompt.Register("codex", func() prompt.Layout { return &codex{} }) }

// codexPlacement is one version of the context texts, placed before the
// content of message msg; a text whose has flag is false did not change.
type codexPlacement struct {
	msg            int
	developer, ctx string
	hasDev, hasCtx bool
}

type codex struct{ placed []codexPlacement }

func (*codex) Name() string { return "codex" }

func (l *codex) Assemble(c *prompt.Context) (*llm.Request, *prompt.Breakdown, error) {
	b, err := newBuilder("codex", c)
	if err != nil {
		return nil, nil, err
	}
	items := contextItems(c)
	developer := sections("", items, itemKnowledge, itemTask, itemSkills)
	ctx := sections("", items, itemSummary, itemHook, itemFile, itemTree)
	last := len(c.History) - 1
	l.forgetBeyond(last)
	curDev, curCtx := l.latest()
	if first := len(l.placed) == 0; first || developer != curDev || ctx != curCtx {
		p := codexPlacement{msg: last}
		if first {
			p.msg = 0
		}
		if first || developer != curDev {
			p.developer, p.hasDev = developer, true
		}
		if first || ctx != curCtx {
			p.ctx, p.hasCtx = ctx, true
		}
		l.placed = append(l.placed, p)
	}

	b.tools(c.Tools, false)
	b.system("instructions", c.System, false)
	blocks := make([][]llm.Block, len(l.placed))
	for j, p := range l.placed {
		for _, t := range []struct {
			tag, text string
			has       bool
		}{{"developer", p.developer, p.hasDev}, {"user context", p.ctx, p.hasCtx}} {
			if !t.has || t.text == "" {
				continue
			}
			blocks[j] = append(blocks[j], llm.TextBlock(t.text))
			b.bd.Spans = append(b.bd.Spans, prompt.Span{Name: t.tag + " (before message " + fmt.Sprint(p.msg) + ")",
				Role: "user", First: p.msg, Last: p.msg, Tokens: c.Tokens(t.text), Preview: prompt.Preview(t.text, 60),
				Note: "appended, never rewritten"})
		}
	}
	for j := len(l.placed) - 1; j >= 0; j-- { // later versions first: each message keeps them in order
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

// latest returns the newest placed version of each context text.
func (l *codex) latest() (developer, ctx string) {
	for _, p := range l.placed {
		if p.hasDev {
			developer = p.developer
		}
		if p.hasCtx {
			ctx = p.ctx
		}
	}
	return developer, ctx
}

// forgetBeyond drops placements on messages the history no longer has (a new
// or compacted conversation), so their texts are placed again.
func (l *codex) forgetBeyond(last int) {
	kept := l.placed[:0]
	for _, p := range l.placed {
		if p.msg <= last {
			kept = append(kept, p)
		}
	}
	l.placed = kept
}
